package io.distlock.internal;

import static io.distlock.internal.StoreCalls.interruptedBy;
import static io.distlock.internal.StoreCalls.storeFailure;

import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.ClaimStore;
import io.distlock.spi.FreeSubscriptions;
import io.distlock.spi.HandsOff;
import io.distlock.spi.Lease;
import io.distlock.spi.Mode;
import io.distlock.spi.OwnerId;
import io.distlock.spi.QueueOrdered;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * Barging and the local queue
 *   A new acquirer makes one attempt unless a local owner holds the lock or, for an acquire that may wait, a local
 *   waiter is already there (the first local waiter is the one woken to try). Then it joins the local queue
 *   (LockWaiters). Only the first local waiter talks to the store: it subscribes, re-checks (so a release between its
 *   failed attempt and the subscription is not missed), and sleeps until a wake-up or the holder's remaining lease,
 *   whichever is first; a store that cannot notify is polled with jittered back-off.
 *
 * Subscribing early
 *   On a store that subscribes freely (FreeSubscriptions), an acquire that may wait for a name that was busy for this
 *   client within the last second subscribes before its first attempt, which then is that re-check (so the store can
 *   register the client as waiting with its first attempt).
 *
 * Waiting on a store whose queue is the order
 *   On a QueueOrdered store that HandsOff (ZooKeeper, etcd), a non-fair lock works as above, but the first local
 *   waiter's attempts queue in the store: it keeps the client's place there and gives it back if it gives up. The
 *   releaser's hand-offs then never pass another client's queued waiter (see LockReleaser).
 *
 * Queued waiting
 *   Fair locks, and locks on stores whose holds are queue positions: every waiter joins the store's queue with its own
 *   owner id and is granted in the store's order; every wake-up wakes all local queued waiters, each of which
 *   re-checks its position.
 *
 * Attempts in flight
 *   While an attempt is on its way, LockState.attemptsInFlight counts it and its waiter is marked attempting: a release
 *   hands nothing to that waiter and a grant with the wake-up is refused, since the attempt may take the hold itself.
 *   An attempt that fails in transit abandons its claim, so a grant whose answer was lost does not stay unowned.
 */
/** The acquire half of a {@link LockEngine}: re-entry, the attempt loop and its timing; waiting is {@link LockWaiters}. */
final class LockAcquirer {
    private static final long FOREVER = Long.MAX_VALUE / 4;
    private static final long MIN_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long POLL_BASE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    private static final long POLL_CAP_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    private static final long RECENTLY_BUSY_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final int RECENTLY_BUSY_MAX = 4096;

    private final LockEngine engine;
    private final NameStates<HoldImpl, LockState> states;
    private final ClaimStore store;
    private final @Nullable HandsOff handOffs;
    private final LockWaiters waiters;
    private final boolean queueOrdered;
    private final boolean freeSubscriptions;
    private final Lease renewedLease;
    private final int spareTokens;
    private final Ticker ticker;
    private final LockMetrics metrics;
    private final LockLeases leases;
    /** Name -> when an attempt for it was last busy; see {@link #recentlyBusy}. Bounded by RECENTLY_BUSY_MAX. */
    private final ConcurrentHashMap<String, Long> recentlyBusy = new ConcurrentHashMap<>();

    LockAcquirer(
            LockEngine engine,
            NameStates<HoldImpl, LockState> states,
            ClaimStore store,
            EngineConfig config,
            LockLeases leases) {
        this.engine = engine;
        this.states = states;
        this.store = store;
        this.handOffs = store instanceof HandsOff h ? h : null;
        this.queueOrdered = store instanceof QueueOrdered;
        this.freeSubscriptions = store instanceof FreeSubscriptions;
        this.renewedLease = Lease.renewed(config.watchdogLease());
        this.spareTokens = config.handOffLimit();
        this.ticker = config.ticker();
        this.metrics = config.metrics();
        this.leases = leases;
        this.waiters = new LockWaiters(engine, store, config, leases);
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
        LockState s = states.enter(lock.name());
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
                            notifies = waiters.subscribe(s);
                            subscribed = true;
                        }
                        sent = ticker.read();
                        result = store.tryAcquire(
                                Claim.lock(s.key, owner, lease, spareTokens), queueAttempt || (queued && mayWait));
                    } catch (RuntimeException e) {
                        attemptDone(s);
                        waiters.leave(s, w);
                        waiters.abandonQuietly(s.key, owner, lease); // the grant may have happened with its answer lost
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
                        w = waiters.join(
                                s,
                                lock,
                                owner,
                                threadView,
                                fixedLease,
                                queued,
                                subscribed ? wakeUpsBefore : LockWaiters.JOIN_TRY);
                        continue;
                    }
                } else if (w == null) {
                    // a local owner holds the lock: wait for its release without asking the store
                    w = waiters.join(s, lock, owner, threadView, fixedLease, queued, LockWaiters.JOIN_QUIET);
                    continue;
                }

                long now = ticker.read();
                if (now - deadline >= 0) {
                    HoldImpl granted = waiters.giveUp(s, w, false);
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
                        var unused = waiters.giveUp(s, w, true);
                        throw new InterruptedException("interrupted while waiting for lock '" + lock.name() + "'");
                    }
                    interrupted = true;
                }
            }
        } finally {
            states.exit(s);
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
            var unused = s.takeLost(owner, Mode.EXCLUSIVE);
        } finally {
            s.mutex.unlock();
        }
        if (expired != null) {
            leases.forgetExpired(expired);
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

    private OwnerId threadOwner() {
        return engine.threadOwner();
    }
}
