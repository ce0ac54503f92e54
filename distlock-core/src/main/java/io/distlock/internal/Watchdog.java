package io.distlock.internal;

import io.distlock.spi.HeldLock;
import io.distlock.spi.LockStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * One watchdog per client renews every hold taken without a lease argument. Each tick (every third of the lease)
 * hands all of them to LockStore.renew in one call, which a store turns into as few round trips as it can. The tick
 * runs under tickLock, and a release removes its hold under the same lock, so a renewal is never in flight for a
 * hold after the release that ended it: a release waits at most one renewal round trip. Holds that the store says are
 * gone are marked lost at once. When the store cannot be reached, holds stay valid until their last confirmed lease
 * ends, then are marked lost with the failure as cause.
 */
final class Watchdog {
    private static final Logger log = LoggerFactory.getLogger(Watchdog.class);

    private final LockEngine engine;
    private final LockStore store;
    private final Ticker ticker;
    private final Duration lease;
    private final ReentrantLock tickLock = new ReentrantLock();
    private final Set<HoldImpl> holds = ConcurrentHashMap.newKeySet();

    Watchdog(LockEngine engine, LockStore store, Ticker ticker, Duration lease) {
        this.engine = engine;
        this.store = store;
        this.ticker = ticker;
        this.lease = lease;
    }

    void add(HoldImpl hold) {
        holds.add(hold);
    }

    /** Stops renewing {@code hold}; returns after any renewal in flight has finished. */
    void remove(HoldImpl hold) {
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
     * Renews one hold now (one the store granted with a short claim time). Returns 0 when done (renewed, found lost,
     * or no longer renewed here); otherwise the store could not be reached and the hold is still valid: the delay after
     * which to try again, half of what is left.
     */
    long renewOne(HoldImpl h) {
        tickLock.lock();
        try {
            if (!holds.contains(h) || !h.isActive()) {
                return 0;
            }
            long sent = ticker.read();
            Set<HeldLock> gone;
            try {
                gone = store.renew(List.of(h.heldLock()), lease);
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
            Map<HeldLock, HoldImpl> batch = new HashMap<>();
            for (HoldImpl h : holds) {
                if (h.isActive()) {
                    batch.put(h.heldLock(), h);
                }
            }
            if (batch.isEmpty()) {
                return;
            }
            long sent = ticker.read();
            Set<HeldLock> gone;
            try {
                gone = store.renew(batch.keySet(), lease);
            } catch (RuntimeException e) {
                log.warn("distlock: renewing {} holds failed; they stay valid until their leases end", batch.size(), e);
                long now = ticker.read();
                for (HoldImpl h : batch.values()) {
                    if (now - h.validUntil() >= 0) {
                        engine.markLost(h, e);
                    }
                }
                return;
            }
            List<HoldImpl> lost = new ArrayList<>();
            for (Map.Entry<HeldLock, HoldImpl> e : batch.entrySet()) {
                if (gone.contains(e.getKey())) {
                    lost.add(e.getValue());
                } else {
                    e.getValue().renewed(sent + lease.toNanos());
                }
            }
            // every lost hold is told before any is ended in the store (a round trip each, where the store keeps no
            // leases): the last of a hundred holds is not told a hundred round trips late. A hold whose telling failed
            // (a metrics hook that threw) does not keep the others from being ended there
            List<HoldImpl> toEnd = new ArrayList<>();
            try {
                for (HoldImpl h : lost) {
                    try {
                        if (engine.tellLost(h, null)) {
                            toEnd.add(h);
                        }
                    } catch (RuntimeException e) {
                        log.error("distlock: telling that '{}' was lost failed", h.name(), e);
                    }
                }
            } finally {
                for (HoldImpl h : toEnd) {
                    engine.endLostInStore(h);
                }
            }
        } catch (RuntimeException e) {
            log.error("distlock: watchdog tick failed", e);
        } finally {
            tickLock.unlock();
        }
    }
}
