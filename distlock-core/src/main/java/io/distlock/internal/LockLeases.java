package io.distlock.internal;

import io.distlock.spi.ClaimStore;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.SessionHolds;
import java.time.Duration;
import java.util.Collection;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Renewed leases
 *   A hold taken without a lease argument joins the client's Watchdog, which renews every such hold in one batched
 *   store call per tick. A hold the store granted with less validity than one tick (a grant that came with the
 *   wake-up) is renewed once on its own, ahead of the tick, and again at half of what is left while the store cannot
 *   be reached.
 *
 * Fixed leases
 *   A hold with a lease argument gets a timer at its end, which marks it lost if it is still held.
 *
 * Loss
 *   A hold found lost is marked and told to its listeners once (tellLost); where the store keeps no lease of its own
 *   (SessionHolds), it is then ended there (endLostInStore), unless its owner already holds the lock again. A caller
 *   that found several holds lost tells them all before it ends any, since ending one is a round trip.
 */
/** The leases and losses of a {@link LockEngine}'s holds: renewal, fixed-lease timers, telling lost holds. */
final class LockLeases implements Watchdog.Engine<HoldImpl, HeldClaim> {
    private static final Logger log = LoggerFactory.getLogger(LockLeases.class);
    private static final long MIN_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final LockEngine engine;
    private final ClaimStore store;
    private final @Nullable SessionHolds sessionHolds;
    private final Ticker ticker;
    private final LockMetrics metrics;
    private final ScheduledThreadPoolExecutor scheduler;
    private final long watchdogTickNanos;
    final Watchdog<HoldImpl, HeldClaim> watchdog;

    LockLeases(LockEngine engine, ClaimStore store, EngineConfig config, ScheduledThreadPoolExecutor scheduler) {
        this.engine = engine;
        this.store = store;
        this.sessionHolds = store instanceof SessionHolds sh ? sh : null;
        this.ticker = config.ticker();
        this.metrics = config.metrics();
        this.scheduler = scheduler;
        this.watchdogTickNanos = Math.max(1, config.watchdogLease().toNanos() / 3);
        this.watchdog = new Watchdog<>(this, ticker, config.watchdogLease());
    }

    long tickNanos() {
        return watchdogTickNanos;
    }

    @Override
    public Set<HeldClaim> renew(Collection<HeldClaim> holds, Duration lease) {
        return store.renew(holds, lease);
    }

    /** The hold ended without its owner's release. Tells listeners once, then ends the hold in the store if needed. */
    @Override
    public void markLost(HoldImpl h, @Nullable Throwable cause) {
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
    public boolean tellLost(HoldImpl h, @Nullable Throwable cause) {
        if (!h.finish(HoldImpl.LOST)) {
            return false;
        }
        stopRenewal(h);
        LockState s = h.state;
        s.mutex.lock();
        try {
            HoldImpl holder = s.holder;
            if (holder == h) {
                s.holder = null;
                s.signalWaiters();
            }
            if (h.threadView && (holder == h || holder == null || !holder.owner.equals(h.owner))) {
                s.addLost(h.owner, h);
            }
        } finally {
            s.mutex.unlock();
        }
        settle(s);
        log.warn("distlock: lost lock '{}' (fencing token {}, owner {})", h.name(), h.fencingToken, h.owner);
        metrics.lost(h.name());
        h.lock.fireLost(h.fencingToken, cause);
        return sessionHolds != null && cause == null; // the store keeps no lease: end the hold there too
    }

    /** Ends a hold that {@link #tellLost} reported lost in the store, unless its owner holds the lock again. */
    @Override
    public void endLostInStore(HoldImpl h) {
        if (!ownerHoldsAgain(h.state, h)) {
            abandonHoldQuietly(h);
        }
    }

    /** Whether the owner of {@code lost} already holds the lock again through a newer hold. */
    private static boolean ownerHoldsAgain(LockState s, HoldImpl lost) {
        s.mutex.lock();
        try {
            HoldImpl holder = s.holder;
            return holder != null && holder != lost && holder.storeOwner.equals(lost.storeOwner);
        } finally {
            s.mutex.unlock();
        }
    }

    void activate(HoldImpl h) {
        if (h.fixedLease == null) {
            watchdog.add(h);
            long left = h.validUntil() - ticker.read();
            if (left < watchdogTickNanos + MIN_RETRY_NANOS) {
                scheduleRenewal(h, left / 2);
            }
            return;
        }
        long delay = h.validUntil() - ticker.read();
        try {
            h.expiry = scheduler.schedule(
                    () -> {
                        if (h.isActive()) {
                            markLost(h, null);
                        }
                    },
                    Math.max(0, delay),
                    TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // the client is closing; close() releases the hold
        }
    }

    /**
     * Renews one hold ahead of the watchdog's tick (a hold the store granted with a short claim time), and again at
     * half of what is left while the store cannot be reached.
     */
    void scheduleRenewal(HoldImpl h, long delayNanos) {
        try {
            h.expiry = scheduler.schedule(
                    () -> {
                        long retry = watchdog.renewOne(h);
                        if (retry > 0) {
                            scheduleRenewal(h, retry);
                        }
                    },
                    Math.max(0, delayNanos),
                    TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // the client is closing; close() releases the hold
        }
    }

    void stopRenewal(HoldImpl h) {
        ScheduledFuture<?> f = h.expiry;
        if (f != null) {
            f.cancel(false);
        }
        if (h.fixedLease == null) {
            watchdog.remove(h);
        }
    }

    private void abandonHoldQuietly(HoldImpl h) {
        try {
            Objects.requireNonNull(sessionHolds, "no session holds").abandonHold(h.heldClaim());
        } catch (RuntimeException e) {
            log.warn(
                    "distlock: could not clean up after lost '{}' for {}; it expires with its lease",
                    h.name(),
                    h.owner,
                    e);
        }
    }

    private void settle(LockState s) {
        engine.settle(s);
    }
}
