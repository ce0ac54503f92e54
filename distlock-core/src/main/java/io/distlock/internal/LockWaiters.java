package io.distlock.internal;

import io.distlock.spi.Claim;
import io.distlock.spi.ClaimStore;
import io.distlock.spi.Grant;
import io.distlock.spi.GrantsWithWakeUp;
import io.distlock.spi.Lease;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * The local queue
 *   LockState.waiters keeps this client's waiters for a name in arrival order. A waiter joins after its first busy
 *   answer, or at once and quietly when a local owner holds the lock (its release wakes it). Only the first non-queued
 *   waiter talks to the store; when it leaves, the next one is woken to take over.
 *
 * Wake-ups
 *   The first waiter that needs one subscribes to the name; the subscription is shared by every local waiter and
 *   closed when the state is dropped. A wake-up, from the store or from a local release (a store need not tell a
 *   client of its own releases), counts in LockState.wakeUps (so a waiter that joins after a busy answer sees whether
 *   one came while that attempt was on its way) and wakes the first non-queued waiter and every waiter with a place
 *   in the store's queue.
 *
 * Grants with the wake-up
 *   A store may give the lock straight to a waiting client and say so with the wake-up (GrantsWithWakeUp.subscribe
 *   with a Grant taker; Redis does). The first local waiter that may take a hold as it is (non-queued,
 *   watchdog-renewed, no attempt of its own under way) takes it with no round trip: the hold is kept in the store under
 *   the grant's id (HoldImpl.storeOwner), is valid for what the store vouches for, and, when that is less than a
 *   watchdog tick, is renewed once ahead of the tick. The grant is refused while any attempt of this client for the
 *   name is on its way (LockState.attemptsInFlight: that attempt may take the hold over itself) or a local holder
 *   exists; the store then treats the message as a plain wake-up.
 *
 * Giving up
 *   A wait that ends by timeout or interrupt leaves nothing behind: a non-queued waiter never wrote anything; a queued
 *   one abandons its entry (which also drops a grant it never saw); a waiter that was being handed the lock waits for
 *   the hand-off's outcome and then keeps (timeout) or releases (interrupt) the grant, so no grant is left unowned.
 */
/** The waiting half of a {@link LockEngine}'s acquire: the local queue, wake-ups, grants that come with them. */
final class LockWaiters {
    private static final Logger log = LoggerFactory.getLogger(LockWaiters.class);
    /** For {@link #join}: the new waiter tries at once. */
    static final int JOIN_TRY = -1;
    /** For {@link #join}: the new waiter waits for a wake-up. */
    static final int JOIN_QUIET = -2;

    private final LockEngine engine;
    private final ClaimStore store;
    private final @Nullable GrantsWithWakeUp grants;
    private final Lease renewedLease;
    private final Ticker ticker;
    private final LockLeases leases;

    LockWaiters(LockEngine engine, EngineConfig config, LockLeases leases) {
        this.engine = engine;
        this.store = leases.store;
        this.grants = leases.store instanceof GrantsWithWakeUp g ? g : null;
        this.renewedLease = Lease.renewed(config.watchdogLease());
        this.ticker = config.ticker();
        this.leases = leases;
    }

    /**
     * Adds a waiter to the local queue. {@code wakeUpsSeen} is JOIN_TRY (it tries at once), JOIN_QUIET (it waits), or
     * the state's wake-up count when the caller's attempt was sent: it tries at once if a wake-up came since (it found
     * no waiter to wake). {@code inStoreQueue}: that attempt left the waiter a place in the store's queue; it keeps it
     * only while no other local waiter talks to the store (a non-fair lock's waiters of one client line up behind the
     * first), and gives it back otherwise. {@code wake} is how the waiter is woken: its thread unparked, or its next
     * step scheduled.
     */
    Waiter join(
            LockState s,
            EngineLock lock,
            OwnerId owner,
            boolean threadView,
            @Nullable Duration fixedLease,
            boolean queued,
            boolean inStoreQueue,
            int wakeUpsSeen,
            Runnable wake) {
        Waiter w = new Waiter(lock, owner, threadView, fixedLease, queued, wake);
        boolean giveBack;
        s.mutex.lock();
        try {
            giveBack = inStoreQueue && s.firstLocal() != null;
            w.inStoreQueue = inStoreQueue && !giveBack;
            s.waiters.addLast(w);
            w.signalled = wakeUpsSeen == JOIN_TRY || (wakeUpsSeen != JOIN_QUIET && s.wakeUps != wakeUpsSeen);
        } finally {
            s.mutex.unlock();
        }
        if (giveBack) {
            abandonQuietly(s.key, owner, fixedLease != null ? Lease.fixed(fixedLease) : renewedLease);
        }
        return w;
    }

    void leave(LockState s, @Nullable Waiter w) {
        if (w == null) {
            return;
        }
        s.mutex.lock();
        try {
            s.waiters.remove(w);
            wakeNextLocal(s, w);
        } finally {
            s.mutex.unlock();
        }
    }

    /** After {@code gone} left the local queue, the next local waiter takes over talking to the store. */
    private static void wakeNextLocal(LockState s, Waiter gone) {
        if (!gone.queued && s.holder == null) {
            Waiter next = s.firstLocal();
            if (next != null) {
                next.signal();
            }
        }
    }

    /** Ends a wait. Returns a grant the waiter keeps (timeout during a hand-off); null otherwise. */
    @Nullable
    HoldImpl giveUp(LockState s, Waiter w, boolean interrupted) {
        HoldImpl grant;
        boolean inQueue = false;
        for (; ; ) {
            s.mutex.lock();
            try {
                if (w.status == Waiter.Status.GRANTED) {
                    grant = w.grant;
                    break;
                }
                if (w.status == Waiter.Status.WAITING) {
                    s.waiters.remove(w);
                    wakeNextLocal(s, w);
                    grant = null;
                    inQueue = w.queued || w.inStoreQueue;
                    break;
                }
            } finally {
                s.mutex.unlock();
            }
            // a release is handing us the lock right now: its outcome is one round trip away
            LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(1));
        }
        if (grant == null) {
            if (inQueue) {
                abandonQuietly(s.key, w.owner, w.fixedLease != null ? Lease.fixed(w.fixedLease) : renewedLease);
            }
            return null;
        }
        if (interrupted) {
            if (!grant.isActive()) {
                return null; // the client's close released it (a grant made as the client closed)
            }
            try {
                engine.release(grant);
            } catch (IllegalMonitorStateException e) {
                // the client's close released it meanwhile: nobody else had it
            } catch (RuntimeException e) {
                log.warn("distlock: releasing '{}' after an interrupted wait failed", s.key, e);
            }
            return null;
        }
        return grant;
    }

    /** Subscribes the name's waiters to the store's wake-ups, once; returns whether the store notifies at all. */
    boolean subscribe(LockState s) {
        GrantsWithWakeUp g = grants;
        return s.subscribe(() -> g != null
                ? g.subscribe(s.key, () -> onWake(s), grant -> onGrant(s, grant))
                : store.subscribe(s.key, () -> onWake(s)));
    }

    private static void onWake(LockState s) {
        s.mutex.lock();
        try {
            s.wakeUps = (s.wakeUps + 1) & Integer.MAX_VALUE;
            s.signalWaiters();
        } finally {
            s.mutex.unlock();
        }
    }

    /**
     * The store gave the lock to this client with its wake-up: the first local waiter that may take a hold as it is
     * (non-queued, renewed by the watchdog, no attempt of its own under way) takes it without a round trip. Runs on the
     * store's I/O thread, so it never blocks; the waiter's thread tells the listeners.
     */
    private boolean onGrant(LockState s, Grant g) {
        // the engine's clock first, then the store's: with the system ticker the validity can only come out shorter
        long now = ticker.read();
        long left = g.validUntilNanos() - System.nanoTime();
        if (left <= 0) {
            return false;
        }
        HoldImpl h;
        s.mutex.lock();
        try {
            if (engine.isClosed() || s.removed || s.holder != null || s.attemptsInFlight > 0) {
                // a local holder: its hold ended unnoticed, and its release or the watchdog will tell; an attempt on
                // its way may take the hold over itself
                return false;
            }
            Waiter taker = null;
            for (Waiter w : s.waiters) {
                if (!w.queued
                        && !w.inStoreQueue
                        && w.fixedLease == null
                        && !w.attempting
                        && w.status == Waiter.Status.WAITING) {
                    taker = w;
                    break;
                }
            }
            if (taker == null) {
                return false;
            }
            h = HoldImpl.ofStoreGrant(engine, s, taker.lock, taker.owner, taker.threadView, g, now, now + left);
            s.waiters.remove(taker);
            s.holder = h;
            s.handOffStreak = 0;
            taker.grant = h;
            taker.grantedByStore = true;
            taker.status = Waiter.Status.GRANTED;
            taker.signal();
        } finally {
            s.mutex.unlock();
        }
        leases.activate(h);
        return true;
    }

    /** Gives back what an attempt of {@code owner} may have left in the store: a queue entry, or a grant never seen. */
    void abandonQuietly(LockKey key, OwnerId owner, Lease lease) {
        abandonQuietly(store, key, owner, lease);
    }

    /** See {@link #abandonQuietly(LockKey, OwnerId, Lease)}, on {@code store}. */
    static void abandonQuietly(ClaimStore store, LockKey key, OwnerId owner, Lease lease) {
        try {
            store.abandon(Claim.lock(key, owner, lease, 0));
        } catch (RuntimeException e) {
            log.warn("distlock: could not clean up after '{}' for {}; it expires with its lease", key, owner, e);
        }
    }
}
