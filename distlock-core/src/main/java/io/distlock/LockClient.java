package io.distlock;

/**
 * A connection to one lock store, shared by every lock and thread of a process.
 *
 * <p>A client owns one watchdog (a single scheduler thread that renews every hold it has in batches), one
 * subscription per name that has waiters, and the connections to its store. It registers a JVM shutdown hook that
 * closes it, so a JVM ended by {@code SIGTERM} or {@link System#exit} releases what the client holds at once rather
 * than leaving it to expire with its lease (the hook waits at most 5 s for that; {@code SIGKILL} runs no hook: then the
 * lease or session ends the holds);
 * {@link #close()} removes the hook. Locks obtained from it are cheap views:
 * {@code client.lock("a")} twice gives two objects for the same lock, and a thread that holds one holds the other.
 *
 * <pre>{@code
 * try (LockClient client = RedisLockClient.create("redis://localhost:6379")) {
 *     DistributedLock lock = client.lock("order:123");
 *     lock.lock();
 *     try {
 *         // ... guarded work ...
 *     } finally {
 *         lock.unlock();
 *     }
 * }
 * }</pre>
 */
public interface LockClient extends AutoCloseable {

    /**
     * Returns the non-fair re-entrant lock with this name. Any string works as a name; distinct names never contend.
     *
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank or longer than 1,024 characters
     * @throws IllegalStateException if the client is closed
     */
    DistributedLock lock(String name);

    /**
     * Returns the fair lock with this name: waiters are granted the lock in the order they asked, across all clients,
     * and a waiter that died is evicted from the queue within a bounded time. A fair lock and a lock of the same name
     * are the same lock; only fair acquirers keep each other's order.
     *
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank or longer than 1,024 characters
     * @throws IllegalStateException if the client is closed
     */
    DistributedLock fairLock(String name);

    /**
     * Returns the read-write lock with this name: many readers or one writer, each hold with its own lease; see {@link
     * DistributedReadWriteLock}.
     *
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank or longer than 1,024 characters
     * @throws IllegalStateException if the client is closed
     */
    DistributedReadWriteLock readWriteLock(String name);

    /**
     * Returns the semaphore with this name and {@code permits} permits in all, across every client; every acquisition
     * is an owned, leased {@link PermitHold}. The size is stored with the semaphore by its first user: asking for the
     * same name with another size fails with {@link IllegalStateException} when the semaphore is used.
     *
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank or longer than 1,024 characters, or {@code permits}
     *     is not positive
     * @throws IllegalStateException if the client is closed
     */
    DistributedSemaphore semaphore(String name, int permits);

    /**
     * Returns the count-down latch with this name; see {@link DistributedCountDownLatch}.
     *
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank or longer than 1,024 characters
     * @throws IllegalStateException if the client is closed
     */
    DistributedCountDownLatch countDownLatch(String name);

    /**
     * The identity of this client in the store: unique per instance, part of every owner id it writes. It ends with a
     * 128-bit secret, so treat it as a credential: whoever knows it can release this client's holds through the
     * store. {@code toString()}, thread names and the library's log lines show it redacted ({@link
     * io.distlock.spi.OwnerId#redact}).
     */
    String clientId();

    /** Operator's view of the store: who holds what, and a forced release. */
    LockAdmin admin();

    /**
     * Stops renewals, releases what the client still holds (best effort; a hold that cannot be released expires with
     * its lease), then closes the store connections. Holds of this client turn invalid; acquires waiting in other
     * threads end with {@link IllegalStateException}, and so does every later use. Idempotent, also when the shutdown
     * hook and the owner close at once.
     */
    @Override
    void close();
}
