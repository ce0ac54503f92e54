package io.distlock.cli;

import java.util.Arrays;
import java.util.Locale;

/**
 * A latency histogram with logarithmic buckets (2 % wide) from 1 ns to about 10 minutes: cheap to record into from one
 * thread, mergeable across threads and processes, and good for percentiles to within 2 %.
 *
 * <p>Not thread-safe: give each thread its own and {@link #add} them.
 */
final class Histogram {
    private static final double RATIO = 1.02;
    private static final double LOG_RATIO = Math.log(RATIO);
    private static final int BUCKETS = 1400;

    private final long[] counts = new long[BUCKETS];
    private long total;

    /** Records one value, in nanoseconds. */
    void record(long nanos) {
        counts[bucket(nanos)]++;
        total++;
    }

    /** Adds every value of {@code other} to this one. */
    void add(Histogram other) {
        for (int i = 0; i < BUCKETS; i++) {
            counts[i] += other.counts[i];
        }
        total += other.total;
    }

    long count() {
        return total;
    }

    /**
     * The value at quantile {@code q} (0 < q ≤ 1), in nanoseconds: the upper edge of the bucket holding it.
     *
     * @throws IllegalStateException if the histogram is empty
     */
    long quantileNanos(double q) {
        if (total == 0) {
            throw new IllegalStateException("no values recorded");
        }
        long rank = Math.max(1, (long) Math.ceil(q * total));
        long seen = 0;
        for (int i = 0; i < BUCKETS; i++) {
            seen += counts[i];
            if (seen >= rank) {
                return upperEdge(i);
            }
        }
        return upperEdge(BUCKETS - 1);
    }

    /** A compact text form, {@code index:count} pairs separated by commas, for the worker protocol. */
    String encode() {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < BUCKETS; i++) {
            if (counts[i] != 0) {
                if (sb.length() > 0) {
                    sb.append(',');
                }
                sb.append(i).append(':').append(counts[i]);
            }
        }
        return sb.length() == 0 ? "-" : sb.toString();
    }

    /**
     * Reads the form {@link #encode} writes.
     *
     * @throws IllegalArgumentException if {@code text} is not in that form
     */
    static Histogram decode(String text) {
        Histogram h = new Histogram();
        if (text.equals("-")) {
            return h;
        }
        for (String pair : text.split(",", -1)) {
            int colon = pair.indexOf(':');
            if (colon <= 0) {
                throw new IllegalArgumentException("not a histogram: '" + text + "'");
            }
            try {
                int index = Integer.parseInt(pair.substring(0, colon));
                long count = Long.parseLong(pair.substring(colon + 1));
                if (index < 0 || index >= BUCKETS || count < 0) {
                    throw new IllegalArgumentException("not a histogram: '" + text + "'");
                }
                h.counts[index] += count;
                h.total += count;
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not a histogram: '" + text + "'", e);
            }
        }
        return h;
    }

    private static int bucket(long nanos) {
        if (nanos <= 1) {
            return 0;
        }
        int b = (int) Math.ceil(Math.log(nanos) / LOG_RATIO);
        return Math.min(b, BUCKETS - 1);
    }

    private static long upperEdge(int bucket) {
        return (long) Math.floor(Math.pow(RATIO, bucket));
    }

    @Override
    public String toString() {
        return String.format(
                Locale.ROOT,
                "Histogram[count=%d, buckets=%s]",
                total,
                Arrays.stream(counts).filter(c -> c != 0).count());
    }
}
