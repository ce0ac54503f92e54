package io.distlock;

import java.util.concurrent.CompletableFuture;

/**
 * One acquisition of a lock, owned by this handle rather than by a thread.
 *
 * <p>Any thread may use and release a hold, so it suits asynchronous code, reactive pipelines and work handed
 * between threads. A hold is not re-entrant: every {@link DistributedLock#acquire()} makes a new owner, so a second
 * acquire of the same lock waits for the first hold to end, even on the same thread.
 *
 * <pre>{@code
 * try (LockHold hold = lock.acquire()) {
 *     resource.write(hold.fencingToken(), data);
 * }
 * }</pre>
 */
public interface LockHold extends AutoCloseable {

    /** The name of the lock this hold is on. */
    String name();

    /**
     * The fencing token of this acquisition: strictly greater than every token issued before for this name. Pass it
     * to the protected resource, which refuses operations with a smaller token than it has seen.
     */
    long fencingToken();

    /**
     * Whether the hold is still in force: not released, not expired, not found lost by the watchdog. A {@code true}
     * answer is only as good as the last renewal; fence the resource for safety against pauses.
     */
    boolean isValid();

    /**
     * Releases the hold. Callable from any thread, once.
     *
     * @throws LockLostException if the hold was lost before the release (expired, taken over, session lost)
     * @throws IllegalMonitorStateException if the hold was already released
     * @throws DistributedLockException if the store could not be reached; the hold then expires with its lease
     */
    void release();

    /**
     * Releases the hold without blocking the caller: the release runs on the client's executor and the future
     * completes there, exceptionally with what {@link #release()} would have thrown (a {@link LockLostException} when
     * the hold was lost first).
     */
    CompletableFuture<Void> releaseAsync();

    /**
     * Releases the hold if it is still in force; does nothing if it was already released. A hold that was lost throws
     * {@link LockLostException}, so a try-with-resources block learns that its work may have overlapped another
     * owner's.
     *
     * @throws LockLostException if the hold was lost before it was closed
     * @throws DistributedLockException if the store could not be reached; the hold then expires with its lease
     */
    @Override
    void close();
}
