package io.distlock.internal;

import io.distlock.DistributedCountDownLatch;
import io.distlock.DistributedLock;
import io.distlock.DistributedLockException;
import io.distlock.DistributedReadWriteLock;
import io.distlock.DistributedSemaphore;
import io.distlock.LockAdmin;
import io.distlock.LockClient;
import io.distlock.spi.Attempt;
import io.distlock.spi.ClaimAdmin;
import io.distlock.spi.ClaimStore;
import io.distlock.spi.CounterStore;
import io.distlock.spi.FreeSubscriptions;
import io.distlock.spi.Grant;
import io.distlock.spi.GrantsWithWakeUp;
import io.distlock.spi.HandOff;
import io.distlock.spi.HandsOff;
import io.distlock.spi.HeldLock;
import io.distlock.spi.Lease;
import io.distlock.spi.LockKey;
import io.distlock.spi.LockStore;
import io.distlock.spi.OwnerId;
import io.distlock.spi.QueueOrdered;
import io.distlock.spi.ReportsLoss;
import io.distlock.spi.SessionHolds;
import io.distlock.spi.Subscription;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * The engine is the one implementation of the lock contract; a backend supplies only a LockStore, whose methods are
 * single round trips that never wait (the AQS shape: the store is tryAcquire/tryRelease, the engine is the rest).
 *
 * Per client and lock name there is one LockState: the local holder (an owner of this client that holds the lock),
 * the local waiters, and one store subscription shared by them. LockState.mutex guards it and is never held across a
 * round trip, so a store's I/O thread that delivers a wake-up can always take it.
 *
 * Owners. A thread's hold through the Lock view is owned by "<clientId>:t<threadId>" and counts re-entries in the
 * client, so a re-entrant acquire costs no round trip and the store sees one hold per owner. A LockHold is owned by
 * "<clientId>:h<n>" and may be released by any thread.
 *
 * Waiting, non-queued (plain locks on stores that do not queue every waiter). A new acquirer barges: one attempt
 * unless a local owner holds the lock or, for an acquire that may wait, a local waiter is already there (the first
 * local waiter is the one woken to try). Then it joins the local queue. Only the first local waiter talks to the store:
 * it subscribes, re-checks (so a release between its failed attempt and the subscription is not missed), and sleeps
 * until a wake-up or the holder's remaining lease, whichever is first. On a store that subscribes freely (FreeSubscriptions), an
 * acquire that may wait for a name that was busy for this client within the last second subscribes before its first
 * attempt, which then is that re-check (so the store can register the client as waiting with its first attempt).
 * A wake-up (store notification, local release, lost local hold) wakes that one waiter. When a local owner releases and a local waiter exists, the lock is handed
 * over in one round trip with a fresh fencing token (LockStore.handOff), at most handOffLimit times in a row so other
 * clients get their turn. When the store reserved spare tokens with the acquisition (Attempt.Acquired.spareTokens),
 * the hand-off is a succession instead: no round trip, the next spare token, the store keeps the hold under the
 * acquiring owner's id (HoldImpl.storeOwner), and the successor inherits the lease the watchdog last confirmed; holds
 * with a fixed lease never take part, since their lease must start at their own grant.
 *
 * Grants with the wake-up. A store may give the lock straight to a waiting client and say so with the wake-up
 * (LockStore.subscribe with a Grant taker; Redis does). The first local waiter that may take a hold as it is
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
 * Leases: holds without a lease argument are renewed by the Watchdog; holds with one get a scheduled expiry that
 * marks them lost when the lease ends (and releases them in stores that keep no lease themselves).
 */
/**
 * The shared implementation of {@link LockClient} over a {@link LockStore}. A backend's public client delegates to
 * it; see the overview comment in the source for the algorithm.
 */
public final class LockEngine implements LockClient, Watchdog.Engine<HoldImpl, HeldLock> {
    private static final Logger log = LoggerFactory.getLogger(LockEngine.class);
    private static final long FOREVER = Long.MAX_VALUE / 4;
    private static final long MIN_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long POLL_BASE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    private static final long POLL_CAP_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    private static final int JOIN_TRY = -1;
    private static final int JOIN_QUIET = -2;
    private static final long RECENTLY_BUSY_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final int RECENTLY_BUSY_MAX = 4096;

    private final LockStore store;
    /** The store's abilities, discovered once. */
    private final @Nullable HandsOff handOffs;

    private final @Nullable GrantsWithWakeUp grants;
    private final @Nullable SessionHolds sessionHolds;
    private final boolean queueOrdered;
    private final boolean freeSubscriptions;
    /** The lease of holds the watchdog renews. */
    private final Lease renewedLease;

    private final EngineConfig config;
    private final String clientId;
    private final Ticker ticker;
    private final LockMetrics metrics;
    private final ScheduledThreadPoolExecutor scheduler;
    private final Watchdog<HoldImpl, HeldLock> watchdog;
    private final ConcurrentHashMap<String, LockState> states = new ConcurrentHashMap<>();
    private final AtomicLong holdIds = new AtomicLong();
    private final ThreadLocal<OwnerId> threadOwners;
    private final long watchdogTickNanos;
    /** Name -> when an attempt for it was last busy; see {@link #recentlyBusy}. Bounded by RECENTLY_BUSY_MAX. */
    private final ConcurrentHashMap<String, Long> recentlyBusy = new ConcurrentHashMap<>();

    private final @Nullable ClaimEngine claims;
    private final @Nullable CounterStore counters;
    private final AtomicLong callIds = new AtomicLong();
    private final EngineAdmin admin;

    private volatile boolean closed;

    private LockEngine(
            LockStore store, @Nullable ClaimStore claimStore, @Nullable CounterStore counters, EngineConfig config) {
        this.store = Objects.requireNonNull(store, "store");
        this.config = Objects.requireNonNull(config, "config");
        this.handOffs = store instanceof HandsOff h ? h : null;
        this.grants = store instanceof GrantsWithWakeUp g ? g : null;
        this.sessionHolds = store instanceof SessionHolds sh ? sh : null;
        this.queueOrdered = store instanceof QueueOrdered;
        this.freeSubscriptions = store instanceof FreeSubscriptions;
        this.renewedLease = Lease.renewed(config.watchdogLease());
        this.clientId = config.clientId();
        String id = clientId;
        this.threadOwners = ThreadLocal.withInitial(() -> new OwnerId(id + ":t" + threadId(Thread.currentThread())));
        this.ticker = config.ticker();
        this.metrics = config.metrics();
        this.scheduler = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "distlock-watchdog-" + clientId);
            t.setDaemon(true);
            return t;
        });
        scheduler.setRemoveOnCancelPolicy(true);
        this.watchdog = new Watchdog<>(this, ticker, config.watchdogLease());
        this.claims = claimStore == null ? null : new ClaimEngine(this, claimStore, config, scheduler);
        this.counters = counters;
        this.admin = new EngineAdmin(store, claimStore instanceof ClaimAdmin a ? a : null);
        long tick = Math.max(1, config.watchdogLease().toNanos() / 3);
        this.watchdogTickNanos = tick;
        scheduler.scheduleWithFixedDelay(this::tickWatchdogs, tick, tick, TimeUnit.NANOSECONDS);
        if (store instanceof ReportsLoss reports) {
            reports.onPossibleLoss(() -> {
                try {
                    scheduler.execute(this::tickWatchdogs);
                } catch (java.util.concurrent.RejectedExecutionException e) {
                    // closing: nothing left to check
                }
            });
        }
    }

    /**
     * Starts an engine over {@code store}, for a backend without read-write locks, semaphores and latches yet: those
     * throw {@link UnsupportedOperationException} naming the backend. Closing the engine closes the store.
     */
    public static LockEngine create(LockStore store, EngineConfig config) {
        return new LockEngine(store, null, null, config);
    }

    /**
     * Starts an engine over the stores of a backend with every primitive: locks over {@code store}, read-write locks
     * and semaphores over {@code claims}, count-down latches over {@code counters}. Closing the engine closes them.
     */
    public static LockEngine create(LockStore store, ClaimStore claims, CounterStore counters, EngineConfig config) {
        return new LockEngine(
                store, Objects.requireNonNull(claims, "claims"), Objects.requireNonNull(counters, "counters"), config);
    }

    private void tickWatchdogs() {
        watchdog.tick();
        ClaimEngine c = claims;
        if (c != null) {
            c.tick();
        }
    }

    // ---------------------------------------------------------------- LockClient

    @Override
    public DistributedLock lock(String name) {
        ensureOpen();
        return new EngineLock(this, Checks.name(name), false);
    }

    @Override
    public DistributedLock fairLock(String name) {
        ensureOpen();
        return new EngineLock(this, Checks.name(name), true);
    }

    @Override
    public DistributedReadWriteLock readWriteLock(String name) {
        ensureOpen();
        return new EngineReadWriteLock(this, claims("read-write locks"), Checks.name(name));
    }

    @Override
    public DistributedSemaphore semaphore(String name, int permits) {
        ensureOpen();
        String checked = Checks.name(name);
        if (permits < 1) {
            throw new IllegalArgumentException("permits must be positive: " + permits);
        }
        return new EngineSemaphore(this, claims("semaphores"), checked, permits);
    }

    @Override
    public DistributedCountDownLatch countDownLatch(String name) {
        ensureOpen();
        String checked = Checks.name(name);
        CounterStore c = counters;
        if (c == null) {
            throw unsupported("count-down latches");
        }
        return new EngineLatch(this, c, checked, config.latchExpiry(), ticker);
    }

    private ClaimEngine claims(String what) {
        ClaimEngine c = claims;
        if (c == null) {
            throw unsupported(what);
        }
        return c;
    }

    private UnsupportedOperationException unsupported(String what) {
        return new UnsupportedOperationException(what + " are not available on this backend yet ("
                + store.getClass().getSimpleName() + ")");
    }

    @Override
    public String clientId() {
        return clientId;
    }

    @Override
    public LockAdmin admin() {
        return admin;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        scheduler.shutdownNow();
        List<HoldImpl> held = new ArrayList<>();
        List<Subscription> subscriptions = new ArrayList<>();
        for (LockState s : states.values()) {
            s.mutex.lock();
            try {
                for (Waiter w : s.waiters) {
                    w.signal();
                }
                HoldImpl h = s.holder;
                if (h != null) {
                    held.add(h);
                }
            } finally {
                s.mutex.unlock();
            }
            s.subscribeLock.lock();
            try {
                Subscription sub = s.subscription;
                if (sub != null) {
                    subscriptions.add(sub);
                    s.subscription = null;
                }
            } finally {
                s.subscribeLock.unlock();
            }
        }
        for (HoldImpl h : held) {
            if (h.finish(HoldImpl.RELEASED)) {
                try {
                    var unused = store.release(h.state.key, h.storeOwner);
                } catch (RuntimeException e) {
                    log.warn("distlock: could not release '{}' on close; it expires with its lease", h.name(), e);
                }
            }
        }
        for (Subscription sub : subscriptions) {
            closeQuietly(sub);
        }
        ClaimEngine c = claims;
        if (c != null) {
            c.close();
        }
        CounterStore counterStore = counters;
        if (counterStore != null) {
            try {
                counterStore.close();
            } catch (RuntimeException e) {
                log.warn("distlock: closing the counter store failed", e);
            }
        }
        try {
            store.close();
        } catch (RuntimeException e) {
            log.warn("distlock: closing the store failed", e);
        }
    }

    @Override
    public String toString() {
        return "LockEngine[" + clientId + ", " + store + "]";
    }

    // ---------------------------------------------------------------- for EngineLock and HoldImpl

    Ticker ticker() {
        return ticker;
    }

    /** The calling thread's owner id, made once per thread (thread ids are never reused). */
    OwnerId threadOwner() {
        return threadOwners.get();
    }

    /** A fresh id for one call that a store must count at most once (a latch's count-down). */
    String newCallId() {
        return clientId + ":c" + callIds.incrementAndGet();
    }

    OwnerId newHoldOwner() {
        return new OwnerId(clientId + ":h" + holdIds.incrementAndGet());
    }

    @SuppressWarnings("deprecation") // Thread.threadId() is Java 19+; getId() is the same number on 17
    private static long threadId(Thread t) {
        return t.getId();
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
                    if (closed) {
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
                        result = store.tryAcquire(s.key, owner, lease, queueAttempt || (queued && mayWait));
                    } catch (RuntimeException e) {
                        attemptDone(s);
                        leave(s, w);
                        abandonQuietly(s.key, owner); // the grant may have happened with its answer lost
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
                                this,
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
            markLost(expired, null);
            s.mutex.lock();
            try {
                var unused = s.removeLost(owner);
            } finally {
                s.mutex.unlock();
            }
        }
        return null;
    }

    /** Whether a store call failed because the calling thread was interrupted. */
    static boolean interruptedBy(RuntimeException e) {
        if (Thread.interrupted()) {
            return true;
        }
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof InterruptedException) {
                return true;
            }
        }
        return false;
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
        activate(h);
        if (replaced != null) {
            // the store granted us the lock, so the hold we knew of has ended without our noticing yet
            markLost(replaced, null);
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
                abandonQuietly(s.key, w.owner);
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
            if (closed || s.removed || s.holder != null || s.attemptsInFlight > 0) {
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
            h = HoldImpl.ofStoreGrant(this, s, taker.lock, taker.owner, taker.threadView, g, now, now + left);
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
        activate(h);
        return true;
    }

    void unlockThread(EngineLock lock) {
        OwnerId owner = threadOwner();
        LockState s = enter(lock.name());
        HoldImpl h;
        try {
            s.mutex.lock();
            try {
                h = s.holder;
                if (h == null || !h.owner.equals(owner)) {
                    HoldImpl lost = s.removeLost(owner);
                    if (lost != null) {
                        throw lost.lostException();
                    }
                    throw new IllegalMonitorStateException(
                            "the current thread does not hold lock '" + lock.name() + "'");
                }
                if (h.count > 1) {
                    h.count--;
                    return;
                }
            } finally {
                s.mutex.unlock();
            }
            release(h);
        } finally {
            exit(s);
        }
    }

    void release(HoldImpl h) {
        LockState s = h.state;
        s.mutex.lock();
        try {
            s.users++;
        } finally {
            s.mutex.unlock();
        }
        try {
            releaseEntered(h);
        } finally {
            exit(s);
        }
    }

    private void releaseEntered(HoldImpl h) {
        LockState s = h.state;
        if (h.isLost()) {
            throw h.lostException();
        }
        stopRenewal(h); // from here on no renewal of this hold runs
        if (!h.finish(HoldImpl.RELEASED)) {
            if (h.isLost()) {
                throw h.lostException();
            }
            throw new IllegalMonitorStateException("lock '" + h.name() + "' was already released by this hold");
        }
        metrics.released(h.name(), ticker.read() - h.acquiredAt);
        Waiter next = null;
        HoldImpl successor = null;
        s.mutex.lock();
        try {
            // a store whose queue is the order answers "queued" when another client waits: no streak limit needed
            boolean streakAllowed = queueOrdered || s.handOffStreak < config.handOffLimit();
            if (handOffs != null && streakAllowed && s.holder == h) {
                next = s.firstLocal();
                if (next != null && next.attempting) {
                    next = null; // its own attempt may already be granted; release through the store instead
                }
                if (next != null && h.hasSpareToken() && next.fixedLease == null && !next.inStoreQueue) {
                    // a succession: the store keeps the hold under the acquiring owner and reserved the next token
                    // (on a store whose queue is the order it passes that queue, but only until the spare tokens
                    // run out: the hand-off after them respects it)
                    successor = new HoldImpl(h, next.lock, next.owner, next.threadView, ticker.read());
                    s.waiters.remove(next);
                    s.handOffStreak++;
                    s.holder = successor;
                    next.grant = successor;
                    next.status = Waiter.Status.GRANTED;
                    next.signal();
                } else if (next != null) {
                    next.status = Waiter.Status.CLAIMED;
                    s.waiters.remove(next);
                    s.handOffStreak++;
                }
            }
            if (next == null) {
                s.handOffStreak = 0;
            }
        } finally {
            s.mutex.unlock();
        }
        if (successor != null) {
            activate(successor);
            metrics.handedOff(s.key.name());
            metrics.acquired(s.key.name(), 0);
            h.lock.fireReleased(h.fencingToken);
            successor.lock.fireAcquired(successor.fencingToken);
            return;
        }
        if (next != null) {
            handOff(s, h, next);
            return;
        }
        boolean released;
        try {
            released = store.release(s.key, h.storeOwner);
        } catch (RuntimeException e) {
            clearHolder(s, h);
            throw storeFailure("release", s.key, e);
        }
        clearHolder(s, h);
        if (!released) {
            metrics.lost(h.name());
            h.lock.fireLost(h.fencingToken, null);
            throw h.lostException();
        }
        h.lock.fireReleased(h.fencingToken);
    }

    private void handOff(LockState s, HoldImpl from, Waiter to) {
        Lease lease = to.fixedLease != null ? Lease.fixed(to.fixedLease) : renewedLease;
        long sent = ticker.read();
        HandOff answer;
        RuntimeException failure = null;
        try {
            HandsOff h = Objects.requireNonNull(handOffs, "a hand-off without the ability");
            answer = Objects.requireNonNull(h.handOff(s.key, from.storeOwner, to.owner, lease), "handOff answer");
        } catch (RuntimeException e) {
            answer = HandOff.notHeld();
            failure = e;
        }
        HoldImpl granted = null;
        if (answer instanceof HandOff.Granted g) {
            granted = new HoldImpl(
                    this,
                    s,
                    to.lock,
                    to.owner,
                    to.threadView,
                    g.fencingToken(),
                    to.fixedLease,
                    sent,
                    lease.length().toNanos(),
                    g.spareTokens());
            activate(granted);
        }
        boolean queued = answer == HandOff.queued();
        s.mutex.lock();
        try {
            if (granted != null) {
                s.holder = granted;
                to.grant = granted;
                to.status = Waiter.Status.GRANTED;
                to.signal();
            } else {
                if (s.holder == from) {
                    s.holder = null;
                }
                to.status = Waiter.Status.WAITING;
                // queued: the store put it behind owners of other clients; it waits there and gives the place back
                // if it gives up (a failed round trip may have queued it too, without our knowing)
                to.inStoreQueue |= queued || (failure != null && queueOrdered);
                s.waiters.addFirst(to);
                s.signalWaiters();
            }
        } finally {
            s.mutex.unlock();
        }
        if (granted != null) {
            metrics.handedOff(s.key.name());
            metrics.acquired(s.key.name(), 0);
            from.lock.fireReleased(from.fencingToken);
            to.lock.fireAcquired(granted.fencingToken);
            return;
        }
        if (queued) {
            from.lock.fireReleased(from.fencingToken);
            return;
        }
        if (failure != null) {
            throw storeFailure("release", s.key, failure);
        }
        metrics.lost(from.name());
        from.lock.fireLost(from.fencingToken, null);
        throw from.lostException();
    }

    private void clearHolder(LockState s, HoldImpl h) {
        s.mutex.lock();
        try {
            if (s.holder == h) {
                s.holder = null;
                s.signalWaiters();
            }
        } finally {
            s.mutex.unlock();
        }
    }

    @Override
    public Set<HeldLock> renew(Collection<HeldLock> holds, Duration lease) {
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

    private void activate(HoldImpl h) {
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

    private void stopRenewal(HoldImpl h) {
        ScheduledFuture<?> f = h.expiry;
        if (f != null) {
            f.cancel(false);
        }
        if (h.fixedLease == null) {
            watchdog.remove(h);
        }
    }

    @Nullable
    HoldImpl threadHold(EngineLock lock) {
        LockState s = states.get(lock.name());
        if (s == null) {
            return null;
        }
        OwnerId owner = threadOwner();
        s.mutex.lock();
        try {
            HoldImpl h = s.holder;
            return h != null && h.owner.equals(owner) && h.isActive() ? h : null;
        } finally {
            s.mutex.unlock();
        }
    }

    int threadHoldCount(EngineLock lock) {
        LockState s = states.get(lock.name());
        if (s == null) {
            return 0;
        }
        OwnerId owner = threadOwner();
        s.mutex.lock();
        try {
            HoldImpl h = s.holder;
            return h != null && h.owner.equals(owner) && h.isValid() ? h.count : 0;
        } finally {
            s.mutex.unlock();
        }
    }

    boolean isLocked(EngineLock lock) {
        LockState s = states.get(lock.name());
        if (s != null) {
            s.mutex.lock();
            try {
                HoldImpl h = s.holder;
                if (h != null && h.isValid()) {
                    return true;
                }
            } finally {
                s.mutex.unlock();
            }
        }
        LockKey key = new LockKey(lock.name());
        return call("isLocked", key, () -> store.inspect(key)).isPresent();
    }

    /** Runs one watchdog tick now; for tests that drive time by hand. */
    void tickWatchdog() {
        watchdog.tick();
    }

    int watchdogSize() {
        return watchdog.size();
    }

    int stateCount() {
        return states.size();
    }

    // ---------------------------------------------------------------- state lifecycle

    private LockState enter(String name) {
        for (; ; ) {
            LockState s = states.computeIfAbsent(name, n -> new LockState(new LockKey(n)));
            s.mutex.lock();
            try {
                if (!s.removed) {
                    s.users++;
                    return s;
                }
            } finally {
                s.mutex.unlock();
            }
        }
    }

    private void exit(LockState s) {
        Subscription dropped;
        s.mutex.lock();
        try {
            s.users--;
            dropped = dropIfIdle(s);
        } finally {
            s.mutex.unlock();
        }
        if (dropped != null) {
            closeQuietly(dropped);
        }
    }

    /** Forgets a name nobody uses any more, after a hold ended outside any acquire or release (watchdog). */
    private void settle(LockState s) {
        Subscription dropped;
        s.mutex.lock();
        try {
            dropped = dropIfIdle(s);
        } finally {
            s.mutex.unlock();
        }
        if (dropped != null) {
            closeQuietly(dropped);
        }
    }

    /** Caller holds the mutex; returns the subscription to close outside it. */
    private @Nullable Subscription dropIfIdle(LockState s) {
        if (s.removed || !s.idle()) {
            return null;
        }
        s.removed = true;
        states.remove(s.key.name(), s);
        Subscription dropped = s.subscription;
        s.subscription = null;
        return dropped;
    }

    // ---------------------------------------------------------------- helpers

    void ensureOpen() {
        if (closed) {
            throw closedException();
        }
    }

    private IllegalStateException closedException() {
        return new IllegalStateException("lock client " + clientId + " is closed");
    }

    private void abandonHoldQuietly(HoldImpl h) {
        try {
            Objects.requireNonNull(sessionHolds, "no session holds").abandonHold(h.heldLock());
        } catch (RuntimeException e) {
            log.warn(
                    "distlock: could not clean up after lost '{}' for {}; it expires with its lease",
                    h.name(),
                    h.owner,
                    e);
        }
    }

    private void abandonQuietly(LockKey key, OwnerId owner) {
        try {
            store.abandon(key, owner);
        } catch (RuntimeException e) {
            log.warn("distlock: could not clean up after '{}' for {}; it expires with its lease", key, owner, e);
        }
    }

    static void closeQuietly(Subscription sub) {
        try {
            sub.close();
        } catch (RuntimeException e) {
            log.debug("distlock: closing a subscription failed", e);
        }
    }

    private static long nanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return FOREVER;
        }
    }

    interface StoreCall<T> {
        T run();
    }

    static <T> T call(String operation, LockKey key, StoreCall<T> call) {
        try {
            return call.run();
        } catch (RuntimeException e) {
            throw storeFailure(operation, key, e);
        }
    }

    static RuntimeException storeFailure(String operation, LockKey key, RuntimeException e) {
        if (e instanceof DistributedLockException
                || e instanceof IllegalArgumentException
                || e instanceof IllegalStateException) {
            return e;
        }
        return new DistributedLockException(operation + " of lock '" + abbreviate(key.name()) + "' failed: " + e, e);
    }

    private static String abbreviate(String name) {
        return name.length() <= 200 ? name : name.substring(0, 200) + "…";
    }
}
