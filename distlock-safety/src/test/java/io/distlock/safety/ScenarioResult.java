package io.distlock.safety;

import io.distlock.testkit.history.CheckReport;
import io.distlock.testkit.history.Property;
import io.distlock.testkit.history.PropertyResult;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The outcome of one scenario run, as one JSON file under {@code target/safety-results/} (named after the scenario
 * and backend, so a rerun replaces it): what {@code scripts/safety-report.py} turns into the table of {@code
 * docs/safety.md}.
 */
final class ScenarioResult {
    private ScenarioResult() {}

    /** What a property is expected to do in a scenario. */
    enum Expect {
        /** Must hold: a failure is a library defect. */
        MUST,
        /** May fail by design of the backend; recorded, not asserted. */
        DOC,
        /** Should hold: a failure is reported as a likely library defect to look into, not asserted. */
        SHOULD,
        /** Not judged here. */
        SKIP
    }

    static Path write(
            Path dir,
            Scenario s,
            CheckReport report,
            Map<Property, Expect> expect,
            boolean passed,
            @Nullable String failure,
            Map<String, Object> extra) {
        StringBuilder b = new StringBuilder("{\n");
        field(b, "scenario", s.id);
        field(b, "title", s.title);
        field(b, "tier", s.tier);
        field(b, "backend", s.store.name());
        field(b, "seed", s.seed);
        field(b, "passed", passed);
        field(b, "failure", failure == null ? "" : failure);
        field(b, "durationMs", s.elapsedMillis());
        field(b, "schedule", String.join("; ", s.schedule()));
        for (Map.Entry<String, Object> e : extra.entrySet()) {
            field(b, e.getKey(), e.getValue());
        }
        List<String> props = new ArrayList<>();
        for (Property p : Property.values()) {
            PropertyResult r = report.result(p);
            props.add("    \"" + p + "\": {\"expect\": \"" + expect.getOrDefault(p, Expect.SKIP) + "\", \"status\": \""
                    + r.status() + "\", \"measure\": " + (r.measure() == null ? "null" : r.measure())
                    + ", \"summary\": " + quote(r.summary()) + "}");
        }
        b.append("  \"properties\": {\n").append(String.join(",\n", props)).append("\n  }\n}\n");
        Path file = dir.resolve(s.id + "--" + s.store.name() + ".json");
        try {
            Files.createDirectories(dir);
            Files.writeString(file, b.toString(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return file;
    }

    /** The result of a run that ended before its check: failed, every property not run. */
    static void writeUnfinished(Path dir, Scenario s, Map<String, Object> extra) {
        StringBuilder b = new StringBuilder("{\n");
        field(b, "scenario", s.id);
        field(b, "title", s.title);
        field(b, "tier", s.tier);
        field(b, "backend", s.store.name());
        field(b, "seed", s.seed);
        field(b, "passed", false);
        field(b, "failure", "ended before its check (see the test's failure and the histories)");
        field(b, "durationMs", s.elapsedMillis());
        field(b, "schedule", String.join("; ", s.schedule()));
        for (Map.Entry<String, Object> e : extra.entrySet()) {
            field(b, e.getKey(), e.getValue());
        }
        List<String> props = new ArrayList<>();
        for (Property p : Property.values()) {
            props.add("    \"" + p + "\": {\"expect\": \"SKIP\", \"status\": \"NOT_RUN\", \"measure\": null,"
                    + " \"summary\": \"\"}");
        }
        b.append("  \"properties\": {\n").append(String.join(",\n", props)).append("\n  }\n}\n");
        try {
            Files.createDirectories(dir);
            Files.writeString(
                    dir.resolve(s.id + "--" + s.store.name() + ".json"), b.toString(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void field(StringBuilder b, String name, Object value) {
        b.append("  \"").append(name).append("\": ");
        if (value instanceof Number || value instanceof Boolean) {
            b.append(value);
        } else {
            b.append(quote(String.valueOf(value)));
        }
        b.append(",\n");
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
