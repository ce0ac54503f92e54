package io.distlock;

/**
 * A hold ended before its owner released it: the lease expired, the watchdog found it gone, or the store's session
 * was lost. Thrown by the release that follows; the lock is no longer held by the caller.
 */
public class LockLostException extends IllegalMonitorStateException {
    private static final long serialVersionUID = 1L;

    public LockLostException(String message) {
        super(message);
    }
}
