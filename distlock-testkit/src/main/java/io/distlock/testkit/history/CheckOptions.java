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
 * @param idleBound L6: the longest a key may stay held by nobody while some client asks for it, outside the faults'
 *     windows; each fault's window is also extended by this much after its end (the backend's effective expiry plus
 *     slack: a grant the fault left behind may last that long)
 */
public record CheckOptions(
        Duration takeoverBound,
        Duration lossNoticeBound,
        Duration linearizabilityCap,
        Duration timelineMargin,
        Duration idleBound) {

    public CheckOptions {
        Objects.requireNonNull(takeoverBound, "takeoverBound");
        Objects.requireNonNull(lossNoticeBound, "lossNoticeBound");
        Objects.requireNonNull(linearizabilityCap, "linearizabilityCap");
        Objects.requireNonNull(timelineMargin, "timelineMargin");
        Objects.requireNonNull(idleBound, "idleBound");
    }

    /**
     * Takeover within 30 s, loss told within 5 s, 10 s of search per key, 2 s of timeline either side, a key idle
     * while asked for at most 30 s.
     */
    public static CheckOptions defaults() {
        return new CheckOptions(
                Duration.ofSeconds(30),
                Duration.ofSeconds(5),
                Duration.ofSeconds(10),
                Duration.ofSeconds(2),
                Duration.ofSeconds(30));
    }

    public CheckOptions withTakeoverBound(Duration bound) {
        return new CheckOptions(bound, lossNoticeBound, linearizabilityCap, timelineMargin, idleBound);
    }

    public CheckOptions withLossNoticeBound(Duration bound) {
        return new CheckOptions(takeoverBound, bound, linearizabilityCap, timelineMargin, idleBound);
    }

    public CheckOptions withLinearizabilityCap(Duration cap) {
        return new CheckOptions(takeoverBound, lossNoticeBound, cap, timelineMargin, idleBound);
    }

    public CheckOptions withIdleBound(Duration bound) {
        return new CheckOptions(takeoverBound, lossNoticeBound, linearizabilityCap, timelineMargin, bound);
    }
}
