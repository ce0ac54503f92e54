package io.distlock.internal;

import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import io.distlock.spi.Subscription;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * What one client knows about one lock name: its local holder, its local waiters, and the store subscription they
 * share. Guarded by {@link #mutex}, which is never held across a store round trip. {@link #subscribeLock} serializes
 * subscribing and is always taken before {@link #mutex}, never while holding it.
 */
final class LockState {
    final LockKey key;
    final ReentrantLock mutex = new ReentrantLock();
    final ReentrantLock subscribeLock = new ReentrantLock();

    /** The hold of an owner of this client, if one is known to hold the lock. */
    @Nullable
    HoldImpl holder;

    /**
     * Local waiters in arrival order; a waiter being handed the lock is removed first. Most states never see one (an
     * uncontended lock+unlock makes and drops its state), so the deque starts small and grows when needed.
     */
    final ArrayDeque<Waiter> waiters = new ArrayDeque<>(2);

    /**
     * Thread-view holds found lost that their thread has not unlocked yet, so that unlock can say so; made by the first
     * such hold.
     */
    private @Nullable Map<OwnerId, HoldImpl> lostThreadHolds;

    @Nullable
    Subscription subscription;

    /** Threads inside acquire or release for this name; the state is dropped only when none are. */
    int users;

    /** Store wake-ups received so far (a waiter that joins after an attempt checks whether one came meanwhile). */
    int wakeUps; // wraps from Integer.MAX_VALUE to 0: never one of LockEngine.join's negative markers

    /** Store attempts of this client's owners on their way (decided, answer not yet seen). */
    int attemptsInFlight;

    int handOffStreak;
    boolean removed;

    LockState(LockKey key) {
        this.key = key;
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

    /** Keeps a lost thread-view hold until its thread unlocks. Caller holds mutex. */
    void addLost(OwnerId owner, HoldImpl hold) {
        Map<OwnerId, HoldImpl> lost = lostThreadHolds;
        if (lost == null) {
            lost = new HashMap<>();
            lostThreadHolds = lost;
        }
        lost.put(owner, hold);
    }

    /** Takes the owner's lost thread-view hold, if one is kept. Caller holds mutex. */
    @Nullable
    HoldImpl removeLost(OwnerId owner) {
        Map<OwnerId, HoldImpl> lost = lostThreadHolds;
        return lost == null ? null : lost.remove(owner);
    }

    boolean idle() {
        return users == 0
                && holder == null
                && waiters.isEmpty()
                && (lostThreadHolds == null || lostThreadHolds.isEmpty());
    }
}
