package io.distlock.internal;

import io.distlock.DistributedLock;
import io.distlock.LockHold;
import io.distlock.LockListener;
import io.distlock.spi.OwnerId;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import org.jspecify.annotations.Nullable;

/**
 * What the {@link DistributedLock} views share, whatever engine part they run on: the JDK-shaped methods mapped onto
 * one acquire (for the calling thread, counting re-entries, or for a fresh handle owner), argument checks, the
 * fencing token of the thread's hold, and listeners. A plain lock ({@link EngineLock}) and a read or write view
 * ({@link ClaimLock}) add how they acquire, release and answer what is held.
 */
abstract class LockView implements DistributedLock {
    /** A wait with no end: long enough never to run out, short enough not to overflow a deadline. */
    static final long FOREVER = Long.MAX_VALUE / 4;

    final LockEngine host;

    LockView(LockEngine host) {
        this.host = host;
    }

    /**
     * Acquires for {@code owner}: a thread's hold when {@code threadView}, else a handle's. Returns null when the wait
     * ran out (or, for a wait of 0, when the one attempt was busy).
     */
    abstract @Nullable EngineHold acquire(
            OwnerId owner, boolean threadView, @Nullable Duration fixedLease, long waitNanos, boolean interruptible)
            throws InterruptedException;

    /** The calling thread's hold, if it has one its fencing token may be read from. */
    abstract @Nullable EngineHold threadHold();

    /** How messages name this view: "lock 'a'", "read lock 'a'". */
    abstract String describe();

    abstract Listeners listeners();

    @Override
    public void lock() {
        acquireUninterruptibly(null);
    }

    @Override
    public void lock(long leaseTime, TimeUnit unit) {
        acquireUninterruptibly(Checks.lease(leaseTime, unit, "leaseTime"));
    }

    private void acquireUninterruptibly(@Nullable Duration lease) {
        try {
            var unused = acquire(host.threadOwner(), true, lease, FOREVER, false);
        } catch (InterruptedException e) {
            throw new AssertionError("uninterruptible acquire was interrupted", e);
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        var unused = acquire(host.threadOwner(), true, null, FOREVER, true);
    }

    @Override
    public boolean tryLock() {
        try {
            return acquire(host.threadOwner(), true, null, 0, true) != null;
        } catch (InterruptedException e) {
            // a try without waiting never parks; keep the flag if the store call saw one
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return acquire(host.threadOwner(), true, null, Checks.waitNanos(time, unit), true) != null;
    }

    @Override
    public boolean tryLock(long waitTime, long leaseTime, TimeUnit unit) throws InterruptedException {
        Duration lease = Checks.lease(leaseTime, unit, "leaseTime");
        long wait = Checks.waitNanos(waitTime, unit);
        return acquire(host.threadOwner(), true, lease, wait, true) != null;
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException(
                "a distributed lock has no condition queue; use a separate DistributedLock or a store notification");
    }

    @Override
    public long fencingToken() {
        EngineHold h = threadHold();
        if (h == null) {
            throw new IllegalMonitorStateException("the current thread does not hold " + describe());
        }
        return h.fencingToken();
    }

    @Override
    public boolean isHeldByCurrentThread() {
        EngineHold h = threadHold();
        return h != null && h.isValid();
    }

    @Override
    public LockHold acquire() throws InterruptedException {
        EngineHold h = acquire(host.newHoldOwner(), false, null, FOREVER, true);
        return Objects.requireNonNull(h, "an unbounded wait returned no hold");
    }

    @Override
    public Optional<LockHold> tryAcquire(Duration wait) throws InterruptedException {
        long waitNanos = Checks.waitNanos(wait, "wait");
        return Optional.ofNullable(acquire(host.newHoldOwner(), false, null, waitNanos, true));
    }

    @Override
    public Optional<LockHold> tryAcquire(Duration wait, Duration lease) throws InterruptedException {
        long waitNanos = Checks.waitNanos(wait, "wait");
        Duration checked = Checks.lease(lease, "lease");
        return Optional.ofNullable(acquire(host.newHoldOwner(), false, checked, waitNanos, true));
    }

    @Override
    public void addListener(LockListener listener) {
        listeners().add(listener);
    }

    @Override
    public void removeListener(LockListener listener) {
        listeners().remove(listener);
    }
}
