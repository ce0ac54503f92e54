package io.distlock;

import java.util.Objects;

/**
 * The store could not be reached or answered in a way the client cannot use. Always carries the cause. An operation
 * that failed this way may still have taken effect in the store; see the method's documentation for what the client
 * does about it.
 */
public class DistributedLockException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public DistributedLockException(String message, Throwable cause) {
        super(message, Objects.requireNonNull(cause, "cause"));
    }
}
