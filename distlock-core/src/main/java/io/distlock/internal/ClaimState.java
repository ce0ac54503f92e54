package io.distlock.internal;

import io.distlock.spi.LockKey;
import io.distlock.spi.Mode;
import io.distlock.spi.OwnerId;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What one client knows about one name of a {@link ClaimEngine}: its live local holds and its local waiters, beside
 * what every name's state keeps ({@link NameState}). Guarded by the mutex.
 */
final class ClaimState extends NameState<ClaimHold> {
    private final List<ClaimHold> holders = new ArrayList<>(2);
    private final List<ClaimWaiter> waiters = new ArrayList<>(2);

    ClaimState(LockKey key) {
        super(key);
    }

    @Override
    @Nullable
    ClaimHold threadHold(OwnerId owner, Mode mode) {
        for (ClaimHold h : holders) {
            if (h.threadView && h.mode() == mode && h.owner().equals(owner)) {
                return h;
            }
        }
        return null;
    }

    /** A waiter was granted: it stops waiting and holds. */
    void granted(@Nullable ClaimWaiter w, ClaimHold h) {
        if (w != null) {
            waiters.remove(w);
        }
        holders.add(h);
    }

    void join(ClaimWaiter w) {
        waiters.add(w);
    }

    void leave(ClaimWaiter w) {
        waiters.remove(w);
    }

    /** Waiters of this client try again, since the hold may have been in their way. */
    @Override
    void ended(ClaimHold h) {
        if (holders.remove(h)) {
            wakeWaiters();
        }
    }

    @Override
    void lost(ClaimHold h) {
        ended(h);
        if (h.threadView) {
            keepLost(h);
        }
    }

    @Override
    void closing(List<? super ClaimHold> held) {
        wakeWaiters();
        held.addAll(holders);
    }

    void wakeWaiters() {
        for (ClaimWaiter w : waiters) {
            w.wake();
        }
    }

    List<ClaimHold> holders() {
        return holders;
    }

    @Override
    boolean holdsOrWaits() {
        return !holders.isEmpty() || !waiters.isEmpty();
    }
}
