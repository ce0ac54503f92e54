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

/** The read or the write view of a {@link EngineReadWriteLock}: a {@link DistributedLock} over a {@link ClaimEngine}. */
final class ClaimLock implements DistributedLock {
    private static final long FOREVER = Long.MAX_VALUE / 4;

    private final ClaimEngine engine;
    private final LockEngine host;
    private final ClaimView view;

    ClaimLock(LockEngine host, ClaimEngine engine, ClaimView view) {
        this.host = host;
        this.engine = engine;
        this.view = view;
    }

    @Override
    public String name() {
        return view.name;
    }

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
            var unused = engine.acquire(view, 1, host.threadOwner(), true, lease, FOREVER, false);
        } catch (InterruptedException e) {
            throw new AssertionError("uninterruptible acquire was interrupted", e);
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        var unused = engine.acquire(view, 1, host.threadOwner(), true, null, FOREVER, true);
    }

    @Override
    public boolean tryLock() {
        try {
            return engine.acquire(view, 1, host.threadOwner(), true, null, 0, true) != null;
        } catch (InterruptedException e) {
            // a try without waiting never parks; keep the flag if the store call saw one
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return engine.acquire(view, 1, host.threadOwner(), true, null, Checks.waitNanos(time, unit), true) != null;
    }

    @Override
    public boolean tryLock(long waitTime, long leaseTime, TimeUnit unit) throws InterruptedException {
        Duration lease = Checks.lease(leaseTime, unit, "leaseTime");
        long wait = Checks.waitNanos(waitTime, unit);
        return engine.acquire(view, 1, host.threadOwner(), true, lease, wait, true) != null;
    }

    @Override
    public void unlock() {
        engine.unlockThread(view);
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException(
                "a distributed lock has no condition queue; use a separate DistributedLock or a store notification");
    }

    @Override
    public long fencingToken() {
        ClaimHold h = engine.threadHold(view);
        if (h == null) {
            throw new IllegalMonitorStateException("the current thread does not hold " + view.describe());
        }
        return h.fencingToken();
    }

    @Override
    public boolean isLocked() {
        return engine.isHeld(view);
    }

    @Override
    public boolean isHeldByCurrentThread() {
        return engine.threadHold(view) != null;
    }

    @Override
    public int getHoldCount() {
        return engine.threadHoldCount(view);
    }

    @Override
    public LockHold acquire() throws InterruptedException {
        ClaimHold h = engine.acquire(view, 1, host.newHoldOwner(), false, null, FOREVER, true);
        return Objects.requireNonNull(h, "an unbounded wait returned no hold");
    }

    @Override
    public Optional<LockHold> tryAcquire(Duration wait) throws InterruptedException {
        long waitNanos = Checks.waitNanos(wait, "wait");
        return Optional.ofNullable(engine.acquire(view, 1, host.newHoldOwner(), false, null, waitNanos, true));
    }

    @Override
    public Optional<LockHold> tryAcquire(Duration wait, Duration lease) throws InterruptedException {
        long waitNanos = Checks.waitNanos(wait, "wait");
        Duration checked = Checks.lease(lease, "lease");
        return Optional.ofNullable(engine.acquire(view, 1, host.newHoldOwner(), false, checked, waitNanos, true));
    }

    @Override
    public void addListener(LockListener listener) {
        view.listeners.add(listener);
    }

    @Override
    public void removeListener(LockListener listener) {
        view.listeners.remove(listener);
    }

    @Override
    public String toString() {
        return view.mode == io.distlock.spi.Mode.SHARED
                ? "ReadLock[" + view.name + "]"
                : "WriteLock[" + view.name + "]";
    }
}
