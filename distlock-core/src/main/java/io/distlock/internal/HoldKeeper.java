package io.distlock.internal;

import io.distlock.spi.AcquiresTogether;
import io.distlock.spi.ClaimStore;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.SessionHolds;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Leases
 *   A hold taken without a lease argument joins the part's Watchdog, which renews every such hold in one batched store
 *   call per tick. A hold with a lease argument gets a timer at its end, which marks it lost if it is still held; the
 *   store ends it by itself at the same time.
 *
 * Releasing
 *   A release stops the hold's renewal first, so no renewal runs after it, then moves the hold's status to released:
 *   a release and a loss found at the same moment agree on one outcome. Then the store ends the hold, owner-checked;
 *   a release that finds the hold gone there tells it lost. LockReleaser hands a lock to a local waiter between the
 *   two halves instead, where it can.
 *
 * Loss
 *   A hold found lost is marked and told to its listeners once (tellLost). Its state drops it and keeps a thread's
 *   hold for the thread's next unlock, which throws LockLostException. The store's lease of the hold ends it there by
 *   itself; where a store keeps no lease (SessionHolds), endLostInStore ends it there too (LockLeases adds the check
 *   that the lock's owner does not hold it again).
 *
 * Closing
 *   The client's close releases every live hold in the store once, best effort: a hold whose release fails ends with
 *   its lease.
 */
/** The life of an engine part's holds once granted: their leases, their release in the store, their loss. */
class HoldKeeper<H extends EngineHold, S extends NameState<H>> implements Watchdog.Engine<H, HeldClaim> {
    private static final Logger log = LoggerFactory.getLogger(HoldKeeper.class);

    final NameStates<H, S> states;
    private final Function<H, S> stateOf;
    final ClaimStore store;
    final Ticker ticker;
    final LockMetrics metrics;
    final ScheduledExecutorService scheduler;
    final Watchdog<H, HeldClaim> watchdog;

    HoldKeeper(
            NameStates<H, S> states,
            Function<H, S> stateOf,
            ClaimStore store,
            EngineConfig config,
            ScheduledExecutorService scheduler) {
        this.states = states;
        this.stateOf = stateOf;
        this.store = store;
        this.ticker = config.ticker();
        this.metrics = config.metrics();
        this.scheduler = scheduler;
        this.watchdog = new Watchdog<>(this, ticker, config.watchdogLease());
    }

    // ---------------------------------------------------------------- leases

    /** Starts a fresh hold's lease: the watchdog renews it, or a timer marks it lost at its fixed end. */
    void activate(H h) {
        if (h.leaseRenewed()) {
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

    /** Stops the hold's timer and its renewal; returns after any renewal in flight has finished. */
    void stopRenewal(H h) {
        ScheduledFuture<?> f = h.timer;
        if (f != null) {
            f.cancel(false);
        }
        if (h.leaseRenewed()) {
            watchdog.remove(h);
        }
    }

    @Override
    public Set<HeldClaim> renew(Collection<HeldClaim> holds, Duration lease) {
        return store.renew(holds, lease);
    }

    // ---------------------------------------------------------------- release

    /** A release of a hold with nothing in between its two halves. */
    void release(H h) {
        S s = stateOf.apply(h);
        states.enterHeld(s);
        try {
            beginRelease(h);
            endInStore(h);
        } finally {
            states.exit(s);
        }
    }

    /**
     * The first half of a release: stops the hold's renewal and marks it released. Throws LockLostException when the
     * hold was found lost, IllegalMonitorStateException when it was released already.
     */
    void beginRelease(H h) {
        if (h.isLost()) {
            throw h.lostException();
        }
        stopRenewal(h); // from here on no renewal of this hold runs
        if (!h.finish(EngineHold.RELEASED)) {
            if (h.isLost()) {
                throw h.lostException();
            }
            throw new IllegalMonitorStateException(h.describe() + " was already released by this hold");
        }
        metrics.released(h.name(), ticker.read() - h.acquiredAt);
    }

    /** The second half: ends the hold in the store and its state, and tells the listeners (or throws lost). */
    void endInStore(H h) {
        boolean released;
        try {
            released = store.release(h.heldClaim());
        } catch (RuntimeException e) {
            throw failedInStore(h, e);
        }
        endedInStore(h, released);
    }

    /** After a store call that ended {@code h} or could not: see {@link #endInStore}. */
    RuntimeException failedInStore(H h, RuntimeException e) {
        S s = stateOf.apply(h);
        ended(s, h);
        return StoreCalls.storeFailure("release", s.key, e);
    }

    /**
     * After a store call that ended {@code h} ({@code released}) or found it gone: ends it in its state and tells the
     * listeners, or throws lost.
     */
    void endedInStore(H h, boolean released) {
        S s = stateOf.apply(h);
        if (released) {
            s.mutex.lock();
            try {
                s.released(h);
            } finally {
                s.mutex.unlock();
            }
        } else {
            ended(s, h);
        }
        if (!released) {
            metrics.lost(h.name());
            h.listeners().lost(h.fencingToken(), null);
            throw h.lostException();
        }
        h.listeners().released(h.fencingToken());
    }

    /**
     * {@link #endInStore} for several holds (of distinct names, begun with {@link #beginRelease}) whose store release is
     * one batched call. Returns each hold's outcome by position: null when released, else the exception its single
     * release would throw (lost, or the store's failure).
     */
    List<@Nullable RuntimeException> endAllInStore(List<H> holds, AcquiresTogether batch) {
        int n = holds.size();
        List<HeldClaim> claims = new ArrayList<>(n);
        for (H h : holds) {
            claims.add(h.heldClaim());
        }
        List<@Nullable RuntimeException> outcomes = new ArrayList<>(n);
        List<Boolean> answers;
        try {
            answers = batch.releaseAll(claims);
            if (answers.size() != n) {
                throw new IllegalStateException(
                        "the store answered " + answers.size() + " of " + n + " releases made together");
            }
        } catch (RuntimeException e) {
            for (H h : holds) {
                S s = stateOf.apply(h);
                ended(s, h);
                outcomes.add(StoreCalls.storeFailure("release", s.key, e));
            }
            return outcomes;
        }
        for (int i = 0; i < n; i++) {
            H h = holds.get(i);
            S s = stateOf.apply(h);
            if (Boolean.TRUE.equals(answers.get(i))) {
                s.mutex.lock();
                try {
                    s.released(h);
                } finally {
                    s.mutex.unlock();
                }
                h.listeners().released(h.fencingToken());
                outcomes.add(null);
            } else {
                ended(s, h);
                metrics.lost(h.name());
                h.listeners().lost(h.fencingToken(), null);
                outcomes.add(h.lostException());
            }
        }
        return outcomes;
    }

    private void ended(S s, H h) {
        s.mutex.lock();
        try {
            s.ended(h);
        } finally {
            s.mutex.unlock();
        }
    }

    /** Releases a hold the closing client still has, once; a failure leaves it to its lease. */
    void releaseOnClose(H h) {
        if (h.finish(EngineHold.RELEASED)) {
            try {
                var unused = store.release(h.heldClaim());
            } catch (RuntimeException e) {
                log.warn("distlock: could not release {} on close; it expires with its lease", h.describe(), e);
            }
        }
    }

    /** Tells the holds whose lease ended unconfirmed; see {@link Watchdog#expireOverdue}. */
    void expireOverdue() {
        watchdog.expireOverdue();
    }

    // ---------------------------------------------------------------- loss

    /** The hold ended without its owner's release. Tells listeners once, then ends the hold in the store if needed. */
    @Override
    public final void markLost(H h, @Nullable Throwable cause) {
        if (tellLost(h, cause)) {
            endLostInStore(h);
        }
    }

    /**
     * Marks the hold lost and tells its listeners, once. Returns whether the hold is still to be ended in the store
     * ({@link #endLostInStore}): a caller that found several holds lost tells them all first, since ending one may be a
     * round trip, and a slow one when the store cannot be reached (which is often why the holds were lost).
     */
    @Override
    public final boolean tellLost(H h, @Nullable Throwable cause) {
        if (!h.finish(EngineHold.LOST)) {
            return false;
        }
        stopRenewal(h);
        S s = stateOf.apply(h);
        s.mutex.lock();
        try {
            s.lost(h);
        } finally {
            s.mutex.unlock();
        }
        states.settle(s);
        log.warn("distlock: lost {} (fencing token {}, owner {})", h.describe(), h.fencingToken(), h.owner());
        metrics.lost(h.name());
        h.listeners().lost(h.fencingToken(), cause);
        return endsInStore(cause);
    }

    /**
     * Whether a hold told lost with {@code cause} is to be ended in the store: not where the store keeps leases; where
     * it keeps none (SessionHolds), always, whatever the cause: a hold whose renewal came too late (a slow store, a
     * busy machine) would otherwise stay there, granted to nobody, for as long as its owner's session lasts.
     */
    boolean endsInStore(@Nullable Throwable cause) {
        return store instanceof SessionHolds;
    }

    /**
     * Ends a hold that {@link #tellLost} reported lost in the store: where the store keeps no lease, through {@link
     * SessionHolds#abandonHold}, which ends that grant only; elsewhere the store's own lease does it.
     */
    @Override
    public void endLostInStore(H h) {
        if (store instanceof SessionHolds sessionHolds) {
            try {
                sessionHolds.abandonHold(h.heldClaim());
            } catch (RuntimeException e) {
                log.warn("distlock: could not end lost {} in the store; it ends with its session", h.describe(), e);
            }
        }
    }

    /**
     * A thread's hold found expired on re-entry (its lease ran out before the watchdog noticed): marks it lost and
     * drops it from the kept lost holds, so that the thread acquires afresh.
     */
    void forgetExpired(H expired) {
        markLost(expired, null);
        S s = stateOf.apply(expired);
        s.mutex.lock();
        try {
            var unused = s.takeLost(expired.owner(), expired.mode());
        } finally {
            s.mutex.unlock();
        }
    }
}
