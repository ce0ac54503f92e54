package io.distlock.internal;

import io.distlock.DistributedLock;
import io.distlock.LockHold;
import io.distlock.LockListener;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import org.jspecify.annotations.Nullable;

/** The one {@link DistributedLock} implementation: a view of a name on a {@link LockEngine}. */
final class EngineLock implements DistributedLock {
    private final LockEngine engine;
    private final String name;
    final boolean fair;
    private final Listeners listeners;

    EngineLock(LockEngine engine, String name, boolean fair) {
        this.engine = engine;
        this.name = name;
        this.fair = fair;
        this.listeners = new Listeners(name);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public void lock() {
        engine.acquireUninterruptibly(this, null);
    }

    @Override
    public void lock(long leaseTime, TimeUnit unit) {
        engine.acquireUninterruptibly(this, Checks.lease(leaseTime, unit, "leaseTime"));
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        var unused = engine.acquire(this, engine.threadOwner(), true, null, Long.MAX_VALUE / 4);
    }

    @Override
    public boolean tryLock() {
        try {
            return engine.acquire(this, engine.threadOwner(), true, null, 0) != null;
        } catch (InterruptedException e) {
            // a try without waiting never parks, so this cannot happen; keep the flag if it does
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return engine.acquire(this, engine.threadOwner(), true, null, Checks.waitNanos(time, unit)) != null;
    }

    @Override
    public boolean tryLock(long waitTime, long leaseTime, TimeUnit unit) throws InterruptedException {
        Duration lease = Checks.lease(leaseTime, unit, "leaseTime");
        return engine.acquire(this, engine.threadOwner(), true, lease, Checks.waitNanos(waitTime, unit)) != null;
    }

    @Override
    public void unlock() {
        engine.unlockThread(this);
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException(
                "a distributed lock has no condition queue; use a separate DistributedLock or a store notification");
    }

    @Override
    public long fencingToken() {
        HoldImpl h = engine.threadHold(this);
        if (h == null) {
            throw new IllegalMonitorStateException("the current thread does not hold lock '" + name + "'");
        }
        return h.fencingToken;
    }

    @Override
    public boolean isLocked() {
        return engine.isLocked(this);
    }

    @Override
    public boolean isHeldByCurrentThread() {
        HoldImpl h = engine.threadHold(this);
        return h != null && h.isValid();
    }

    @Override
    public int getHoldCount() {
        return engine.threadHoldCount(this);
    }

    @Override
    public LockHold acquire() throws InterruptedException {
        HoldImpl h = engine.acquire(this, engine.newHoldOwner(), false, null, Long.MAX_VALUE / 4);
        return Objects.requireNonNull(h, "an unbounded wait returned no hold");
    }

    @Override
    public Optional<LockHold> tryAcquire(Duration wait) throws InterruptedException {
        long waitNanos = Checks.waitNanos(wait, "wait");
        return Optional.ofNullable(engine.acquire(this, engine.newHoldOwner(), false, null, waitNanos));
    }

    @Override
    public Optional<LockHold> tryAcquire(Duration wait, Duration lease) throws InterruptedException {
        long waitNanos = Checks.waitNanos(wait, "wait");
        Duration checked = Checks.lease(lease, "lease");
        return Optional.ofNullable(engine.acquire(this, engine.newHoldOwner(), false, checked, waitNanos));
    }

    @Override
    public void addListener(LockListener listener) {
        listeners.add(listener);
    }

    @Override
    public void removeListener(LockListener listener) {
        listeners.remove(listener);
    }

    Listeners listeners() {
        return listeners;
    }

    void fireAcquired(long token) {
        listeners.acquired(token);
    }

    void fireReleased(long token) {
        listeners.released(token);
    }

    void fireLost(long token, @Nullable Throwable cause) {
        listeners.lost(token, cause);
    }

    @Override
    public String toString() {
        return (fair ? "FairLock[" : "Lock[") + name + "]";
    }
}
