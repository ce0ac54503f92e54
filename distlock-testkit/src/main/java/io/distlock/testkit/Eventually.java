package io.distlock.testkit;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Polls a condition until it holds or a bound passes; for assertions about asynchronous effects in tests. */
public final class Eventually {
    private Eventually() {}

    /** Returns when {@code condition} holds; fails with {@code what} if it does not within {@code bound}. */
    public static void within(Duration bound, String what, BooleanSupplier condition) {
        long end = System.nanoTime() + bound.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("not within " + bound + ": " + what);
            }
            Timing.sleep(Duration.ofMillis(10));
        }
    }

    /**
     * Returns when {@code waiter} is parked with a deadline, as a thread waiting for a lock, permits or a latch is
     * between its attempts (by then it has asked the store at least once, and queued where the store queues); fails
     * if it does not park within {@code bound}.
     */
    public static void parked(Thread waiter, Duration bound) {
        within(
                bound,
                waiter.getName() + " parked waiting (state " + waiter.getState() + ")",
                () -> waiter.getState() == Thread.State.TIMED_WAITING);
    }
}
