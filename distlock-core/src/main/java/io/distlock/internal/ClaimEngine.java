package io.distlock.internal;

import io.distlock.spi.ClaimStore;
import io.distlock.spi.HandsOffClaims;
import io.distlock.spi.LockKey;
import io.distlock.spi.Mode;
import io.distlock.spi.OwnerId;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * Claims
 *   The engine of read-write locks and semaphores: every acquisition is a Claim (a name, its kind, a mode, a number of
 *   permits of the name's size, an owner and a Lease) that the ClaimStore grants or answers busy in one round trip.
 *   The store decides compatibility (exclusive against everything, shared up to the size) and order (grants as if in
 *   queue order, so a waiting writer holds back newer readers and acquire(5) is not starved by acquire(1)s); the
 *   engine does the rest.
 *
 * Owners and re-entry
 *   A thread's view (readLock().lock()) is owned by the thread's owner id ("<clientId>:t<threadId>"), one hold per
 *   mode: re-entry counts in the hold and costs no round trip. A thread holding the write lock may claim the read lock
 *   (a downgrade: the store grants a shared claim of an owner that holds the name exclusively); a thread holding only
 *   the read lock that asks for the write lock fails at once. A PermitHold or LockHold is owned by a fresh
 *   "<clientId>:h<n>" and released by any thread.
 *
 * Leases and loss
 *   A claim's hold has its own watchdog, apart from the locks', so a renewal batch holds one part's holds. A hold found
 *   lost is told to its view's listeners at once, and its thread's next unlock throws LockLostException; the store's
 *   lease of the hold ends it there by itself.
 *
 * Closing
 *   Closing stops each live hold's renewal (waiting for one in flight) before it releases the hold, so no renewal
 *   follows the release.
 *
 * The parts
 *   ClaimAcquirer: attempts, re-entry, waiting and wake-ups. ClaimHandOffs: a release that hands its permits to a
 *   local waiter in one round trip, on a store that HandsOffClaims. HoldKeeper: leases, release and loss. NameStates: the
 *   per-name states. This class: the facade the views call, and their questions (the thread's hold, availability).
 */
/** The shared implementation of read-write locks and semaphores over a {@link ClaimStore}. */
final class ClaimEngine {
    private final LockEngine host;
    private final ClaimStore store;
    private final Ticker ticker;
    private final HoldKeeper<ClaimHold, ClaimState> keeper;
    private final ClaimAcquirer acquirer;
    private final @Nullable ClaimHandOffs handOffs;
    private final NameStates<ClaimHold, ClaimState> states = new NameStates<>(ClaimState::new);
    private volatile boolean closed;

    ClaimEngine(LockEngine host, ClaimStore store, EngineConfig config, ScheduledExecutorService scheduler) {
        this.host = host;
        this.store = store;
        this.ticker = config.ticker();
        this.keeper = new HoldKeeper<>(states, h -> h.state, store, config, scheduler);
        this.acquirer = new ClaimAcquirer(this, states, keeper, store, config);
        this.handOffs =
                store instanceof HandsOffClaims h ? new ClaimHandOffs(this, states, keeper, h, acquirer, ticker) : null;
    }

    Ticker ticker() {
        return ticker;
    }

    /** One renewal round for every hold with a renewed lease; the client's renewal thread calls it every tick. */
    void tick() {
        keeper.watchdog.tick();
    }

    /** See {@link Watchdog#expireOverdue}; the client's timer thread calls it between ticks. */
    void expireOverdue() {
        keeper.expireOverdue();
    }

    // ---------------------------------------------------------------- acquire

    /** See {@link ClaimAcquirer#acquire}. */
    @Nullable
    ClaimHold acquire(ClaimView view, int permits, AcquireCall call) throws InterruptedException {
        if (call.waitNanos() <= 0) {
            return acquirer.acquire(view, permits, call);
        }
        WaiterLimit limit = host.waiterLimit();
        limit.enter(() -> "a wait for " + view.describe());
        try {
            return acquirer.acquire(view, permits, call);
        } finally {
            limit.exit();
        }
    }

    /** Starts an asynchronous acquire of {@code permits} of {@code view}; see {@link AsyncWait}. */
    <T> CompletableFuture<T> acquireAsync(ClaimView view, int permits, AcquireCall call, AsyncWait.Deliver<T> deliver) {
        if (closed || host.isClosed()) {
            return CompletableFuture.failedFuture(host.closedException());
        }
        return host.async()
                .start(
                        call.waitNanos(),
                        () -> "a wait for " + view.describe(),
                        onEnd -> acquirer.acquireAsync(view, permits, call, deliver, onEnd));
    }

    /** The per-name states, whose thread holds the client releases when their thread has ended. */
    NameStates<ClaimHold, ClaimState> states() {
        return states;
    }

    LockEngine host() {
        return host;
    }

    // ---------------------------------------------------------------- release

    /** Unlocks the calling thread's hold of {@code view}, counting down its re-entries first. */
    void unlockThread(ClaimView view) {
        states.unlockThread(view.name, host.threadOwner(), view.mode, view::describe, this::release);
    }

    void release(ClaimHold h) {
        ClaimHandOffs passes = handOffs;
        if (passes != null) {
            passes.release(h);
        } else {
            keeper.release(h);
        }
    }

    // ---------------------------------------------------------------- views

    /** The calling thread's live hold of {@code view}, if any. */
    @Nullable
    ClaimHold threadHold(ClaimView view) {
        ClaimState s = states.get(view.name);
        if (s == null) {
            return null;
        }
        OwnerId owner = host.threadOwner();
        s.mutex.lock();
        try {
            ClaimHold h = s.threadHold(owner, view.mode);
            return h != null && h.isValid() ? h : null;
        } finally {
            s.mutex.unlock();
        }
    }

    int threadHoldCount(ClaimView view) {
        ClaimState s = states.get(view.name);
        if (s == null) {
            return 0;
        }
        OwnerId owner = host.threadOwner();
        s.mutex.lock();
        try {
            ClaimHold h = s.threadHold(owner, view.mode);
            return h != null && h.isValid() ? h.count : 0;
        } finally {
            s.mutex.unlock();
        }
    }

    /** The permits of {@code view}'s name that no live hold has, as the store counts them. */
    int available(ClaimView view) {
        LockKey key = new LockKey(view.name);
        return StoreCalls.call("availablePermits", key, () -> store.available(key, view.kind, view.size));
    }

    /** Whether any owner holds the name in {@code mode} (for a write view: exclusively) as far as the store knows. */
    boolean isHeld(ClaimView view) {
        ClaimState s = states.get(view.name);
        if (s != null) {
            s.mutex.lock();
            try {
                for (ClaimHold h : s.holders()) {
                    if (h.mode() == view.mode && h.isValid()) {
                        return true;
                    }
                }
            } finally {
                s.mutex.unlock();
            }
        }
        // the store counts an exclusive hold as taking every permit; shared holds take theirs
        int free = available(view);
        return view.mode == Mode.EXCLUSIVE ? free == 0 : free > 0 && free < view.size;
    }

    // ---------------------------------------------------------------- lifecycle

    void close() {
        closed = true;
        states.close(h -> {
            keeper.stopRenewal(h);
            keeper.releaseOnClose(h);
        });
    }

    boolean isClosed() {
        return closed;
    }

    void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("lock client " + OwnerId.redact(host.clientId()) + " is closed");
        }
    }
}
