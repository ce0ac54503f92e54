package io.distlock;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * A lock shared by every process that uses the same name on the same store.
 *
 * <p>Two ways to own it:
 *
 * <ul>
 *   <li>the {@link Lock} methods: the owner is the calling thread of this client, re-entrant as with {@link
 *       java.util.concurrent.locks.ReentrantLock} (each {@code lock()} needs one {@code unlock()}); re-entry costs no
 *       round trip to the store;
 *   <li>{@link #acquire()} and {@link #tryAcquire(Duration)}: the owner is the returned {@link LockHold}, which any
 *       thread may release.
 * </ul>
 *
 * <p><b>Leases.</b> Every hold has a lease. Without a lease argument the client's watchdog renews it (default 30 s,
 * renewed every third of it) for as long as the hold lasts and the client lives. With a lease argument there is no
 * renewal: the hold ends when the lease does, and the next release throws {@link LockLostException}. A thread that
 * ends while it holds a lock through the {@code Lock} methods (an uncaught exception) can never unlock it: the
 * watchdog releases such a hold within one renewal interval (a third of the lease), and logs a warning. When the
 * watchdog finds a hold gone, the hold is marked lost at once: {@link #isHeldByCurrentThread()} and {@link
 * LockHold#isValid()} turn false and listeners are told.
 *
 * <p><b>Fencing.</b> Each fresh acquisition has a {@link #fencingToken()} greater than every token issued before
 * for this name. A lease-based lock cannot stop a paused holder (GC, swap, network) from acting after its lease ran
 * out; a resource that refuses stale tokens can.
 *
 * <p><b>Waiting</b> sleeps until the store says the holder is gone; it does not poll where the store can notify. A
 * wait that ends by timeout or interrupt leaves nothing behind in the store.
 *
 * <p><b>Failures.</b> Methods that talk to the store throw {@link DistributedLockException} when it cannot be
 * reached; {@code tryLock} returns {@code false} only when another owner holds the lock. An acquire that failed this
 * way may have succeeded on the server; the client releases such a hold when it can, and otherwise it expires with
 * its lease.
 *
 * <pre>{@code
 * DistributedLock lock = client.lock("invoice:42");
 * if (lock.tryLock(5, TimeUnit.SECONDS)) {
 *     try {
 *         ledger.post(lock.fencingToken(), entry);
 *     } finally {
 *         lock.unlock();
 *     }
 * }
 * }</pre>
 */
public interface DistributedLock extends Lock {

    /** The lock's name, as given to the client. */
    String name();

    /**
     * Acquires the lock for the current thread, waiting as long as it takes, with a fixed lease and no renewal.
     *
     * @throws NullPointerException if {@code unit} is null
     * @throws IllegalArgumentException if {@code leaseTime} is not positive or overflows
     * @throws DistributedLockException if the store cannot be reached
     */
    void lock(long leaseTime, TimeUnit unit);

    /**
     * Acquires the lock if it becomes free within {@code waitTime}, with a fixed lease and no renewal. A wait time of
     * zero or less tries once.
     *
     * @return true if acquired, false if another owner held it for the whole wait
     * @throws InterruptedException if interrupted while waiting; nothing is left behind
     * @throws NullPointerException if {@code unit} is null
     * @throws IllegalArgumentException if {@code leaseTime} is not positive or overflows
     * @throws DistributedLockException if the store cannot be reached
     */
    boolean tryLock(long waitTime, long leaseTime, TimeUnit unit) throws InterruptedException;

    /**
     * Acquires the lock for the current thread, waiting as long as it takes; the watchdog renews the lease.
     *
     * @throws DistributedLockException if the store cannot be reached
     */
    @Override
    void lock();

    /**
     * Like {@link #lock()}, but answers interrupts.
     *
     * @throws InterruptedException if interrupted while waiting; nothing is left behind
     * @throws DistributedLockException if the store cannot be reached
     */
    @Override
    void lockInterruptibly() throws InterruptedException;

    /**
     * Acquires the lock if nobody holds it, in one attempt.
     *
     * @return true if acquired (or re-entered), false if another owner holds it
     * @throws DistributedLockException if the store cannot be reached
     */
    @Override
    boolean tryLock();

    /**
     * Acquires the lock if it becomes free within the wait time; the watchdog renews the lease.
     *
     * @throws InterruptedException if interrupted while waiting; nothing is left behind
     * @throws NullPointerException if {@code unit} is null
     * @throws DistributedLockException if the store cannot be reached
     */
    @Override
    boolean tryLock(long time, TimeUnit unit) throws InterruptedException;

    /**
     * Releases one hold count of the current thread; the last one releases the lock in the store.
     *
     * @throws IllegalMonitorStateException if the current thread does not hold the lock
     * @throws LockLostException if the thread's hold was lost (expired or found gone) before this release
     * @throws DistributedLockException if the store cannot be reached; the hold then expires with its lease
     */
    @Override
    void unlock();

    /**
     * Not supported: a distributed lock has no condition queue. Use a {@link DistributedLock} per condition, or a
     * store-level notification, instead.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    Condition newCondition();

    /**
     * The fencing token of the current thread's hold.
     *
     * @throws IllegalMonitorStateException if the current thread does not hold the lock
     */
    long fencingToken();

    /**
     * Whether any owner, in any process, holds the lock now. One round trip unless this client holds it.
     *
     * @throws DistributedLockException if the store cannot be reached
     */
    boolean isLocked();

    /** Whether the current thread holds the lock through this client, and the hold was not found lost. */
    boolean isHeldByCurrentThread();

    /** The number of holds of the current thread on this lock (re-entries), zero if none. */
    int getHoldCount();

    /**
     * Acquires the lock for a new {@link LockHold}, waiting as long as it takes; the watchdog renews the lease until
     * the hold is released.
     *
     * @throws InterruptedException if interrupted while waiting; nothing is left behind
     * @throws DistributedLockException if the store cannot be reached
     */
    LockHold acquire() throws InterruptedException;

    /**
     * Acquires the lock for a new {@link LockHold} if it becomes free within {@code wait}; the watchdog renews the
     * lease. A wait of zero or less tries once.
     *
     * @throws InterruptedException if interrupted while waiting; nothing is left behind
     * @throws NullPointerException if {@code wait} is null
     * @throws DistributedLockException if the store cannot be reached
     */
    Optional<LockHold> tryAcquire(Duration wait) throws InterruptedException;

    /**
     * Acquires the lock for a new {@link LockHold} if it becomes free within {@code wait}, with a fixed lease and no
     * renewal.
     *
     * @throws InterruptedException if interrupted while waiting; nothing is left behind
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code lease} is not positive or overflows
     * @throws DistributedLockException if the store cannot be reached
     */
    Optional<LockHold> tryAcquire(Duration wait, Duration lease) throws InterruptedException;

    /**
     * Acquires the lock for a new {@link LockHold} without blocking the caller: the future completes with the hold
     * once the lock is granted, however long that takes. No thread waits meanwhile: the waiter is woken by the store's
     * wake-up (or its retry timer), and the future completes on the client's executor, never on the store's I/O
     * thread. The watchdog renews the hold's lease until it is released.
     *
     * <p>Cancelling the future (or completing it in any other way from outside, as {@code orTimeout} does) ends the
     * wait and leaves nothing behind: no queue entry, and a hold granted while the cancel was on its way is released.
     * The future completes exceptionally with {@link DistributedLockException} (the store's failure as its cause) if
     * the store cannot be reached, with {@link java.util.concurrent.RejectedExecutionException} if the client already
     * has its maximum of waiters, and with {@link IllegalStateException} if the client is closed or closes meanwhile.
     */
    CompletableFuture<LockHold> acquireAsync();

    /**
     * As {@link #acquireAsync()}, waiting at most {@code wait}: the future completes with the hold, or empty when the
     * wait runs out (a zero or negative wait makes one attempt); a timeout leaves nothing behind.
     *
     * @throws NullPointerException if {@code wait} is null
     */
    CompletableFuture<Optional<LockHold>> tryAcquireAsync(Duration wait);

    /**
     * As {@link #tryAcquireAsync(Duration)}, for a hold with a fixed {@code lease} that the watchdog does not renew.
     *
     * @throws IllegalArgumentException if {@code lease} is not positive
     */
    CompletableFuture<Optional<LockHold>> tryAcquireAsync(Duration wait, Duration lease);

    /** Adds a listener for the holds taken through this lock object. */
    void addListener(LockListener listener);

    /** Removes a listener added before; does nothing if it was not added. */
    void removeListener(LockListener listener);
}
