package io.distlock.internal;

import io.distlock.spi.LockKey;
import io.distlock.spi.Mode;
import io.distlock.spi.OwnerId;
import java.util.ArrayDeque;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What one client knows about one lock name: its local holder and its local waiters, beside what every name's state
 * keeps ({@link NameState}). Guarded by the mutex.
 */
final class LockState extends NameState<HoldImpl> {
    /** The hold of an owner of this client, if one is known to hold the lock. */
    @Nullable
    HoldImpl holder;

    /**
     * Local waiters in arrival order; a waiter being handed the lock is removed first. Most states never see one (an
     * uncontended lock+unlock makes and drops its state), so the deque starts small and grows when needed.
     */
    final ArrayDeque<Waiter> waiters = new ArrayDeque<>(2);

    /**
     * Wake-ups so far: the store's, and the ends of local holds, which the store may not tell this client of (Redis's
     * release wakes no waiter of the releasing client). A waiter that joins after a busy attempt checks whether one
     * came while that attempt was on its way.
     */
    int wakeUps; // wraps from Integer.MAX_VALUE to 0: never one of LockWaiters.join's negative markers

    /** Store attempts of this client's owners on their way (decided, answer not yet seen). */
    int attemptsInFlight;

    int handOffStreak;

    LockState(LockKey key) {
        super(key);
    }

    /** The holder, if it is {@code owner}'s: a lock's holds are all exclusive. */
    @Override
    @Nullable
    HoldImpl threadHold(OwnerId owner, Mode mode) {
        HoldImpl h = holder;
        return h != null && h.owner.equals(owner) ? h : null;
    }

    @Override
    boolean holdsOrWaits() {
        return holder != null || !waiters.isEmpty();
    }

    @Override
    void ended(HoldImpl h) {
        if (holder == h) {
            holder = null;
            // a wake-up too: an attempt of this client on its way (told busy by the hold that just ended) tries again
            // at once, since a store need not tell a client of its own releases
            wakeUps = (wakeUps + 1) & Integer.MAX_VALUE;
            signalWaiters();
        }
    }

    /**
     * A thread's lost hold is kept for its unlock unless the same owner already holds the lock again through a newer
     * hold.
     */
    @Override
    void lost(HoldImpl h) {
        HoldImpl current = holder;
        ended(h);
        if (h.threadView && (current == h || current == null || !current.owner.equals(h.owner))) {
            keepLost(h);
        }
    }

    @Override
    void holds(List<? super HoldImpl> out) {
        HoldImpl h = holder;
        if (h != null) {
            out.add(h);
        }
    }

    @Override
    void closing(List<? super HoldImpl> held) {
        for (Waiter w : waiters) {
            w.signal();
        }
        HoldImpl h = holder;
        if (h != null) {
            held.add(h);
        }
    }

    /** The first waiter that competes through the client (non-queued); only it talks to the store. */
    @Nullable
    Waiter firstLocal() {
        if (waiters.isEmpty()) {
            return null; // without making an iterator: the uncontended path asks this on every acquire
        }
        for (Waiter w : waiters) {
            if (!w.queued) {
                return w;
            }
        }
        return null;
    }

    /**
     * Wakes whoever should retry now: the first non-queued waiter and every waiter with a place in the store's queue.
     * Caller holds mutex.
     */
    void signalWaiters() {
        if (waiters.isEmpty()) {
            return;
        }
        boolean localSignalled = false;
        for (Waiter w : waiters) {
            if (w.queued || w.inStoreQueue) {
                w.signal();
                localSignalled |= !w.queued;
            } else if (!localSignalled) {
                w.signal();
                localSignalled = true;
            }
        }
    }
}
