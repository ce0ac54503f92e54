package io.distlock.spi;

import java.time.Duration;

/**
 * The atomic steps a store performs for count-down latches. A latch's data (its count and the ids of the count-downs
 * it has seen) expires {@code expiry} after its last change, so an abandoned latch never stays in the store for ever;
 * a latch that expired reads as absent (count 0).
 */
public interface CounterStore extends AutoCloseable {

    /**
     * Sets the count if the latch is absent or at zero.
     *
     * @return whether it was set
     * @throws IllegalStateException if the name is in use as another kind
     */
    boolean trySetCount(LockKey key, long count, Duration expiry);

    /**
     * Counts down by one unless the latch is at zero or already counted the call {@code callId} (a retried call never
     * counts twice); reaching zero wakes every watcher ({@link #watchZero}).
     *
     * @return the count after the call
     */
    long countDown(LockKey key, String callId, Duration expiry);

    /** The current count; 0 when absent. */
    long count(LockKey key);

    /**
     * Registers {@code wakeUp} to run when the count of the name reaches zero; in force when this method returns, on
     * the store's I/O thread, must not block. Apart from {@link ClaimStore#subscribe}, so a store that keeps both
     * tells a latch's zero apart from a hold's release.
     */
    Subscription watchZero(LockKey key, Runnable wakeUp);

    /** Closes what this store opened. Idempotent. */
    @Override
    void close();
}
