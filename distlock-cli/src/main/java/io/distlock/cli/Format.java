package io.distlock.cli;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Text formatting shared by the commands: durations, rates and aligned tables. */
final class Format {
    private Format() {}

    /** A latency for people: {@code 420 us}, {@code 3.2 ms}, {@code 125 ms}, {@code 2.5 s}. */
    static String nanos(long nanos) {
        if (nanos < 1_000_000) {
            return String.format(Locale.ROOT, "%d us", Math.max(1, Math.round(nanos / 1_000.0)));
        }
        double ms = nanos / 1_000_000.0;
        if (ms < 10) {
            return String.format(Locale.ROOT, "%.2f ms", ms);
        }
        if (ms < 1000) {
            return String.format(Locale.ROOT, "%.1f ms", ms);
        }
        return String.format(Locale.ROOT, "%.2f s", ms / 1000);
    }

    /** A lease: {@code 27.3 s}, {@code 850 ms}. */
    static String lease(Duration d) {
        long ms = d.toMillis();
        if (ms < 1000) {
            return ms + " ms";
        }
        return String.format(Locale.ROOT, "%.1f s", ms / 1000.0);
    }

    static String rate(double perSecond) {
        return perSecond >= 100
                ? String.format(Locale.ROOT, "%,.0f", perSecond)
                : String.format(Locale.ROOT, "%.1f", perSecond);
    }

    static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }

    /** Milliseconds with three decimals, for JSON. */
    static double millis(long nanos) {
        return nanos / 1_000_000.0;
    }

    /** A table with a header row; the first {@code leftAligned} columns left-aligned (text), the others right-aligned. */
    static final class Table {
        private final List<String[]> rows = new ArrayList<>();
        private final int columns;
        private final int leftAligned;

        Table(int leftAligned, String... header) {
            this.columns = header.length;
            this.leftAligned = leftAligned;
            rows.add(header);
        }

        Table row(String... cells) {
            if (cells.length != columns) {
                throw new IllegalArgumentException("row has " + cells.length + " cells, table has " + columns);
            }
            rows.add(cells);
            return this;
        }

        @Override
        public String toString() {
            int[] width = new int[columns];
            for (String[] r : rows) {
                for (int i = 0; i < columns; i++) {
                    width[i] = Math.max(width[i], r[i].length());
                }
            }
            StringBuilder sb = new StringBuilder();
            for (String[] r : rows) {
                StringBuilder line = new StringBuilder();
                for (int i = 0; i < columns; i++) {
                    if (i > 0) {
                        line.append("  ");
                    }
                    String pad = " ".repeat(width[i] - r[i].length());
                    line.append(i < leftAligned ? r[i] + pad : pad + r[i]);
                }
                sb.append(line.toString().stripTrailing()).append('\n');
            }
            return sb.toString();
        }
    }
}
