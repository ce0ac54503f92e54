package io.distlock;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A counting semaphore shared by every process that uses the same name on the same store, whose every acquisition is
 * an owned, leased {@link PermitHold}.
 *
 * <ul>
 *   <li><b>Owned and leased.</b> Permits are held, not taken from a bare counter: each hold has an owner and a lease
 *       (renewed by the client's watchdog, or fixed). Permits of a client that died come back within one lease, and a
 *       hold found gone is told to the listeners like a lost lock.
 *   <li><b>Size.</b> The number of permits in all is stored with the semaphore by its first user; a client that asks
 *       for the same name with another size gets an {@link IllegalStateException} naming both.
 *   <li><b>First come, first served.</b> Grants are in request order across clients, so {@code acquire(5)} is not
 *       starved by a stream of {@code acquire(1)}. A release wakes as many waiters as the freed permits can serve.
 *   <li><b>Fencing.</b> Every hold has a fencing token greater than every token issued before for the name.
 * </ul>
 *
 * <pre>{@code
 * DistributedSemaphore exports = client.semaphore("exports", 10);
 * Optional<PermitHold> p = exports.tryAcquire(2, Duration.ofSeconds(5));
 * }</pre>
 */
public interface DistributedSemaphore {

    /** The name, as given to the client. */
    String name();

    /** The number of permits in all. */
    int size();

    /**
     * Acquires one permit, waiting as long as it takes; the watchdog renews the lease.
     *
     * @throws InterruptedException if interrupted while waiting; nothing is left behind
     * @throws DistributedLockException if the store cannot be reached
     */
    PermitHold acquire() throws InterruptedException;

    /**
     * Acquires {@code permits} permits, waiting as long as it takes; the watchdog renews the lease.
     *
     * @throws IllegalArgumentException if {@code permits} is not between 1 and {@link #size()}
     * @throws InterruptedException if interrupted while waiting; nothing is left behind
     * @throws DistributedLockException if the store cannot be reached
     */
    PermitHold acquire(int permits) throws InterruptedException;

    /**
     * Acquires {@code permits} permits if they are free now (and nobody waits before this caller); the watchdog renews
     * the lease.
     *
     * @throws IllegalArgumentException if {@code permits} is not between 1 and {@link #size()}
     * @throws DistributedLockException if the store cannot be reached
     */
    Optional<PermitHold> tryAcquire(int permits);

    /**
     * Acquires {@code permits} permits if they become free within {@code wait}; the watchdog renews the lease. A wait
     * of zero or less tries once.
     *
     * @throws NullPointerException if {@code wait} is null
     * @throws IllegalArgumentException if {@code permits} is not between 1 and {@link #size()}
     * @throws InterruptedException if interrupted while waiting; nothing is left behind
     * @throws DistributedLockException if the store cannot be reached
     */
    Optional<PermitHold> tryAcquire(int permits, Duration wait) throws InterruptedException;

    /**
     * As {@link #tryAcquire(int, Duration)}, with a fixed lease and no renewal: the permits come back when it ends.
     *
     * @throws NullPointerException if {@code wait} or {@code lease} is null
     * @throws IllegalArgumentException if {@code permits} is not between 1 and {@link #size()}, or {@code lease} is not
     *     positive
     */
    Optional<PermitHold> tryAcquire(int permits, Duration wait, Duration lease) throws InterruptedException;

    /**
     * Acquires {@code permits} for a new {@link PermitHold} without blocking the caller, waiting as long as it takes;
     * no thread waits meanwhile, and the future completes on the client's executor. Cancelling it leaves nothing
     * behind (as {@link DistributedLock#acquireAsync()} describes).
     *
     * @throws IllegalArgumentException if {@code permits} is not between 1 and the size
     */
    CompletableFuture<PermitHold> acquireAsync(int permits);

    /**
     * As {@link #acquireAsync(int)}, waiting at most {@code wait}: empty when the wait runs out, leaving nothing.
     *
     * @throws IllegalArgumentException if {@code permits} is not between 1 and the size
     */
    CompletableFuture<Optional<PermitHold>> tryAcquireAsync(int permits, Duration wait);

    /**
     * As {@link #tryAcquireAsync(int, Duration)}, for a hold with a fixed {@code lease} that the watchdog does not
     * renew.
     *
     * @throws IllegalArgumentException if {@code permits} is not between 1 and the size, or {@code lease} is not
     *     positive
     */
    CompletableFuture<Optional<PermitHold>> tryAcquireAsync(int permits, Duration wait, Duration lease);

    /**
     * The permits no live hold has now, as the store counts them (one round trip). Only a snapshot: another client
     * may take them at once.
     *
     * @throws DistributedLockException if the store cannot be reached
     */
    int availablePermits();

    /** Tells {@code listener} of this client's holds of this semaphore: acquired, released, lost. */
    void addListener(LockListener listener);

    void removeListener(LockListener listener);
}
