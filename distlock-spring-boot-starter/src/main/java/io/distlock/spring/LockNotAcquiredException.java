package io.distlock.spring;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * The lock was not acquired within its wait time (another owner held it), or the wait was interrupted (the cause is
 * then the {@link InterruptedException}, and the thread's interrupt flag is set again).
 */
public class LockNotAcquiredException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String lockName;

    public LockNotAcquiredException(String lockName, @Nullable Duration waitTime, @Nullable Throwable cause) {
        super(
                (cause instanceof InterruptedException ? "interrupted while waiting for lock '" : "lock '")
                        + lockName
                        + (cause instanceof InterruptedException
                                ? "'"
                                : "' not acquired within " + (waitTime == null ? "the wait" : waitTime)),
                cause);
        this.lockName = lockName;
    }

    /** The name of the lock that was not acquired. */
    public String lockName() {
        return lockName;
    }
}
