package io.distlock;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * A count-down latch shared by every process that uses the same name on the same store.
 *
 * <ul>
 *   <li>{@link #trySetCount(long)} sets the count only when the latch is absent or at zero, so a latch can be reused
 *       once it has opened.
 *   <li>{@link #countDown()} at zero does nothing; a count-down retried by the client after a lost reply never counts
 *       twice (each call carries an id of its own).
 *   <li>Reaching zero wakes every waiter in every client by a notification from the store, not by polling.
 *   <li>A latch's data expires after a time without change (the client's latch expiry, one day by default), so an
 *       abandoned latch never stays in the store for ever.
 * </ul>
 *
 * <pre>{@code
 * DistributedCountDownLatch batch = client.countDownLatch("batch:42");
 * batch.trySetCount(3);
 * // ... three workers call batch.countDown() ...
 * if (!batch.await(Duration.ofSeconds(30))) { ... }
 * }</pre>
 */
public interface DistributedCountDownLatch {

    /** The name, as given to the client. */
    String name();

    /**
     * Sets the count if the latch is absent or at zero.
     *
     * @return true if the count was set; false if the latch was still counting down (nothing changed)
     * @throws IllegalArgumentException if {@code count} is not positive
     * @throws DistributedLockException if the store cannot be reached
     */
    boolean trySetCount(long count);

    /**
     * Counts down by one; at zero, does nothing. Reaching zero wakes every waiter.
     *
     * @throws DistributedLockException if the store cannot be reached (the call may or may not have counted; a retry
     *     with the same id is made once before this is thrown, and never counts twice)
     */
    void countDown();

    /**
     * The current count; 0 when the latch is absent.
     *
     * @throws DistributedLockException if the store cannot be reached
     */
    long getCount();

    /**
     * Waits until the count is zero.
     *
     * @throws InterruptedException if interrupted while waiting; nothing is left behind
     * @throws DistributedLockException if the store cannot be reached
     */
    void await() throws InterruptedException;

    /**
     * Waits until the count is zero or {@code timeout} has passed.
     *
     * @return true if the count reached zero, false on timeout (nothing is left behind)
     * @throws NullPointerException if {@code timeout} is null
     * @throws InterruptedException if interrupted while waiting; nothing is left behind
     * @throws DistributedLockException if the store cannot be reached
     */
    boolean await(Duration timeout) throws InterruptedException;

    /**
     * Waits for the count to reach zero without blocking the caller: the future completes with true when it does,
     * false when {@code timeout} runs out first. No thread waits meanwhile (the store's zero wake-up or a timer
     * schedules the next check), and the future completes on the client's executor. Cancelling it ends the wait and
     * closes its subscription.
     *
     * @throws NullPointerException if {@code timeout} is null
     */
    CompletableFuture<Boolean> awaitAsync(Duration timeout);
}
