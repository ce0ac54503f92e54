package io.distlock.internal;

import io.distlock.LockHold;
import io.distlock.LockLostException;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.Mode;
import io.distlock.spi.OwnerId;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * What every hold of the engine is, whatever it holds: a status that moves once, from active to released or lost
 * (whoever wins that race decides what the owner is told), a validity that the watchdog's renewals extend, and the
 * count of a thread's re-entries. The lock's holds ({@link HoldImpl}) and the claims' ({@link ClaimHold}) add what they
 * hold and how their engine ends them.
 */
abstract class EngineHold implements LockHold, Watchdog.Renewable<HeldClaim> {
    static final int ACTIVE = 0;
    static final int RELEASED = 1;
    static final int LOST = 2;

    private final Ticker ticker;
    /** A thread's hold (the {@code Lock} view, counting re-entries), not a handle's. */
    final boolean threadView;

    final long acquiredAt;
    private volatile long validUntil;
    private final AtomicInteger status = new AtomicInteger(ACTIVE);
    /** Re-entries of a thread's hold; guarded by the state's mutex. */
    int count = 1;

    private volatile boolean lossAcknowledged;
    /** The fixed lease's end, or a renewal ahead of the watchdog's tick. */
    volatile @Nullable ScheduledFuture<?> timer;

    EngineHold(Ticker ticker, boolean threadView, long acquiredAt, long validUntil) {
        this.ticker = ticker;
        this.threadView = threadView;
        this.acquiredAt = acquiredAt;
        this.validUntil = validUntil;
    }

    /** The owner this hold is of: a thread's or a handle's id. */
    abstract OwnerId owner();

    /** A lock's holds are exclusive; a claim's hold has its claim's mode. */
    abstract Mode mode();

    /** How messages name what this holds: "lock 'a'", "read lock 'a'", "semaphore 'a'". */
    abstract String describe();

    /** Whether the watchdog renews the hold; false for a hold with a fixed lease. */
    abstract boolean leaseRenewed();

    /** The listeners of the view the hold was taken through. */
    abstract Listeners listeners();

    /** The hold as its store keeps it. */
    abstract HeldClaim heldClaim();

    /** Where the client runs asynchronous work. */
    abstract AsyncSupport async();

    /** Ends the hold through its engine, as {@link #release} does for a handle. */
    abstract void releaseHold();

    @Override
    public boolean isValid() {
        return status.get() == ACTIVE && ticker.read() - validUntil < 0;
    }

    @Override
    public boolean isActive() {
        return status.get() == ACTIVE;
    }

    boolean isLost() {
        return status.get() == LOST;
    }

    boolean isReleased() {
        return status.get() == RELEASED;
    }

    /** Moves the status from active to {@code to}; false when it had moved already. */
    boolean finish(int to) {
        return status.compareAndSet(ACTIVE, to);
    }

    @Override
    public long validUntil() {
        return validUntil;
    }

    @Override
    public void renewed(long until) {
        validUntil = until;
    }

    @Override
    public HeldClaim storeKey() {
        return heldClaim();
    }

    @Override
    public void release() {
        if (threadView) {
            throw new IllegalStateException("a thread's hold is released with unlock()");
        }
        releaseHold();
    }

    @Override
    public CompletableFuture<Void> releaseAsync() {
        if (threadView) {
            throw new IllegalStateException("a thread's hold is released with unlock()");
        }
        return async().run(this::releaseHold);
    }

    @Override
    public void close() {
        if (isReleased() || (isLost() && lossAcknowledged)) {
            return;
        }
        release();
    }

    /** The exception that tells the owner its hold was lost; once told, closing the hold is quiet. */
    LockLostException lostException() {
        lossAcknowledged = true;
        return new LockLostException(describe() + " (fencing token " + fencingToken() + ") was lost before "
                + "its release: its lease ran out or the store no longer has the hold");
    }

    /** Whether the owner was told of the loss, by {@link #lostException}. */
    boolean lossReported() {
        return lossAcknowledged;
    }

    /** "active", "released" or "lost", for toString. */
    String statusName() {
        return switch (status.get()) {
            case ACTIVE -> "active";
            case RELEASED -> "released";
            default -> "lost";
        };
    }
}
