package io.distlock.internal;

import io.distlock.PermitHold;
import io.distlock.spi.Claim;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.Mode;
import io.distlock.spi.OwnerId;

/**
 * One hold a {@link ClaimEngine} got from its store: a read or write hold of a read-write lock, or permits of a
 * semaphore, kept in the store as its claim asked.
 */
final class ClaimHold extends EngineHold implements PermitHold {
    final ClaimEngine engine;
    final ClaimState state;
    final ClaimView view;
    final Claim claim;
    final HeldClaim held;

    ClaimHold(
            ClaimEngine engine,
            ClaimState state,
            ClaimView view,
            Claim claim,
            long fencingToken,
            boolean threadView,
            long sentAt) {
        super(
                engine.ticker(),
                threadView,
                sentAt,
                sentAt + claim.lease().length().toNanos());
        this.engine = engine;
        this.state = state;
        this.view = view;
        this.claim = claim;
        this.held = claim.held(fencingToken);
    }

    @Override
    AsyncSupport async() {
        return engine.host().async();
    }

    @Override
    OwnerId owner() {
        return claim.owner();
    }

    @Override
    Mode mode() {
        return claim.mode();
    }

    @Override
    public String name() {
        return state.key.name();
    }

    @Override
    public long fencingToken() {
        return held.fencingToken();
    }

    @Override
    public int permits() {
        return claim.permits();
    }

    @Override
    HeldClaim heldClaim() {
        return held;
    }

    @Override
    boolean leaseRenewed() {
        return claim.lease().renewed();
    }

    @Override
    Listeners listeners() {
        return view.listeners;
    }

    @Override
    void releaseHold() {
        engine.release(this);
    }

    @Override
    String describe() {
        return view.describe();
    }

    @Override
    public String toString() {
        return "PermitHold[" + view.describe() + ", permits=" + permits() + ", token=" + fencingToken() + ", "
                + statusName() + "]";
    }
}
