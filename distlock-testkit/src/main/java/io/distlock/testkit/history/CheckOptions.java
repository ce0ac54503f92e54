package io.distlock.testkit.history;

import java.time.Duration;
import java.util.Objects;

/**
 * Bounds the checker judges liveness by, and its limits.
 *
 * @param takeoverBound L1: the longest a waiter may take to get the lock after the holder went down (the backend's
 *     effective expiry plus slack)
 * @param lossNoticeBound L5: the longest the library may take to report a hold the store removed (one renewal
 *     interval plus a round trip, plus slack)
 * @param linearizabilityCap the time the linearizability search may spend per key before answering "unknown"
 * @param timelineMargin how much time around a violation the timeline shows
 */
public record CheckOptions(
        Duration takeoverBound, Duration lossNoticeBound, Duration linearizabilityCap, Duration timelineMargin) {

    public CheckOptions {
        Objects.requireNonNull(takeoverBound, "takeoverBound");
        Objects.requireNonNull(lossNoticeBound, "lossNoticeBound");
        Objects.requireNonNull(linearizabilityCap, "linearizabilityCap");
        Objects.requireNonNull(timelineMargin, "timelineMargin");
    }

    /** Takeover within 30 s, loss told within 5 s, 10 s of search per key, 2 s of timeline either side. */
    public static CheckOptions defaults() {
        return new CheckOptions(
                Duration.ofSeconds(30), Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(2));
    }

    public CheckOptions withTakeoverBound(Duration bound) {
        return new CheckOptions(bound, lossNoticeBound, linearizabilityCap, timelineMargin);
    }

    public CheckOptions withLossNoticeBound(Duration bound) {
        return new CheckOptions(takeoverBound, bound, linearizabilityCap, timelineMargin);
    }

    public CheckOptions withLinearizabilityCap(Duration cap) {
        return new CheckOptions(takeoverBound, lossNoticeBound, cap, timelineMargin);
    }
}
