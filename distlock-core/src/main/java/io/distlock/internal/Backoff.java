package io.distlock.internal;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Exponential back-off with full jitter ("decorrelated" enough for lock polling): each delay is drawn uniformly from
 * {@code [base/2, min(cap, base * 2^attempt)]}. Used only where the store cannot notify, and always bounded by the
 * holder's remaining lease and the caller's deadline.
 */
public final class Backoff {
    private final long baseNanos;
    private final long capNanos;
    private int attempt;

    public Backoff(long baseNanos, long capNanos) {
        if (baseNanos <= 0 || capNanos < baseNanos) {
            throw new IllegalArgumentException("need 0 < base <= cap: base=" + baseNanos + " cap=" + capNanos);
        }
        this.baseNanos = baseNanos;
        this.capNanos = capNanos;
    }

    /** The next delay in nanoseconds, within {@code [base/2, cap]}. */
    public long nextNanos() {
        long ceiling = attempt >= 62 ? capNanos : Math.min(capNanos, baseNanos << Math.min(attempt, 40));
        if (ceiling <= 0) {
            ceiling = capNanos;
        }
        attempt++;
        long floor = Math.max(1, baseNanos / 2);
        return floor >= ceiling ? ceiling : ThreadLocalRandom.current().nextLong(floor, ceiling + 1);
    }

    public void reset() {
        attempt = 0;
    }
}
