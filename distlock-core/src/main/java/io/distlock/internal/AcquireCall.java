package io.distlock.internal;

import io.distlock.spi.OwnerId;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * One acquire as a view asks it of its engine part: for whom (a thread's owner, whose holds count re-entries, or a
 * fresh handle's), with which lease (null: renewed by the watchdog), how long it may wait (0: one attempt), and
 * whether an interrupt ends the wait.
 */
record AcquireCall(
        OwnerId owner, boolean threadView, @Nullable Duration fixedLease, long waitNanos, boolean interruptible) {
    /** A wait with no end: long enough never to run out, short enough not to overflow a deadline. */
    static final long FOREVER = Long.MAX_VALUE / 4;

    /** An acquire of the calling thread, whose owner is {@code owner}. */
    static AcquireCall ofThread(OwnerId owner, @Nullable Duration fixedLease, long waitNanos, boolean interruptible) {
        return new AcquireCall(owner, true, fixedLease, waitNanos, interruptible);
    }

    /** An asynchronous acquire of a fresh handle: no thread of the caller's waits, so none is interrupted. */
    static AcquireCall ofAsync(OwnerId owner, @Nullable Duration fixedLease, long waitNanos) {
        return new AcquireCall(owner, false, fixedLease, waitNanos, false);
    }

    /** An acquire of a fresh handle (a LockHold or PermitHold), which an interrupt ends. */
    static AcquireCall ofHandle(OwnerId owner, @Nullable Duration fixedLease, long waitNanos) {
        return new AcquireCall(owner, false, fixedLease, waitNanos, true);
    }
}
