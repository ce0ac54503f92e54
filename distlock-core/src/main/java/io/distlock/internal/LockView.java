package io.distlock.internal;

import static io.distlock.internal.AcquireCall.FOREVER;

import io.distlock.DistributedLock;
import io.distlock.LockHold;
import io.distlock.LockListener;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
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
    final LockEngine host;

    LockView(LockEngine host) {
        this.host = host;
    }

    /** Acquires as {@code call} asks; null when the wait ran out (or, for a wait of 0, the one attempt was busy). */
    abstract @Nullable EngineHold acquire(AcquireCall call) throws InterruptedException;

    /** Starts an asynchronous acquire as {@code call} asks, whose hold {@code deliver} makes the future's value. */
    abstract <T> CompletableFuture<T> acquireAsync(AcquireCall call, AsyncWait.Deliver<T> deliver);

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
            var unused = acquire(AcquireCall.ofThread(host.threadOwner(), lease, FOREVER, false));
        } catch (InterruptedException e) {
            throw new AssertionError("uninterruptible acquire was interrupted", e);
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        var unused = acquire(AcquireCall.ofThread(host.threadOwner(), null, FOREVER, true));
    }

    @Override
    public boolean tryLock() {
        try {
            return acquire(AcquireCall.ofThread(host.threadOwner(), null, 0, true)) != null;
        } catch (InterruptedException e) {
            // a try without waiting never parks; keep the flag if the store call saw one
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return acquire(AcquireCall.ofThread(host.threadOwner(), null, Checks.waitNanos(time, unit), true)) != null;
    }

    @Override
    public boolean tryLock(long waitTime, long leaseTime, TimeUnit unit) throws InterruptedException {
        Duration lease = Checks.lease(leaseTime, unit, "leaseTime");
        long wait = Checks.waitNanos(waitTime, unit);
        return acquire(AcquireCall.ofThread(host.threadOwner(), lease, wait, true)) != null;
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
        EngineHold h = acquire(AcquireCall.ofHandle(host.newHoldOwner(), null, FOREVER));
        return Objects.requireNonNull(h, "an unbounded wait returned no hold");
    }

    @Override
    public Optional<LockHold> tryAcquire(Duration wait) throws InterruptedException {
        long waitNanos = Checks.waitNanos(wait, "wait");
        return Optional.ofNullable(acquire(AcquireCall.ofHandle(host.newHoldOwner(), null, waitNanos)));
    }

    @Override
    public Optional<LockHold> tryAcquire(Duration wait, Duration lease) throws InterruptedException {
        long waitNanos = Checks.waitNanos(wait, "wait");
        Duration checked = Checks.lease(lease, "lease");
        return Optional.ofNullable(acquire(AcquireCall.ofHandle(host.newHoldOwner(), checked, waitNanos)));
    }

    @Override
    public CompletableFuture<LockHold> acquireAsync() {
        return acquireAsync(AcquireCall.ofAsync(host.newHoldOwner(), null, FOREVER), LockView::required);
    }

    @Override
    public CompletableFuture<Optional<LockHold>> tryAcquireAsync(Duration wait) {
        long waitNanos = Checks.waitNanos(wait, "wait");
        return acquireAsync(AcquireCall.ofAsync(host.newHoldOwner(), null, waitNanos), LockView::optional);
    }

    @Override
    public CompletableFuture<Optional<LockHold>> tryAcquireAsync(Duration wait, Duration lease) {
        long waitNanos = Checks.waitNanos(wait, "wait");
        Duration checked = Checks.lease(lease, "lease");
        return acquireAsync(AcquireCall.ofAsync(host.newHoldOwner(), checked, waitNanos), LockView::optional);
    }

    private static LockHold required(@Nullable EngineHold h) {
        return Objects.requireNonNull(h, "an unbounded wait returned no hold");
    }

    private static Optional<LockHold> optional(@Nullable EngineHold h) {
        return Optional.ofNullable(h);
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
