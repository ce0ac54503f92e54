package io.distlock.internal;

import io.distlock.spi.OwnerId;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * One waiter for a lock: a parked thread, or a callback (a waiter that completes a future schedules its next attempt
 * instead of unparking a thread). Fields other than {@link #signalled} are guarded by the state's mutex.
 */
final class Waiter {
    enum Status {
        WAITING,
        /** A release is handing the lock to this waiter; it must wait for the outcome. */
        CLAIMED,
        GRANTED
    }

    final EngineLock lock;
    final OwnerId owner;
    /** Runs on {@link #signal()}: unparks the waiting thread, or schedules a callback's next attempt; never blocks. */
    private final Runnable wake;

    final boolean threadView;
    final @Nullable Duration fixedLease;
    /** Competes in the store's queue (fair lock, or a store that queues every waiter). */
    final boolean queued;

    Status status = Status.WAITING;
    /**
     * A non-queued waiter of a store that queues every waiter has a place in the store's queue (it made a queued
     * attempt, or a hand-off queued it): it must come back when woken and abandon its place when it gives up.
     */
    boolean inStoreQueue;

    /** Its attempt is on its way to the store: it must not be claimed for a hand-off meanwhile. */
    boolean attempting;

    @Nullable
    HoldImpl grant;

    /** The grant came from the store with a wake-up (not from a release of this client): the waiter announces it. */
    boolean grantedByStore;

    volatile boolean signalled;

    Waiter(
            EngineLock lock,
            OwnerId owner,
            boolean threadView,
            @Nullable Duration fixedLease,
            boolean queued,
            Runnable wake) {
        this.lock = lock;
        this.owner = owner;
        this.wake = wake;
        this.threadView = threadView;
        this.fixedLease = fixedLease;
        this.queued = queued;
    }

    void signal() {
        signalled = true;
        wake.run();
    }

    /** The wake of a waiter that is {@code thread}, parked between attempts. */
    static Runnable unparker(Thread thread) {
        return () -> LockSupport.unpark(thread);
    }
}
