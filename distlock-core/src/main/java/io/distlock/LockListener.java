package io.distlock;

/**
 * Told about the holds of one {@link DistributedLock}. Methods run on the thread that caused the event (the
 * acquiring or releasing thread, or the client's watchdog thread for {@link #lost}); they must be quick and must not
 * block. An exception thrown by a listener is logged and ignored.
 */
public interface LockListener {

    /** A fresh hold was acquired (re-entries are not reported). */
    default void acquired(String name, long fencingToken) {}

    /** A hold was released by its owner. */
    default void released(String name, long fencingToken) {}

    /**
     * A hold was found gone before its owner released it: its lease ran out, the watchdog found it taken or removed,
     * or the store could not be reached for longer than the lease. Work guarded by it may overlap another owner's.
     *
     * @param cause the store failure that led to the loss, or null if the store answered that the hold is gone
     */
    default void lost(String name, long fencingToken, @org.jspecify.annotations.Nullable Throwable cause) {}
}
