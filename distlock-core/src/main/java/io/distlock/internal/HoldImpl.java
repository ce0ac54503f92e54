package io.distlock.internal;

import io.distlock.LockHold;
import io.distlock.LockLostException;
import io.distlock.spi.Grant;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.OwnerId;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * One fresh acquisition: of a thread (the {@code Lock} view, counting re-entries) or of a {@link LockHold} handle.
 * The status moves once, from ACTIVE to RELEASED or LOST; whoever wins that race decides what the owner is told.
 */
final class HoldImpl implements LockHold, Watchdog.Renewable<HeldClaim> {
    static final int ACTIVE = 0;
    static final int RELEASED = 1;
    static final int LOST = 2;

    final LockEngine engine;
    final LockState state;
    final EngineLock lock;
    final OwnerId owner;
    final boolean threadView;
    final long fencingToken;
    /**
     * The owner and token the store keeps the hold under: this hold's own, or, for a hold that took over locally
     * (a succession), those of the acquisition it took over from.
     */
    final OwnerId storeOwner;

    final long storeToken;
    /** The last of the tokens the store reserved for successions of this acquisition; the next is fencingToken + 1. */
    final long lastSpare;
    /** Null when the watchdog renews the hold. */
    final @Nullable Duration fixedLease;

    final long acquiredAt;
    private volatile long validUntil;
    private final AtomicInteger status = new AtomicInteger(ACTIVE);
    /** Re-entries of a thread-view hold; guarded by the state's mutex. */
    int count = 1;

    volatile boolean lossAcknowledged;
    volatile @Nullable ScheduledFuture<?> expiry;

    /** A fresh acquisition from the store, with {@code spareTokens} reserved for local successions. */
    HoldImpl(
            LockEngine engine,
            LockState state,
            EngineLock lock,
            OwnerId owner,
            boolean threadView,
            long fencingToken,
            @Nullable Duration fixedLease,
            long attemptSentAt,
            long leaseNanos,
            int spareTokens) {
        this(
                engine,
                state,
                lock,
                owner,
                threadView,
                fencingToken,
                fixedLease,
                attemptSentAt,
                attemptSentAt + leaseNanos,
                owner,
                fencingToken,
                fencingToken + spareTokens);
    }

    /**
     * A local succession: {@code owner} (a waiting thread or handle of this client) takes over {@code from}'s hold
     * without a round trip, with {@code from}'s next spare token; the store keeps the hold under {@code from}'s store
     * owner, and the successor's lease is what {@code from} had confirmed.
     */
    HoldImpl(HoldImpl from, EngineLock lock, OwnerId owner, boolean threadView, long now) {
        this(
                from.engine,
                from.state,
                lock,
                owner,
                threadView,
                from.fencingToken + 1,
                null,
                now,
                from.validUntil,
                from.storeOwner,
                from.storeToken,
                from.lastSpare);
    }

    /**
     * A hold the store gave this client with a wake-up ({@link Grant}), taken by {@code owner} as it is: kept in the
     * store under the grant's id, valid for what the store vouches for; the engine renews it before then.
     */
    static HoldImpl ofStoreGrant(
            LockEngine engine,
            LockState state,
            EngineLock lock,
            OwnerId owner,
            boolean threadView,
            Grant grant,
            long now,
            long validUntil) {
        return new HoldImpl(
                engine,
                state,
                lock,
                owner,
                threadView,
                grant.fencingToken(),
                null,
                now,
                validUntil,
                grant.storeOwner(),
                grant.fencingToken(),
                grant.fencingToken() + grant.spareTokens());
    }

    private HoldImpl(
            LockEngine engine,
            LockState state,
            EngineLock lock,
            OwnerId owner,
            boolean threadView,
            long fencingToken,
            @Nullable Duration fixedLease,
            long acquiredAt,
            long validUntil,
            OwnerId storeOwner,
            long storeToken,
            long lastSpare) {
        this.engine = engine;
        this.state = state;
        this.lock = lock;
        this.owner = owner;
        this.threadView = threadView;
        this.fencingToken = fencingToken;
        this.fixedLease = fixedLease;
        this.acquiredAt = acquiredAt;
        this.validUntil = validUntil;
        this.storeOwner = storeOwner;
        this.storeToken = storeToken;
        this.lastSpare = lastSpare;
    }

    /** Whether a waiter of this client may take this hold over without a round trip. */
    boolean hasSpareToken() {
        return fencingToken < lastSpare && fixedLease == null;
    }

    @Override
    public String name() {
        return state.key.name();
    }

    @Override
    public long fencingToken() {
        return fencingToken;
    }

    @Override
    public boolean isValid() {
        return status.get() == ACTIVE && engine.ticker().read() - validUntil < 0;
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

    HeldClaim heldClaim() {
        return HeldClaim.lock(state.key, storeOwner, storeToken);
    }

    @Override
    public void release() {
        if (threadView) {
            throw new IllegalStateException("a thread's hold is released with unlock()");
        }
        engine.release(this);
    }

    @Override
    public void close() {
        if (isReleased() || (isLost() && lossAcknowledged)) {
            return;
        }
        release();
    }

    LockLostException lostException() {
        lossAcknowledged = true;
        return new LockLostException("lock '" + name() + "' (fencing token " + fencingToken + ") was lost before "
                + "its release: its lease ran out or the store no longer has the hold");
    }

    @Override
    public String toString() {
        String s =
                switch (status.get()) {
                    case ACTIVE -> "active";
                    case RELEASED -> "released";
                    default -> "lost";
                };
        return "LockHold[" + name() + ", token=" + fencingToken + ", owner=" + owner + ", " + s + "]";
    }
}
