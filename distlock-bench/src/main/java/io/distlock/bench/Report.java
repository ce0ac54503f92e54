package io.distlock.bench;

import io.distlock.bench.Harness.Result;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * Markdown output of a run: tables of phases, ratios against targets, the machine's load. With {@link #csvTo}, every
 * phase row and target line also goes to a CSV file, for scripts/plots.py.
 */
final class Report {
    static final String CSV_HEADER = "kind,title,section,label,threads,ops_per_s,p50_us,p99_us,hand_off_p50_us,"
            + "hand_off_p99_us,hand_offs,busiest_to_idlest,errors,measured,comparator,wanted,met";

    private static final Object[] NO_PHASE = {"", "", "", "", "", "", "", "", ""};
    private static final Object[] NO_TARGET = {"", "", "", ""};
    private static @Nullable PrintStream csv;

    private final PrintStream out;
    private String title = "";
    private String section = "";

    Report(PrintStream out) {
        this.out = out;
    }

    /** Every report of this run also writes its rows to {@code sink}, after a header line; null stops that. */
    static void csvTo(@Nullable PrintStream sink) {
        csv = sink;
        if (sink != null) {
            sink.println(CSV_HEADER);
        }
    }

    void title(String text) {
        title = text;
        section = "";
        out.println();
        out.println("## " + text);
        out.println();
    }

    void section(String text) {
        section = text;
        out.println();
        out.println("### " + text);
        out.println();
    }

    void line(String text) {
        out.println(text);
    }

    void environment(String what) {
        out.printf(
                Locale.ROOT,
                "- %s at %s, JVM %s, %d CPUs, load average %s%n",
                what,
                Instant.now(),
                System.getProperty("java.version"),
                Runtime.getRuntime().availableProcessors(),
                loadAverage());
        out.flush();
    }

    static String loadAverage() {
        try {
            String s = Files.readString(Path.of("/proc/loadavg")).trim();
            String[] parts = s.split(" ");
            return parts[0] + " " + parts[1] + " " + parts[2];
        } catch (IOException | RuntimeException e) {
            return String.format(
                    Locale.ROOT,
                    "%.2f",
                    ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        }
    }

    /** A table of phases: throughput, latency, hand-off and spread columns. */
    void table(List<Result> rows, boolean handOff) {
        if (handOff) {
            out.println("| implementation | threads | ops/s | p50 µs | p99 µs | hand-off p50 µs | hand-off p99 µs"
                    + " | hand-offs | busiest/idlest | errors |");
            out.println("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        } else {
            out.println("| implementation | threads | ops/s | p50 µs | p99 µs | busiest/idlest | errors |");
            out.println("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
        }
        for (Result r : rows) {
            csvRow("phase", r.label(), phaseFields(r), NO_TARGET);
            String errors = r.errors() + (r.stuck() > 0 ? " (" + r.stuck() + " stuck)" : "");
            if (handOff) {
                out.printf(
                        Locale.ROOT,
                        "| %s | %d | %s | %s | %s | %s | %s | %d | %s | %s |%n",
                        r.label(),
                        r.threads(),
                        num(r.opsPerSec()),
                        num(r.p50Micros()),
                        num(r.p99Micros()),
                        num(r.handOffP50Micros()),
                        num(r.handOffP99Micros()),
                        r.handOffs(),
                        ratio(r.busiestToIdlest()),
                        errors);
            } else {
                out.printf(
                        Locale.ROOT,
                        "| %s | %d | %s | %s | %s | %s | %s |%n",
                        r.label(),
                        r.threads(),
                        num(r.opsPerSec()),
                        num(r.p50Micros()),
                        num(r.p99Micros()),
                        ratio(r.busiestToIdlest()),
                        errors);
            }
        }
        for (Result r : rows) {
            if (r.firstError() != null) {
                out.println();
                out.println("- " + r.label() + ": first error: `" + r.firstError() + "`");
            }
        }
        out.println();
        out.flush();
    }

    /** One target line: the measured ratio, the target, and whether it is met. */
    void target(String what, double measured, String comparator, double target) {
        target(what, measured, comparator, target, true);
    }

    /** One target line; {@code times} formats both numbers as ratios, otherwise as plain numbers. */
    void target(String what, double measured, String comparator, double target, boolean times) {
        boolean met =
                switch (comparator) {
                    case "<=" -> measured <= target;
                    case ">=" -> measured >= target;
                    case "==" -> Math.abs(measured - target) < 1e-9;
                    default -> throw new IllegalArgumentException("comparator: " + comparator);
                };
        csvRow("target", what, NO_PHASE, new Object[] {measured, comparator, target, Double.isNaN(measured) ? "" : met
        });
        out.printf(
                Locale.ROOT,
                "| %s | %s | %s %s | %s |%n",
                what,
                times ? ratio(measured) : num(measured),
                comparator.replace("<=", "≤").replace(">=", "≥"),
                times ? ratio(target) : num(target),
                Double.isNaN(measured) ? "not measured" : met ? "met" : "**not met**");
        out.flush();
    }

    void targetHeader() {
        out.println("| target | measured | wanted | verdict |");
        out.println("| --- | ---: | ---: | --- |");
    }

    private static Object[] phaseFields(Result r) {
        return new Object[] {
            r.threads(),
            r.opsPerSec(),
            r.p50Micros(),
            r.p99Micros(),
            r.handOffP50Micros(),
            r.handOffP99Micros(),
            r.handOffs(),
            r.busiestToIdlest(),
            r.errors()
        };
    }

    private void csvRow(String kind, String label, Object[] phase, Object[] target) {
        PrintStream sink = csv;
        if (sink == null) {
            return;
        }
        String line = Stream.of(Stream.of(kind, title, section, label), Stream.of(phase), Stream.of(target))
                .flatMap(x -> x)
                .map(Report::csvField)
                .collect(Collectors.joining(","));
        sink.println(line);
        sink.flush();
    }

    static String csvField(Object value) {
        String s = value instanceof Double d
                ? (Double.isNaN(d) ? "" : String.format(Locale.ROOT, "%.6g", d))
                : String.valueOf(value);
        return s.contains(",") || s.contains("\"") || s.contains("\n") ? '"' + s.replace("\"", "\"\"") + '"' : s;
    }

    static String num(double v) {
        if (Double.isNaN(v)) {
            return "–";
        }
        if (v >= 100) {
            return String.format(Locale.ROOT, "%,.0f", v);
        }
        if (v >= 10) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        return String.format(Locale.ROOT, "%.2f", v);
    }

    static String ratio(double v) {
        if (Double.isNaN(v)) {
            return "–";
        }
        if (Double.isInfinite(v)) {
            return "∞";
        }
        return String.format(Locale.ROOT, "%.2f×", v);
    }
}
