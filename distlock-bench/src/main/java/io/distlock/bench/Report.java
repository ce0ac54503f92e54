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

/** Markdown output of a run: tables of phases, ratios against targets, the machine's load. */
final class Report {
    private final PrintStream out;

    Report(PrintStream out) {
        this.out = out;
    }

    void title(String text) {
        out.println();
        out.println("## " + text);
        out.println();
    }

    void section(String text) {
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
