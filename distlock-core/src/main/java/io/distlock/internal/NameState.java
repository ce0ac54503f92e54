package io.distlock.internal;

import io.distlock.spi.LockKey;
import io.distlock.spi.Mode;
import io.distlock.spi.OwnerId;
import io.distlock.spi.Subscription;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * What one client knows about one name: its live local holds and local waiters (kept by the subclass for its
 * primitive), the thread holds found lost that their thread has not unlocked yet, and the one store subscription the
 * waiters share. Guarded by {@link #mutex}, which is never held across a store round trip, so a store's I/O thread
 * that delivers a wake-up can always take it; {@link #subscribeLock} serializes subscribing and is taken before
 * {@link #mutex}, never while holding it. Each transition is a method, called with the mutex held unless it says
 * otherwise; {@link NameStates} makes and drops the states.
 */
abstract class NameState<H extends EngineHold> {
    /** A thread's hold of one mode, as kept for its next unlock after it was found lost. */
    private record ThreadHold(OwnerId owner, Mode mode) {}

    final LockKey key;
    final ReentrantLock mutex = new ReentrantLock();
    final ReentrantLock subscribeLock = new ReentrantLock();

    @Nullable
    Subscription subscription;

    /** Threads inside acquire or release for this name; the state is dropped only when none are. */
    int users;

    boolean removed;

    /** Made by the first lost thread hold: most names never have one. */
    private @Nullable Map<ThreadHold, H> lostThreadHolds;

    NameState(LockKey key) {
        this.key = key;
    }

    /** The live hold of {@code owner}'s thread in {@code mode}, if any. */
    abstract @Nullable H threadHold(OwnerId owner, Mode mode);

    /** Adds the live local holds to {@code out}. */
    abstract void holds(List<? super H> out);

    /** Whether a local hold or waiter exists. */
    abstract boolean holdsOrWaits();

    /** The hold ended by its release: waiters it was in the way of try again. */
    abstract void ended(H h);

    /** A hold the store confirmed it released has ended; by default as {@link #ended}. */
    void released(H h) {
        ended(h);
    }

    /** The hold was found lost: it ends as a release does, and a thread's hold is kept for its next unlock. */
    abstract void lost(H h);

    /** The client closes: every waiter is woken (to find the client closed), and the live holds go to {@code held}. */
    abstract void closing(List<? super H> held);

    /** Whether nobody uses the name: the state may be dropped. */
    final boolean idle() {
        return users == 0 && !holdsOrWaits() && (lostThreadHolds == null || lostThreadHolds.isEmpty());
    }

    /** Keeps a lost thread hold until its thread unlocks, so that unlock can say it was lost. */
    final void keepLost(H h) {
        Map<ThreadHold, H> lost = lostThreadHolds;
        if (lost == null) {
            lost = new HashMap<>();
            lostThreadHolds = lost;
        }
        lost.put(new ThreadHold(h.owner(), h.mode()), h);
    }

    /** Takes the lost thread hold of {@code owner} in {@code mode}, if one is kept. */
    final @Nullable H takeLost(OwnerId owner, Mode mode) {
        Map<ThreadHold, H> lost = lostThreadHolds;
        return lost == null ? null : lost.remove(new ThreadHold(owner, mode));
    }

    /**
     * The thread's unlock of its hold in {@code mode}: counts down a re-entry and returns null, or returns the hold to
     * release. Throws {@link io.distlock.LockLostException} when the thread's hold was lost and its owner not yet told,
     * and IllegalMonitorStateException when it holds nothing ({@code what} names the view for the message).
     */
    final @Nullable H unlockThread(OwnerId owner, Mode mode, Supplier<String> what) {
        H h = threadHold(owner, mode);
        if (h == null) {
            H lost = takeLost(owner, mode);
            // a release that found the hold lost while the watchdog was still telling it has reported it already
            if (lost != null && !lost.lossReported()) {
                throw lost.lostException();
            }
            throw new IllegalMonitorStateException("the current thread does not hold " + what.get());
        }
        if (h.count > 1) {
            h.count--;
            return null;
        }
        return h;
    }

    /**
     * Subscribes the name's waiters to the store's wake-ups once, with {@code subscribe}; returns whether the store
     * notifies at all. Takes {@link #subscribeLock}; the caller holds no lock.
     */
    final boolean subscribe(StoreCalls.StoreCall<Subscription> subscribe) {
        subscribeLock.lock();
        try {
            Subscription sub = subscription;
            if (sub == null) {
                sub = StoreCalls.call("subscribe", key, subscribe);
                subscription = sub;
            }
            return sub.notifies();
        } finally {
            subscribeLock.unlock();
        }
    }

    /**
     * Whether the name's waiters are subscribed already, to a store that notifies: a wake-up from then on reaches
     * every waiter that has joined. Takes {@link #subscribeLock}; the caller holds no lock.
     */
    final boolean subscribedToNotices() {
        subscribeLock.lock();
        try {
            Subscription sub = subscription;
            return sub != null && sub.notifies();
        } finally {
            subscribeLock.unlock();
        }
    }

    /** Takes the subscription away for the caller to close. Takes {@link #subscribeLock}; the caller holds no lock. */
    final @Nullable Subscription takeSubscription() {
        subscribeLock.lock();
        try {
            Subscription sub = subscription;
            subscription = null;
            return sub;
        } finally {
            subscribeLock.unlock();
        }
    }
}
