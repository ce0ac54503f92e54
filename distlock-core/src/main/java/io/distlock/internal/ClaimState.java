package io.distlock.internal;

import io.distlock.spi.LockKey;
import io.distlock.spi.Mode;
import io.distlock.spi.OwnerId;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * What one client knows about one name of a {@link ClaimEngine}: its live local holds and its local waiters, beside
 * what every name's state keeps ({@link NameState}). Guarded by the mutex.
 */
final class ClaimState extends NameState<ClaimHold> {
    private final List<ClaimHold> holders = new ArrayList<>(2);
    /** The waiting acquires, in the order they started waiting, with the owner each asks for. */
    private final Map<ClaimWaiter, OwnerId> waiters = new LinkedHashMap<>(4);

    /**
     * The name's waiters are subscribed to wake-ups that name the owners that can pass ({@link
     * io.distlock.spi.WakesOwners}, on a subscription that notifies); set once such a subscription is made.
     */
    volatile boolean ownerWakeUps;

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

    /**
     * The local waiter a release may hand its permits to, marked claimed; null when there is none. In the order they
     * joined, the first found of: one in the store's queue (it has had a busy answer) with no attempt on its way; one
     * whose first attempt is on its way or not sent (it queues behind every waiter in the store's queue); one in the
     * store's queue trying again (woken because it can pass, its own attempt is likely granted). The store answers a
     * waiter's attempt and a hand-off to it with the same grant (see {@link io.distlock.spi.HandsOffClaims}), and the
     * second answer finds it installed ({@link ClaimWaiter.Flagged#taken}).
     */
    ClaimWaiter.@Nullable Flagged claimNext() {
        ClaimWaiter.Flagged arriving = null;
        ClaimWaiter.Flagged retrying = null;
        for (ClaimWaiter w : waiters.keySet()) {
            if (w instanceof ClaimWaiter.Flagged f && f.attempt != null && !f.claimed && !f.settling) {
                if (!f.queued) {
                    arriving = arriving == null ? f : arriving;
                } else if (f.attempting) {
                    retrying = retrying == null ? f : retrying;
                } else {
                    return claim(f);
                }
            }
        }
        if (arriving != null) {
            return claim(arriving);
        }
        return retrying == null ? null : claim(retrying);
    }

    private static ClaimWaiter.Flagged claim(ClaimWaiter.Flagged f) {
        f.claimed = true;
        f.missed = false;
        return f;
    }

    void join(ClaimWaiter w, OwnerId owner) {
        waiters.put(w, owner);
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

    /**
     * On a store whose wake-ups name the owners that can pass, a release the store confirmed wakes nobody here: its
     * own wake-up names who passes, this client's waiters among them.
     */
    @Override
    void released(ClaimHold h) {
        if (ownerWakeUps) {
            holders.remove(h);
        } else {
            ended(h);
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
    void holds(List<? super ClaimHold> out) {
        out.addAll(holders);
    }

    @Override
    void closing(List<? super ClaimHold> held) {
        wakeWaiters();
        held.addAll(holders);
    }

    void wakeWaiters() {
        for (ClaimWaiter w : waiters.keySet()) {
            w.wake();
        }
    }

    /** Wakes the waiters whose owner {@code passes}. */
    void wakeWaiters(Predicate<OwnerId> passes) {
        for (Map.Entry<ClaimWaiter, OwnerId> e : waiters.entrySet()) {
            if (passes.test(e.getValue())) {
                e.getKey().wake();
            }
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
