package io.distlock.internal;

import static io.distlock.internal.StoreCalls.call;
import static io.distlock.internal.StoreCalls.interruptedBy;
import static io.distlock.internal.StoreCalls.storeFailure;

import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.ClaimStore;
import io.distlock.spi.FreeSubscriptions;
import io.distlock.spi.Grant;
import io.distlock.spi.GrantsWithWakeUp;
import io.distlock.spi.HandsOff;
import io.distlock.spi.Lease;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import io.distlock.spi.QueueOrdered;
import io.distlock.spi.Subscription;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Waiting, non-queued (plain locks on stores that do not queue every waiter). A new acquirer barges: one attempt
 * unless a local owner holds the lock or, for an acquire that may wait, a local waiter is already there (the first
 * local waiter is the one woken to try). Then it joins the local queue. Only the first local waiter talks to the store:
 * it subscribes, re-checks (so a release between its failed attempt and the subscription is not missed), and sleeps
 * until a wake-up or the holder's remaining lease, whichever is first. On a store that subscribes freely (FreeSubscriptions), an
 * acquire that may wait for a name that was busy for this client within the last second subscribes before its first
 * attempt, which then is that re-check (so the store can register the client as waiting with its first attempt).
 * A wake-up (store notification, local release, lost local hold) wakes that one waiter. When a local owner releases and a local waiter exists, the lock is handed
 * over in one round trip with a fresh fencing token (HandsOff.handOff), at most handOffLimit times in a row so other
 * clients get their turn. When the store reserved spare tokens with the acquisition (Attempt.Acquired.spareTokens),
 * the hand-off is a succession instead: no round trip, the next spare token, the store keeps the hold under the
 * acquiring owner's id (HoldImpl.storeOwner), and the successor inherits the lease the watchdog last confirmed; holds
 * with a fixed lease never take part, since their lease must start at their own grant.
 *
 * Grants with the wake-up. A store may give the lock straight to a waiting client and say so with the wake-up
 * (GrantsWithWakeUp.subscribe with a Grant taker; Redis does). The first local waiter that may take a hold as it is
 * (non-queued, watchdog-renewed, no attempt of its own under way) takes it with no round trip: the hold is kept in the
 * store under the grant's id (HoldImpl.storeOwner), is valid for what the store vouches for, and, when that is less
 * than a watchdog tick, is renewed once ahead of the tick. The grant is refused while any attempt of this client for the
 * name is on its way (LockState.attemptsInFlight: that attempt may take the hold over itself) or a local holder exists;
 * the store then treats the message as a plain wake-up.
 *
 * Waiting, non-fair on a store whose queue is the order (QueueOrdered and HandsOff: ZooKeeper, etcd). As above,
 * but the first local waiter's attempts queue in the store (it keeps the client's place there and gives it back if it
 * gives up), and a hand-off never passes another client's queued waiter: the store answers "queued" instead and the
 * local waiter waits in the queue. Since the store keeps the order between clients, hand-offs have no streak limit.
 * Successions (when the store reserved spare tokens: ZooKeeper) do pass that queue, as a non-fair lock may, but only
 * while the spare tokens last (a waiter with a place of its own in the store's queue never takes part); the hand-off
 * after them respects the queue again, so another client waits at most that many successions longer.
 *
 * Waiting, queued (fair locks, and stores whose holds are queue positions). Every waiter joins the store's queue with
 * its own owner id and is granted in the store's order; every wake-up wakes all local queued waiters, each of which
 * re-checks its position. A waiter that gives up abandons its queue entry in the store.
 *
 * A wait that ends by timeout or interrupt leaves nothing behind: a non-queued waiter never wrote anything; a queued
 * one abandons its entry (which also drops a grant it never saw); a waiter that was being handed the lock waits for
 * the hand-off's outcome and then keeps (timeout) or releases (interrupt) the grant, so no grant is left unowned.
 *
 */
/** The acquire half of a {@link LockEngine}: attempts, local waiting, wake-ups and grants that come with them. */
final class LockAcquirer {
    private static final Logger log = LoggerFactory.getLogger(LockAcquirer.class);
    private static final long FOREVER = Long.MAX_VALUE / 4;
    private static final long MIN_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long POLL_BASE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    private static final long POLL_CAP_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    private static final int JOIN_TRY = -1;
    private static final int JOIN_QUIET = -2;
    private static final long RECENTLY_BUSY_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final int RECENTLY_BUSY_MAX = 4096;

    private final LockEngine engine;
    private final ClaimStore store;
    private final @Nullable HandsOff handOffs;
    private final @Nullable GrantsWithWakeUp grants;
    private final boolean queueOrdered;
    private final boolean freeSubscriptions;
    private final Lease renewedLease;
    private final int spareTokens;
    private final Ticker ticker;
    private final LockMetrics metrics;
    private final LockLeases leases;
    /** Name -> when an attempt for it was last busy; see {@link #recentlyBusy}. Bounded by RECENTLY_BUSY_MAX. */
    private final ConcurrentHashMap<String, Long> recentlyBusy = new ConcurrentHashMap<>();

    LockAcquirer(LockEngine engine, ClaimStore store, EngineConfig config, LockLeases leases) {
        this.engine = engine;
        this.store = store;
        this.handOffs = store instanceof HandsOff h ? h : null;
        this.grants = store instanceof GrantsWithWakeUp g ? g : null;
        this.queueOrdered = store instanceof QueueOrdered;
        this.freeSubscriptions = store instanceof FreeSubscriptions;
        this.renewedLease = Lease.renewed(config.watchdogLease());
        this.spareTokens = config.handOffLimit();
        this.ticker = config.ticker();
        this.metrics = config.metrics();
        this.leases = leases;
    }

    void acquireUninterruptibly(EngineLock lock, @Nullable Duration fixedLease) {
        try {
            var unused = acquire(lock, threadOwner(), true, fixedLease, FOREVER, false);
        } catch (InterruptedException e) {
            throw new AssertionError("uninterruptible acquire was interrupted", e);
        }
    }

    @Nullable
    HoldImpl acquire(EngineLock lock, OwnerId owner, boolean threadView, @Nullable Duration fixedLease, long waitNanos)
            throws InterruptedException {
        return acquire(lock, owner, threadView, fixedLease, waitNanos, true);
    }

    private @Nullable HoldImpl acquire(
            EngineLock lock,
            OwnerId owner,
            boolean threadView,
            @Nullable Duration fixedLease,
            long waitNanos,
            boolean interruptible)
            throws InterruptedException {
        ensureOpen();
        long start = ticker.read();
        LockState s = enter(lock.name());
        boolean interrupted = false;
        try {
            if (threadView) {
                HoldImpl reentered = reenter(s, owner);
                if (reentered != null) {
                    return reentered;
                }
            }
            // every local waiter in the store's queue (fair locks; stores whose queue is the only order)
            boolean queued = lock.fair || (queueOrdered && handOffs == null);
            boolean mayWait = waitNanos > 0;
            long deadline = start + waitNanos;
            long nextTryAt = start;
            Backoff backoff = null;
            boolean subscribed = false;
            boolean notifies = true;
            Waiter w = null;
            int wakeUpsBefore = 0;
            for (; ; ) {
                boolean attempt;
                boolean queueAttempt = false;
                // whether this waiter is the one that talks to the store now, so its retry time matters
                boolean competing = false;
                s.mutex.lock();
                try {
                    if (closed()) {
                        if (w != null) {
                            s.waiters.remove(w);
                        }
                        throw closedException();
                    }
                    if (w != null && w.status == Waiter.Status.GRANTED) {
                        HoldImpl grant = Objects.requireNonNull(w.grant);
                        if (w.grantedByStore) {
                            metrics.acquired(lock.name(), ticker.read() - start);
                            lock.fireAcquired(grant.fencingToken);
                        }
                        return grant;
                    }
                    long now = ticker.read();
                    if (w != null && w.status == Waiter.Status.CLAIMED) {
                        attempt = false;
                    } else if (queued) {
                        competing = true;
                        attempt = w == null || w.signalled || now - nextTryAt >= 0;
                    } else {
                        HoldImpl holder = s.holder;
                        if (w == null && holder != null && !mayWait) {
                            metrics.notAcquired(lock.name(), 0);
                            return null; // another owner of this client holds it: no round trip needed
                        }
                        // a newcomer that may wait does not barge past this client's own waiters: the first of
                        // them is woken to try (a barging newcomer would only make its attempt fail and queue again)
                        Waiter first = s.firstLocal();
                        competing = holder == null
                                && (w == null ? first == null || !mayWait : w.inStoreQueue || first == w);
                        attempt = competing && (w == null || w.signalled || now - nextTryAt >= 0);
                    }
                    if (attempt) {
                        s.attemptsInFlight++;
                        wakeUpsBefore = s.wakeUps;
                    }
                    if (w != null) {
                        // consumed here; a signal after this point leaves an unpark permit, so none is missed
                        w.signalled = false;
                        // a release must not hand the lock to a waiter whose own attempt is on its way to the store
                        w.attempting = attempt;
                        if (attempt && mayWait && (queued || queueOrdered)) {
                            queueAttempt = true;
                            w.inStoreQueue |= !queued; // from now on it has a place to give back
                        }
                    }
                } finally {
                    s.mutex.unlock();
                }

                if (attempt) {
                    Lease lease = fixedLease != null ? Lease.fixed(fixedLease) : renewedLease;
                    long sent = ticker.read();
                    Attempt result;
                    try {
                        if (!subscribed && (w != null || (mayWait && recentlyBusy(lock.name())))) {
                            notifies = subscribe(s);
                            subscribed = true;
                        }
                        sent = ticker.read();
                        result = store.tryAcquire(
                                Claim.lock(s.key, owner, lease, spareTokens), queueAttempt || (queued && mayWait));
                    } catch (RuntimeException e) {
                        attemptDone(s);
                        leave(s, w);
                        abandonQuietly(s.key, owner, lease); // the grant may have happened with its answer lost
                        if (interruptible && interruptedBy(e)) {
                            InterruptedException ie = new InterruptedException(
                                    "interrupted while asking the store for lock '" + lock.name() + "'");
                            ie.initCause(e);
                            throw ie;
                        }
                        throw storeFailure("acquire", s.key, e);
                    }
                    attemptDone(s);
                    if (result instanceof Attempt.Acquired acquired) {
                        HoldImpl h = new HoldImpl(
                                engine,
                                s,
                                lock,
                                owner,
                                threadView,
                                acquired.fencingToken(),
                                fixedLease,
                                sent,
                                lease.length().toNanos(),
                                acquired.spareTokens());
                        install(s, w, h);
                        metrics.acquired(lock.name(), ticker.read() - start);
                        lock.fireAcquired(h.fencingToken);
                        return h;
                    }
                    if (!mayWait) {
                        metrics.notAcquired(lock.name(), 0);
                        return null;
                    }
                    if (w != null) {
                        endAttempt(s, w);
                    }
                    long retry = Math.max(MIN_RETRY_NANOS, nanos(((Attempt.Busy) result).retryWithin()));
                    if (w != null && !notifies) {
                        if (backoff == null) {
                            backoff = new Backoff(POLL_BASE_NANOS, POLL_CAP_NANOS);
                        }
                        retry = Math.min(retry, backoff.nextNanos());
                    }
                    nextTryAt = ticker.read() + retry;
                    noteBusy(lock.name());
                    if (w == null) {
                        // subscribe, then re-check at once; an attempt made while subscribed was that re-check,
                        // unless a wake-up came while it was on its way (it found no waiter to wake)
                        w = join(s, lock, owner, threadView, fixedLease, queued, subscribed ? wakeUpsBefore : JOIN_TRY);
                        continue;
                    }
                } else if (w == null) {
                    // a local owner holds the lock: wait for its release without asking the store
                    w = join(s, lock, owner, threadView, fixedLease, queued, JOIN_QUIET);
                    continue;
                }

                long now = ticker.read();
                if (now - deadline >= 0) {
                    HoldImpl granted = giveUp(s, w, false);
                    if (granted == null) {
                        metrics.notAcquired(lock.name(), now - start);
                    }
                    return granted;
                }
                long parkNanos = competing ? Math.min(deadline - now, Math.max(0, nextTryAt - now)) : deadline - now;
                if (!w.signalled && parkNanos > 0) {
                    LockSupport.parkNanos(this, parkNanos);
                }
                if (Thread.interrupted()) {
                    if (interruptible) {
                        var unused = giveUp(s, w, true);
                        throw new InterruptedException("interrupted while waiting for lock '" + lock.name() + "'");
                    }
                    interrupted = true;
                }
            }
        } finally {
            exit(s);
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private @Nullable HoldImpl reenter(LockState s, OwnerId owner) {
        HoldImpl expired = null;
        s.mutex.lock();
        try {
            HoldImpl h = s.holder;
            if (h != null && h.owner.equals(owner)) {
                if (h.isValid()) {
                    h.count++;
                    return h;
                }
                expired = h;
            }
            var unused = s.removeLost(owner);
        } finally {
            s.mutex.unlock();
        }
        if (expired != null) {
            leases.markLost(expired, null);
            s.mutex.lock();
            try {
                var unused = s.removeLost(owner);
            } finally {
                s.mutex.unlock();
            }
        }
        return null;
    }

    /**
     * Whether an attempt for {@code name} was busy a moment ago (within RECENTLY_BUSY_NANOS), so that an acquire that
     * may wait subscribes before its first attempt; only for stores that subscribe freely.
     */
    private boolean recentlyBusy(String name) {
        if (!freeSubscriptions) {
            return false;
        }
        Long at = recentlyBusy.get(name);
        return at != null && ticker.read() - at < RECENTLY_BUSY_NANOS;
    }

    private void noteBusy(String name) {
        if (!freeSubscriptions) {
            return;
        }
        long now = ticker.read();
        recentlyBusy.put(name, now);
        if (recentlyBusy.size() > RECENTLY_BUSY_MAX) {
            recentlyBusy.values().removeIf(at -> now - at >= RECENTLY_BUSY_NANOS);
            if (recentlyBusy.size() > RECENTLY_BUSY_MAX) {
                recentlyBusy.clear();
            }
        }
    }

    private static void attemptDone(LockState s) {
        s.mutex.lock();
        try {
            s.attemptsInFlight--;
        } finally {
            s.mutex.unlock();
        }
    }

    private static void endAttempt(LockState s, Waiter w) {
        s.mutex.lock();
        try {
            w.attempting = false;
        } finally {
            s.mutex.unlock();
        }
    }

    private Waiter join(
            LockState s,
            EngineLock lock,
            OwnerId owner,
            boolean threadView,
            @Nullable Duration fixedLease,
            boolean queued,
            int wakeUpsSeen) {
        Waiter w = new Waiter(lock, owner, threadView, fixedLease, queued);
        s.mutex.lock();
        try {
            s.waiters.addLast(w);
            // JOIN_TRY: it tries at once; JOIN_QUIET: it waits; else it tries at once if a wake-up came since
            // wakeUpsSeen (it found no waiter to wake)
            w.signalled = wakeUpsSeen == JOIN_TRY || (wakeUpsSeen != JOIN_QUIET && s.wakeUps != wakeUpsSeen);
        } finally {
            s.mutex.unlock();
        }
        return w;
    }

    private void leave(LockState s, @Nullable Waiter w) {
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

    private void install(LockState s, @Nullable Waiter w, HoldImpl h) {
        HoldImpl replaced;
        s.mutex.lock();
        try {
            if (w != null) {
                s.waiters.remove(w);
            }
            replaced = s.holder;
            s.holder = h;
            s.handOffStreak = 0;
        } finally {
            s.mutex.unlock();
        }
        leases.activate(h);
        if (replaced != null) {
            // the store granted us the lock, so the hold we knew of has ended without our noticing yet
            leases.markLost(replaced, null);
        }
    }

    /** Ends a wait. Returns a grant the waiter keeps (timeout during a hand-off); null otherwise. */
    private @Nullable HoldImpl giveUp(LockState s, Waiter w, boolean interrupted) {
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
            try {
                release(grant);
            } catch (RuntimeException e) {
                log.warn("distlock: releasing '{}' after an interrupted wait failed", s.key, e);
            }
            return null;
        }
        return grant;
    }

    private boolean subscribe(LockState s) {
        s.subscribeLock.lock();
        try {
            Subscription sub = s.subscription;
            if (sub == null) {
                GrantsWithWakeUp g = grants;
                sub = call(
                        "subscribe",
                        s.key,
                        () -> g != null
                                ? g.subscribe(s.key, () -> onWake(s), grant -> onGrant(s, grant))
                                : store.subscribe(s.key, () -> onWake(s)));
                s.subscription = sub;
            }
            return sub.notifies();
        } finally {
            s.subscribeLock.unlock();
        }
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
            if (closed() || s.removed || s.holder != null || s.attemptsInFlight > 0) {
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

    private void abandonQuietly(LockKey key, OwnerId owner, Lease lease) {
        try {
            store.abandon(Claim.lock(key, owner, lease, 0));
        } catch (RuntimeException e) {
            log.warn("distlock: could not clean up after '{}' for {}; it expires with its lease", key, owner, e);
        }
    }

    private static long nanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return FOREVER;
        }
    }

    private boolean closed() {
        return engine.isClosed();
    }

    private IllegalStateException closedException() {
        return engine.closedException();
    }

    private void ensureOpen() {
        engine.ensureOpen();
    }

    private LockState enter(String name) {
        return engine.enter(name);
    }

    private void exit(LockState s) {
        engine.exit(s);
    }

    private OwnerId threadOwner() {
        return engine.threadOwner();
    }

    private void release(HoldImpl h) {
        engine.release(h);
    }
}
