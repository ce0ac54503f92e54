package io.distlock.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Batching
 *   One watchdog per engine part (locks, claims) renews every hold of it taken without a lease argument. Each tick
 *   (every third of the lease) hands all of them to the store's batched renewal (ClaimStore.renew) in one call, which
 *   a store turns into as few round trips as it can.
 *
 * Renewal against release
 *   The tick runs under tickLock, and a release removes its hold under the same lock, so a renewal is never in flight
 *   for a hold after the release that ended it: a release waits at most one renewal round trip.
 *
 * Loss
 *   Holds that the store says are gone are marked lost at once; every one of them is told before any is ended in the
 *   store. When the store cannot be reached, holds stay valid until their last confirmed lease ends, then are marked
 *   lost with the failure as cause.
 */
final class Watchdog<H extends Watchdog.Renewable<K>, K> {
    private static final Logger log = LoggerFactory.getLogger(Watchdog.class);

    /** A hold the watchdog renews. */
    interface Renewable<K> {
        /** Neither released nor lost. */
        boolean isActive();

        /** Until when (a ticker reading) the hold lasts without another renewal. */
        long validUntil();

        /** The store confirmed the hold until {@code until}. */
        void renewed(long until);

        /** What the store renews. */
        K storeKey();

        String name();
    }

    /** What the watchdog asks of its engine: the store's batched renewal, and the telling of lost holds. */
    interface Engine<H, K> {
        /** Renews the holds in the store; returns those that are gone. */
        Set<K> renew(Collection<K> holds, Duration lease);

        /** Tells a lost hold's listeners and ends it in the store where needed. */
        void markLost(H hold, @Nullable Throwable cause);

        /** Tells a lost hold's listeners; returns whether it is still to be ended in the store. */
        boolean tellLost(H hold, @Nullable Throwable cause);

        /** Ends in the store a hold that {@link #tellLost} reported. */
        void endLostInStore(H hold);
    }

    private final Engine<H, K> engine;
    private final Ticker ticker;
    private final Duration lease;
    private final ReentrantLock tickLock = new ReentrantLock();
    private final Set<H> holds = ConcurrentHashMap.newKeySet();

    Watchdog(Engine<H, K> engine, Ticker ticker, Duration lease) {
        this.engine = engine;
        this.ticker = ticker;
        this.lease = lease;
    }

    void add(H hold) {
        holds.add(hold);
    }

    /** Stops renewing {@code hold}; returns after any renewal in flight has finished. */
    void remove(H hold) {
        if (!holds.contains(hold)) {
            return;
        }
        tickLock.lock();
        try {
            holds.remove(hold);
        } finally {
            tickLock.unlock();
        }
    }

    int size() {
        return holds.size();
    }

    /**
     * Marks lost every hold whose last confirmed lease has ended. It runs on another thread than {@link #tick} and
     * takes no tick lock, so a renewal that gets no answer (a store that stopped replying, a connection that went
     * silent) does not hold up the telling: the owner hears of the loss when the lease ends, not when the round trip
     * times out. A hold found so leaves the renewal set first, so ending it never waits for that round trip.
     */
    void expireOverdue() {
        long now = ticker.read();
        List<H> overdue = new ArrayList<>();
        for (H h : holds) {
            if (h.isActive() && now - h.validUntil() >= 0 && holds.remove(h)) {
                overdue.add(h);
            }
        }
        tellThenEnd(
                overdue,
                h -> new java.util.concurrent.TimeoutException(
                        "the lease of '" + h.name() + "' ended before the store confirmed a renewal"));
    }

    /**
     * Tells every hold of {@code lost} that it was lost, with {@code cause}, before ending any in the store (a round
     * trip each where the store keeps no leases, and a slow one when it cannot be reached): the last of a hundred holds
     * is not told a hundred round trips late. A hold whose telling failed (a metrics hook that threw) does not keep the
     * others from being ended there.
     */
    private void tellThenEnd(List<H> lost, Function<H, @Nullable Throwable> cause) {
        List<H> toEnd = new ArrayList<>();
        try {
            for (H h : lost) {
                try {
                    if (engine.tellLost(h, cause.apply(h))) {
                        toEnd.add(h);
                    }
                } catch (RuntimeException e) {
                    log.error("distlock: telling that '{}' was lost failed", h.name(), e);
                }
            }
        } finally {
            for (H h : toEnd) {
                engine.endLostInStore(h);
            }
        }
    }

    /**
     * Renews one hold now (one the store granted with a short claim time). Returns 0 when done (renewed, found lost,
     * or no longer renewed here); otherwise the store could not be reached and the hold is still valid: the delay after
     * which to try again, half of what is left.
     */
    long renewOne(H h) {
        tickLock.lock();
        try {
            if (!holds.contains(h) || !h.isActive()) {
                return 0;
            }
            long sent = ticker.read();
            Set<K> gone;
            try {
                gone = engine.renew(List.of(h.storeKey()), lease);
            } catch (RuntimeException e) {
                long left = h.validUntil() - ticker.read();
                if (left <= 0) {
                    log.warn("distlock: renewing '{}' failed and its lease ended", h.name(), e);
                    engine.markLost(h, e);
                    return 0;
                }
                log.debug("distlock: renewing '{}' failed; trying again while its lease lasts", h.name(), e);
                return Math.max(1_000_000L, left / 2);
            }
            if (gone.isEmpty()) {
                h.renewed(sent + lease.toNanos());
            } else {
                engine.markLost(h, null);
            }
            return 0;
        } catch (RuntimeException e) {
            log.error("distlock: renewing '{}' failed", h.name(), e);
            return 0;
        } finally {
            tickLock.unlock();
        }
    }

    void tick() {
        if (holds.isEmpty()) {
            return;
        }
        tickLock.lock();
        try {
            Map<K, H> batch = new HashMap<>();
            for (H h : holds) {
                if (h.isActive()) {
                    batch.put(h.storeKey(), h);
                }
            }
            if (batch.isEmpty()) {
                return;
            }
            long sent = ticker.read();
            Set<K> gone;
            try {
                gone = engine.renew(batch.keySet(), lease);
            } catch (RuntimeException e) {
                log.warn("distlock: renewing {} holds failed; they stay valid until their leases end", batch.size(), e);
                long now = ticker.read();
                for (H h : batch.values()) {
                    if (now - h.validUntil() >= 0) {
                        engine.markLost(h, e);
                    }
                }
                return;
            }
            List<H> lost = new ArrayList<>();
            for (Map.Entry<K, H> e : batch.entrySet()) {
                if (gone.contains(e.getKey())) {
                    lost.add(e.getValue());
                } else {
                    e.getValue().renewed(sent + lease.toNanos());
                }
            }
            tellThenEnd(lost, h -> null);
        } catch (RuntimeException e) {
            log.error("distlock: watchdog tick failed", e);
        } finally {
            tickLock.unlock();
        }
    }
}
