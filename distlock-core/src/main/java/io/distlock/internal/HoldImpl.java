package io.distlock.internal;

import io.distlock.LockHold;
import io.distlock.spi.Grant;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.Mode;
import io.distlock.spi.OwnerId;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * One hold of a lock: of a thread (the {@code Lock} view, counting re-entries) or of a {@link LockHold} handle; the
 * store may keep it under another owner and token than its own (a succession, a grant with the wake-up).
 */
final class HoldImpl extends EngineHold {
    final LockEngine engine;
    final LockState state;
    final EngineLock lock;
    final OwnerId owner;
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
                from.validUntil(),
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
        super(engine.ticker(), threadView, acquiredAt, validUntil);
        this.engine = engine;
        this.state = state;
        this.lock = lock;
        this.owner = owner;
        this.fencingToken = fencingToken;
        this.fixedLease = fixedLease;
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
    HeldClaim heldClaim() {
        return HeldClaim.lock(state.key, storeOwner, storeToken);
    }

    @Override
    AsyncSupport async() {
        return engine.async();
    }

    @Override
    OwnerId owner() {
        return owner;
    }

    @Override
    Mode mode() {
        return Mode.EXCLUSIVE;
    }

    @Override
    boolean leaseRenewed() {
        return fixedLease == null;
    }

    @Override
    Listeners listeners() {
        return lock.listeners();
    }

    @Override
    void releaseHold() {
        engine.release(this);
    }

    @Override
    String describe() {
        return "lock '" + name() + "'";
    }

    @Override
    public String toString() {
        return "LockHold[" + name() + ", token=" + fencingToken + ", owner=" + owner + ", " + statusName() + "]";
    }
}
