package io.distlock.internal;

import io.distlock.spi.ClaimStore;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.LockKey;
import io.distlock.spi.Mode;
import io.distlock.spi.OwnerId;
import java.time.Duration;
import java.util.Collection;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 *   A hold with a renewed lease joins the client's Watchdog; one with a fixed lease gets a timer at its end, which
 *   marks it lost if it is still held (the store ends it by itself at the same time). A hold found lost is told to its
 *   view's listeners at once, and its thread's next unlock throws LockLostException.
 *
 * The parts
 *   ClaimAcquirer: attempts, re-entry, waiting and wake-ups. This class: release, leases and loss, the views' questions
 *   (the thread's hold, availability), the per-name states and closing.
 */
/** The shared implementation of read-write locks and semaphores over a {@link ClaimStore}. */
final class ClaimEngine implements Watchdog.Engine<ClaimHold, HeldClaim> {
    private static final Logger log = LoggerFactory.getLogger(ClaimEngine.class);

    private final LockEngine host;
    private final ClaimStore store;
    private final EngineConfig config;
    private final Ticker ticker;
    private final ScheduledExecutorService scheduler;
    private final Watchdog<ClaimHold, HeldClaim> watchdog;
    private final ClaimAcquirer acquirer;
    private final NameStates<ClaimHold, ClaimState> states = new NameStates<>(ClaimState::new);
    private volatile boolean closed;

    ClaimEngine(LockEngine host, ClaimStore store, EngineConfig config, ScheduledExecutorService scheduler) {
        this.host = host;
        this.store = store;
        this.config = config;
        this.ticker = config.ticker();
        this.scheduler = scheduler;
        this.watchdog = new Watchdog<>(this, ticker, config.watchdogLease());
        this.acquirer = new ClaimAcquirer(this, states, store, config);
    }

    Ticker ticker() {
        return ticker;
    }

    /** One renewal round for every hold with a renewed lease; the client's scheduler calls it every tick. */
    void tick() {
        watchdog.tick();
    }

    // ---------------------------------------------------------------- acquire

    /**
     * Acquires {@code permits} of {@code view} for {@code owner}. Returns null when the wait ran out (or, for a wait
     * of 0, when the one attempt was busy).
     */
    @Nullable
    ClaimHold acquire(
            ClaimView view,
            int permits,
            OwnerId owner,
            boolean threadView,
            @Nullable Duration fixedLease,
            long waitNanos,
            boolean interruptible)
            throws InterruptedException {
        return acquirer.acquire(view, permits, owner, threadView, fixedLease, waitNanos, interruptible);
    }

    // ---------------------------------------------------------------- release

    /** Unlocks the calling thread's hold of {@code view}, counting down its re-entries first. */
    void unlockThread(ClaimView view) {
        states.unlockThread(view.name, host.threadOwner(), view.mode, view::describe, this::release);
    }

    void release(ClaimHold h) {
        ClaimState s = h.state;
        states.enterHeld(s);
        try {
            if (h.isLost()) {
                throw h.lostException();
            }
            stopRenewal(h); // from here on no renewal of this hold runs
            if (!h.finish(ClaimHold.RELEASED)) {
                if (h.isLost()) {
                    throw h.lostException();
                }
                throw new IllegalMonitorStateException(h.view.describe() + " was already released by this hold");
            }
            config.metrics().released(h.name(), ticker.read() - h.acquiredAt);
            boolean released;
            try {
                released = store.release(h.held);
            } catch (RuntimeException e) {
                ended(s, h);
                throw StoreCalls.storeFailure("release", s.key, e);
            }
            ended(s, h);
            if (!released) {
                config.metrics().lost(h.name());
                h.view.listeners.lost(h.fencingToken(), null);
                throw h.lostException();
            }
            h.view.listeners.released(h.fencingToken());
        } finally {
            states.exit(s);
        }
    }

    private static void ended(ClaimState s, ClaimHold h) {
        s.mutex.lock();
        try {
            s.ended(h);
        } finally {
            s.mutex.unlock();
        }
    }

    // ---------------------------------------------------------------- leases and loss

    /** Starts a fresh hold's lease: the watchdog renews it, or a timer marks it lost at its fixed end. */
    void activate(ClaimHold h) {
        if (h.claim.lease().renewed()) {
            watchdog.add(h);
            return;
        }
        try {
            h.timer = scheduler.schedule(
                    () -> {
                        if (h.isActive()) {
                            markLost(h, null);
                        }
                    },
                    Math.max(0, h.validUntil() - ticker.read()),
                    TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // the client is closing; close() releases the hold
        }
    }

    private void stopRenewal(ClaimHold h) {
        ScheduledFuture<?> f = h.timer;
        if (f != null) {
            f.cancel(false);
        }
        if (h.claim.lease().renewed()) {
            watchdog.remove(h);
        }
    }

    @Override
    public Set<HeldClaim> renew(Collection<HeldClaim> holds, Duration lease) {
        return store.renew(holds, lease);
    }

    @Override
    public void markLost(ClaimHold h, @Nullable Throwable cause) {
        if (tellLost(h, cause)) {
            endLostInStore(h);
        }
    }

    /** Marks the hold lost and tells its listeners, once. A claim store ends a hold by itself when its lease runs out. */
    @Override
    public boolean tellLost(ClaimHold h, @Nullable Throwable cause) {
        if (!h.finish(ClaimHold.LOST)) {
            return false;
        }
        stopRenewal(h);
        ClaimState s = h.state;
        s.mutex.lock();
        try {
            s.lost(h);
        } finally {
            s.mutex.unlock();
        }
        states.settle(s);
        log.warn("distlock: lost {} (fencing token {})", h.view.describe(), h.fencingToken());
        config.metrics().lost(h.name());
        h.view.listeners.lost(h.fencingToken(), cause);
        return false;
    }

    @Override
    public void endLostInStore(ClaimHold h) {
        // nothing to end: the store's lease of the hold ends by itself
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
        states.close(this::releaseOnClose);
    }

    private void releaseOnClose(ClaimHold h) {
        stopRenewal(h);
        if (h.finish(ClaimHold.RELEASED)) {
            try {
                var unused = store.release(h.held);
            } catch (RuntimeException e) {
                log.warn("distlock: could not release {} on close; it expires with its lease", h.view.describe(), e);
            }
        }
    }

    boolean isClosed() {
        return closed;
    }

    void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("lock client " + host.clientId() + " is closed");
        }
    }
}
