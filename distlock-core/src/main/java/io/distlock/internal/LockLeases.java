package io.distlock.internal;

import io.distlock.spi.ClaimStore;
import io.distlock.spi.SessionHolds;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Renewal ahead of the tick
 *   A hold the store granted with less validity than one watchdog tick (a grant that came with the wake-up) is renewed
 *   once on its own, ahead of the tick, and again at half of what is left while the store cannot be reached. It runs on
 *   the watchdog's thread, never on the timer thread: a renewal that gets no answer blocks its thread for the store's
 *   command timeout, and the timer thread must stay free for the overdue check that tells the hold lost when its
 *   validity ends. The rest of a lock hold's lease, release and loss is HoldKeeper's.
 *
 * Ending lost holds in the store
 *   Where the store keeps no lease of its own (SessionHolds), a hold found lost is ended there too (endLostInStore),
 *   whatever the cause, unless its owner already holds the lock again. A caller that found several holds lost tells
 *   them all before it ends any, since ending one is a round trip.
 */
/** The leases and losses of a {@link LockEngine}'s holds: {@link HoldKeeper} with the lock's two additions. */
final class LockLeases extends HoldKeeper<HoldImpl, LockState> {
    private static final Logger log = LoggerFactory.getLogger(LockLeases.class);
    private static final long MIN_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final @Nullable SessionHolds sessionHolds;
    private final long watchdogTickNanos;
    /** Where early renewals run: the watchdog's thread, which may block on a round trip. */
    private final ScheduledExecutorService renewer;

    LockLeases(
            NameStates<HoldImpl, LockState> states,
            ClaimStore store,
            EngineConfig config,
            ScheduledExecutorService scheduler,
            ScheduledExecutorService renewer) {
        super(states, h -> h.state, store, config, scheduler);
        this.renewer = renewer;
        this.sessionHolds = store instanceof SessionHolds sh ? sh : null;
        this.watchdogTickNanos = Math.max(1, config.watchdogLease().toNanos() / 3);
    }

    long tickNanos() {
        return watchdogTickNanos;
    }

    @Override
    void activate(HoldImpl h) {
        super.activate(h);
        if (h.leaseRenewed()) {
            long left = h.validUntil() - ticker.read();
            if (left < watchdogTickNanos + MIN_RETRY_NANOS) {
                scheduleRenewal(h, left / 2);
            }
        }
    }

    /**
     * Renews one hold ahead of the watchdog's tick (a hold the store granted with a short claim time), and again at
     * half of what is left while the store cannot be reached. On the watchdog's thread: see the overview.
     */
    private void scheduleRenewal(HoldImpl h, long delayNanos) {
        try {
            h.timer = renewer.schedule(
                    () -> {
                        long retry = watchdog.renewOne(h);
                        if (retry > 0) {
                            scheduleRenewal(h, retry);
                        }
                    },
                    Math.max(0, delayNanos),
                    TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // the client is closing; close() releases the hold
        }
    }

    /**
     * The store keeps no lease: a lost hold is ended there too, whatever the cause. A hold whose renewal failed or came
     * too late (a slow store, a busy machine) may still be held by a live session, which would keep the lock, granted
     * to nobody, for as long as it lasts; where the session is dead, ending it fails quietly.
     */
    @Override
    boolean endsInStore(@Nullable Throwable cause) {
        return sessionHolds != null;
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
}
