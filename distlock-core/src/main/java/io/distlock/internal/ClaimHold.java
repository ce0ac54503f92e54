package io.distlock.internal;

import io.distlock.LockLostException;
import io.distlock.PermitHold;
import io.distlock.spi.Claim;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.Mode;
import io.distlock.spi.OwnerId;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * One hold a {@link ClaimEngine} got from its store: a read or write hold of a read-write lock, or permits of a
 * semaphore. The status moves once, from active to released or lost; whoever wins that race decides what the owner is
 * told. A hold of a thread's view counts its re-entries ({@link #count}, guarded by its state's mutex).
 */
final class ClaimHold implements PermitHold, Watchdog.Renewable<HeldClaim> {
    private static final int ACTIVE = 0;
    static final int RELEASED = 1;
    static final int LOST = 2;

    final ClaimEngine engine;
    final ClaimState state;
    final ClaimView view;
    final Claim claim;
    final HeldClaim held;
    final boolean threadView;
    final long acquiredAt;
    private final AtomicInteger status = new AtomicInteger(ACTIVE);
    private volatile long validUntil;
    /** The fixed lease's end or an early renewal; guarded by nothing but its own volatile publication. */
    volatile @Nullable ScheduledFuture<?> timer;
    /** Re-entries of a thread's hold; guarded by the state's mutex. */
    int count = 1;

    private volatile boolean lossAcknowledged;

    ClaimHold(
            ClaimEngine engine,
            ClaimState state,
            ClaimView view,
            Claim claim,
            long fencingToken,
            boolean threadView,
            long sentAt) {
        this.engine = engine;
        this.state = state;
        this.view = view;
        this.claim = claim;
        this.held = claim.held(fencingToken);
        this.threadView = threadView;
        this.acquiredAt = sentAt;
        this.validUntil = sentAt + claim.lease().length().toNanos();
    }

    OwnerId owner() {
        return claim.owner();
    }

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
        return held;
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
        return new LockLostException(view.describe() + " (fencing token " + fencingToken() + ") was lost before "
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
        return "PermitHold[" + view.describe() + ", permits=" + permits() + ", token=" + fencingToken() + ", " + s
                + "]";
    }
}
