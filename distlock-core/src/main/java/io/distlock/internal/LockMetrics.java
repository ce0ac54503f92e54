package io.distlock.internal;

/**
 * Hooks for metrics, set with {@link EngineConfig#withMetrics}; no backend's builder takes one yet, and distlock binds
 * them to no metrics library. Called on the hot path: implementations must be quick and must not throw. The default
 * does nothing.
 */
public interface LockMetrics {

    LockMetrics NONE = new LockMetrics() {};

    /** A fresh hold was taken after waiting {@code waitNanos} (0 for an immediate grant). */
    default void acquired(String name, long waitNanos) {}

    /** An acquire gave up: timed out, interrupted, or found the lock held with no wait allowed. */
    default void notAcquired(String name, long waitNanos) {}

    /** A hold was released after {@code heldNanos}. */
    default void released(String name, long heldNanos) {}

    /** A hold was found lost. */
    default void lost(String name) {}

    /** A hold went straight to a waiting owner of the same client. */
    default void handedOff(String name) {}
}
