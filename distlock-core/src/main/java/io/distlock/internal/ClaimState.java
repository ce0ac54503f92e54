package io.distlock.internal;

import io.distlock.spi.LockKey;
import io.distlock.spi.Mode;
import io.distlock.spi.OwnerId;
import io.distlock.spi.Subscription;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * What one client knows about one name of a {@link ClaimEngine}: its live local holds, its local waiters, the thread
 * holds found lost that their thread has not unlocked yet, and the one store subscription the waiters share. Guarded
 * by {@link #mutex}, which is never held across a store round trip; {@link #subscribeLock} serializes subscribing and
 * is taken before {@link #mutex}, never while holding it. Each transition is a method here, called with the mutex
 * held.
 */
final class ClaimState {
    /** A thread's hold of one mode, as kept for its next unlock after it was found lost. */
    private record ThreadHold(OwnerId owner, Mode mode) {}

    final LockKey key;
    final ReentrantLock mutex = new ReentrantLock();
    final ReentrantLock subscribeLock = new ReentrantLock();
    private final List<ClaimHold> holders = new ArrayList<>(2);
    private final List<ClaimWaiter> waiters = new ArrayList<>(2);
    private @Nullable Map<ThreadHold, ClaimHold> lostThreadHolds;

    @Nullable
    Subscription subscription;
    /** Threads inside acquire or release for this name; the state is dropped only when none are. */
    int users;

    boolean removed;

    ClaimState(LockKey key) {
        this.key = key;
    }

    /** The live thread hold of {@code owner} in {@code mode}, if any. */
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

    /** The hold ended (released or lost): waiters of this client try again, since it may have been in their way. */
    void ended(ClaimHold h) {
        if (holders.remove(h)) {
            wakeWaiters();
        }
    }

    /** Keeps a lost thread hold until its thread unlocks, so that unlock can say it was lost. */
    void keepLost(ClaimHold h) {
        Map<ThreadHold, ClaimHold> lost = lostThreadHolds;
        if (lost == null) {
            lost = new HashMap<>();
            lostThreadHolds = lost;
        }
        lost.put(new ThreadHold(h.owner(), h.mode()), h);
    }

    @Nullable
    ClaimHold takeLost(OwnerId owner, Mode mode) {
        Map<ThreadHold, ClaimHold> lost = lostThreadHolds;
        return lost == null ? null : lost.remove(new ThreadHold(owner, mode));
    }

    void wakeWaiters() {
        for (ClaimWaiter w : waiters) {
            w.wake();
        }
    }

    List<ClaimHold> holders() {
        return holders;
    }

    boolean idle() {
        return users == 0
                && holders.isEmpty()
                && waiters.isEmpty()
                && (lostThreadHolds == null || lostThreadHolds.isEmpty());
    }
}
