package io.distlock.internal;

import static io.distlock.internal.StoreCalls.interruptedBy;
import static io.distlock.internal.StoreCalls.storeFailure;

import io.distlock.spi.AcquiresTogether;
import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.ClaimStore;
import io.distlock.spi.FreeSubscriptions;
import io.distlock.spi.HandsOff;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.Lease;
import io.distlock.spi.Mode;
import io.distlock.spi.OwnerId;
import io.distlock.spi.QueueOrdered;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
 *
 * Several names at once
 *   A multi-lock's members of this client are first tried together (tryTogether) when the store AcquiresTogether and
 *   none of the names has local state (no local holder, waiter or attempt in flight): one batched attempt, never
 *   queued, and the grants are installed as a single attempt installs its grant. Only the granted members before the
 *   first busy one (in the order given, the multi-lock's canonical order) are kept; the grants after it are released
 *   again at once, so the multi-lock waits for that member holding only members that come before it, as when it takes
 *   its members one by one.
 */
/** The acquire half of a {@link LockEngine}: re-entry, the attempt loop and its timing; waiting is {@link LockWaiters}. */
final class LockAcquirer {
    private static final Logger log = LoggerFactory.getLogger(LockAcquirer.class);
    static final long MIN_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    static final long POLL_BASE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    static final long POLL_CAP_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    private static final long RECENTLY_BUSY_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final int RECENTLY_BUSY_MAX = 4096;

    final LockEngine engine;
    final NameStates<HoldImpl, LockState> states;
    final ClaimStore store;
    final @Nullable HandsOff handOffs;
    final LockWaiters waiters;
    final boolean queueOrdered;
    private final boolean freeSubscriptions;
    final Lease renewedLease;
    final int spareTokens;
    final Ticker ticker;
    final LockMetrics metrics;
    private final LockLeases leases;
    /** Name -> when an attempt for it was last busy; see {@link #recentlyBusy}. Bounded by RECENTLY_BUSY_MAX. */
    private final ConcurrentHashMap<String, Long> recentlyBusy = new ConcurrentHashMap<>();

    LockAcquirer(LockEngine engine, EngineConfig config, LockLeases leases) {
        ClaimStore store = leases.store;
        this.engine = engine;
        this.states = leases.states;
        this.store = store;
        this.handOffs = store instanceof HandsOff h ? h : null;
        this.queueOrdered = store instanceof QueueOrdered;
        this.freeSubscriptions = store instanceof FreeSubscriptions;
        this.renewedLease = Lease.renewed(config.watchdogLease());
        this.spareTokens = config.handOffLimit();
        this.ticker = config.ticker();
        this.metrics = config.metrics();
        this.leases = leases;
        this.waiters = new LockWaiters(engine, config, leases);
    }

    /** Acquires {@code lock} as {@code call} asks; null when the wait ran out (or a wait of 0's one attempt was busy). */
    @Nullable
    HoldImpl acquire(EngineLock lock, AcquireCall call) throws InterruptedException {
        ensureOpen();
        long start = ticker.read();
        LockState s = states.enter(lock.name());
        boolean interrupted = false;
        try {
            if (call.threadView()) {
                HoldImpl reentered = reenter(s, call.owner());
                if (reentered != null) {
                    return reentered;
                }
            }
            LockAttempt run = new LockAttempt(this, lock, s, call, start, null);
            while (!run.step()) {
                Waiter w = Objects.requireNonNull(run.waiter());
                if (!w.signalled && run.waitNanos > 0) {
                    LockSupport.parkNanos(this, run.waitNanos);
                }
                if (Thread.interrupted()) {
                    if (call.interruptible()) {
                        var unused = run.giveUp(true);
                        throw new InterruptedException("interrupted while waiting for lock '" + lock.name() + "'");
                    }
                    interrupted = true;
                }
            }
            return run.result;
        } finally {
            states.exit(s);
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Tries {@code locks} (distinct names of this client, in the multi-lock's order) in one batched attempt, without
     * waiting or queueing, for the calling thread or for a fresh handle each. Returns null, having asked the store
     * nothing, when a name has local state; otherwise the holds of the members granted before the first busy one
     * (all of them when none was busy). Grants after the first busy member are released again.
     */
    @Nullable
    List<HoldImpl> tryTogether(
            AcquiresTogether batch,
            List<EngineLock> locks,
            boolean threadView,
            @Nullable Duration fixedLease,
            boolean interruptible)
            throws InterruptedException {
        ensureOpen();
        long start = ticker.read();
        int n = locks.size();
        List<LockState> entered = new ArrayList<>(n);
        int attempting = 0;
        try {
            OwnerId threadOwner = threadView ? engine.threadOwner() : null;
            for (EngineLock lock : locks) {
                LockState s = states.enter(lock.name());
                entered.add(s);
                s.mutex.lock();
                try {
                    if (s.holdsOrWaits() || s.attemptsInFlight > 0) {
                        return null;
                    }
                    s.attemptsInFlight++;
                    attempting++;
                } finally {
                    s.mutex.unlock();
                }
            }
            Lease lease = fixedLease != null ? Lease.fixed(fixedLease) : renewedLease;
            List<Claim> claims = new ArrayList<>(n);
            for (LockState s : entered) {
                OwnerId owner = threadOwner != null ? threadOwner : engine.newHoldOwner();
                claims.add(Claim.lock(s.key, owner, lease, spareTokens));
            }
            long sent = ticker.read();
            List<Attempt> answers;
            try {
                answers = batch.tryAcquireAll(claims);
                if (answers.size() != n) {
                    throw new IllegalStateException(
                            "the store answered " + answers.size() + " of " + n + " attempts made together");
                }
            } catch (RuntimeException e) {
                doneAttempting(entered, attempting);
                attempting = 0;
                for (Claim c : claims) {
                    waiters.abandonQuietly(c.key(), c.owner(), lease); // a grant may have happened, its answer lost
                }
                if (interruptible && interruptedBy(e)) {
                    InterruptedException ie =
                            new InterruptedException("interrupted while asking the store for " + n + " locks");
                    ie.initCause(e);
                    throw ie;
                }
                throw storeFailure("acquire", claims.get(0).key(), e);
            }
            doneAttempting(entered, attempting);
            attempting = 0;
            List<HoldImpl> holds = new ArrayList<>(n);
            List<HeldClaim> extra = new ArrayList<>();
            boolean busySeen = false;
            for (int i = 0; i < n; i++) {
                Attempt answer = answers.get(i);
                LockState s = entered.get(i);
                EngineLock lock = locks.get(i);
                if (answer instanceof Attempt.Acquired acquired) {
                    if (busySeen) {
                        extra.add(claims.get(i).held(acquired.fencingToken()));
                        continue;
                    }
                    HoldImpl h = new HoldImpl(
                            engine,
                            s,
                            lock,
                            claims.get(i).owner(),
                            threadView,
                            acquired.fencingToken(),
                            fixedLease,
                            sent,
                            lease.length().toNanos(),
                            acquired.spareTokens());
                    if (threadView) {
                        s.mutex.lock();
                        try {
                            var unused = s.takeLost(h.owner, Mode.EXCLUSIVE); // a fresh hold replaces a lost one
                        } finally {
                            s.mutex.unlock();
                        }
                    }
                    install(s, null, h);
                    metrics.acquired(lock.name(), ticker.read() - start);
                    lock.fireAcquired(h.fencingToken);
                    holds.add(h);
                } else {
                    busySeen = true;
                    noteBusy(lock.name());
                }
            }
            if (!extra.isEmpty()) {
                releaseQuietly(batch, extra, lease);
            }
            return holds;
        } finally {
            doneAttempting(entered, attempting);
            for (LockState s : entered) {
                states.exit(s);
            }
        }
    }

    private static void doneAttempting(List<LockState> entered, int attempting) {
        for (int i = 0; i < attempting; i++) {
            attemptDone(entered.get(i));
        }
    }

    /** Releases grants the engine never installed; a failure leaves each to its lease after one abandon. */
    private void releaseQuietly(AcquiresTogether batch, List<HeldClaim> grants, Lease lease) {
        try {
            var unused = batch.releaseAll(grants);
        } catch (RuntimeException e) {
            log.warn("distlock: could not release {} grants after a busy member; abandoning each", grants.size(), e);
            for (HeldClaim g : grants) {
                waiters.abandonQuietly(g.key(), g.owner(), lease);
            }
        }
    }

    /**
     * Starts an acquire of {@code lock} for a fresh handle whose steps run on the client's executor; {@code wait}
     * completes it. The caller has counted the waiter in the client's limit; {@code onEnd} uncounts it.
     */
    <T> AsyncWait<T> acquireAsync(EngineLock lock, AcquireCall call, AsyncWait.Deliver<T> deliver, Runnable onEnd) {
        ensureOpen();
        LockState s = states.enter(lock.name());
        return new AsyncLockWait<>(this, lock, s, call, ticker.read(), deliver, onEnd);
    }

    /** The asynchronous acquire of a lock: {@link LockAttempt}'s steps driven by {@link AsyncWait}. */
    private static final class AsyncLockWait<T> extends AsyncWait<T> {
        private final LockAcquirer a;
        private final LockAttempt run;
        private final Runnable onEnd;
        private final Deliver<T> deliver;

        AsyncLockWait(
                LockAcquirer a,
                EngineLock lock,
                LockState s,
                AcquireCall call,
                long start,
                Deliver<T> deliver,
                Runnable onEnd) {
            super(a.engine.async());
            this.deliver = deliver;
            this.a = a;
            this.onEnd = onEnd;
            this.run = new LockAttempt(a, lock, s, call, start, this::schedule);
        }

        @Override
        boolean step() throws InterruptedException {
            return run.step();
        }

        @Override
        long waitNanos() {
            return run.waitNanos;
        }

        @Override
        @Nullable
        EngineHold result() {
            return run.result;
        }

        @Override
        T value(@Nullable EngineHold hold) {
            return deliver.value(hold);
        }

        @Override
        void abandon() {
            var unused = run.giveUp(true);
        }

        @Override
        void end() {
            a.states.exit(run.s);
            onEnd.run();
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
    boolean recentlyBusy(String name) {
        if (!freeSubscriptions) {
            return false;
        }
        Long at = recentlyBusy.get(name);
        return at != null && ticker.read() - at < RECENTLY_BUSY_NANOS;
    }

    void noteBusy(String name) {
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

    static void attemptDone(LockState s) {
        s.mutex.lock();
        try {
            s.attemptsInFlight--;
        } finally {
            s.mutex.unlock();
        }
    }

    static void endAttempt(LockState s, Waiter w) {
        s.mutex.lock();
        try {
            w.attempting = false;
        } finally {
            s.mutex.unlock();
        }
    }

    void install(LockState s, @Nullable Waiter w, HoldImpl h) {
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

    static long nanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return AcquireCall.FOREVER;
        }
    }

    private void ensureOpen() {
        engine.ensureOpen();
    }
}
