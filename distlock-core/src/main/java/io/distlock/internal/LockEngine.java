package io.distlock.internal;

import io.distlock.DistributedCountDownLatch;
import io.distlock.DistributedLock;
import io.distlock.DistributedReadWriteLock;
import io.distlock.DistributedSemaphore;
import io.distlock.LockAdmin;
import io.distlock.LockClient;
import io.distlock.spi.AcquiresTogether;
import io.distlock.spi.Claim;
import io.distlock.spi.ClaimAdmin;
import io.distlock.spi.ClaimStore;
import io.distlock.spi.CounterStore;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import io.distlock.spi.ReportsLoss;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * The AQS shape
 *   The engine is the one implementation of the contract; a backend supplies one store, a ClaimStore and
 *   ClaimAdmin (and a CounterStore where it keeps latches), whose methods are single round trips that never wait
 *   (the store is tryAcquire/tryRelease, the engine is the rest), and says what else it can do by implementing
 *   ability interfaces (HandsOff, GrantsWithWakeUp, ReportsLoss, QueueOrdered, SessionHolds, FreeSubscriptions,
 *   WakesOwners, AcquiresTogether), which the parts below discover once. A lock is an exclusive claim of one permit; the lock parts below run it
 *   with its local fast paths (re-entry, hand-off, succession, grants with the wake-up). Read-write locks and
 *   semaphores run on ClaimEngine over the same store, latches on EngineLatch over the CounterStore; this class is
 *   the client facade of all of them.
 *
 * Policies
 *   The engine owns every policy: how many spare tokens a lock's claim asks the store to reserve (handOffLimit, the
 *   longest run of local successions), hand-off streak limits, when to subscribe, lease lengths and timers.
 *
 * State
 *   Per client and lock name there is one LockState: the local holder (an owner of this client that holds the lock),
 *   the local waiters, and one store subscription shared by them. LockState.mutex guards it and is never held across
 *   a round trip, so a store's I/O thread that delivers a wake-up can always take it. A state is made on first use
 *   and dropped when nobody is inside an acquire or release for the name and it has no holder, waiter or unreported
 *   loss.
 *
 * Owners
 *   A thread's hold through the Lock view is owned by "<clientId>:t<threadId>" and counts re-entries in the client,
 *   so a re-entrant acquire costs no round trip and the store sees one hold per owner. A LockHold is owned by
 *   "<clientId>:h<n>" and may be released by any thread.
 *
 * The parts
 *   EngineLock (a LockView): the DistributedLock a caller holds. LockAcquirer: re-entry and the attempt loop.
 *   LockWaiters: the local queue, wake-ups, grants that come with the wake-up. LockReleaser: release, hand-off and
 *   succession to a local waiter. LockLeases (a HoldKeeper): leases, the release in the store, loss. NameStates with
 *   LockState: the per-name states and their transitions. StoreCalls: how a store's failure reaches the caller. The
 *   claims' parts (ClaimEngine) share HoldKeeper, NameStates, EngineHold and LockView.
 *
 * Threads
 *   Two daemon threads per client, and a small pool for asynchronous waits (AsyncSupport). The watchdog thread runs the
 *   batched renewals and the early renewals of short grants (a round trip each, which may hang as long as the store's
 *   own timeout when the store stops answering). The timer thread makes no round trip: it runs fixed-lease ends and,
 *   four times per tick, the overdue check (Watchdog.expireOverdue), which tells a hold lost as soon as its last
 *   confirmed lease ends even while a renewal waits for its answer.
 *
 * Limits
 *   At most EngineConfig.maxWaiters acquires and latch awaits of one client may wait at once (WaiterLimit); one more
 *   is refused at once with RejectedExecutionException, so a flood of waiters cannot pile up in the client or in the
 *   store's queues.
 *
 * Ending
 *   The engine registers a JVM shutdown hook that closes it, so a JVM ended by SIGTERM (or System.exit) releases
 *   what the client holds instead of leaving it to expire; close() removes the hook. A close runs once, whoever calls
 *   it first (the hook or the owner). The hook waits at most 5 s for the close, which runs on a daemon thread of its
 *   own: a store that does not answer cannot hold up the JVM's exit.
 *   A thread that holds a lock through the Lock view and dies without unlocking (an uncaught exception) can never
 *   unlock it: each watchdog tick looks for holds of threads that have ended and releases them (hand-off to a local
 *   waiter included), so the lock is free within one tick (a third of the watchdog lease) instead of being renewed
 *   until the client closes. The engine keeps a weak reference to every thread that has an owner id, dropped when
 *   the thread has ended.
 */
/**
 * The shared implementation of {@link LockClient} over a {@link ClaimStore}. A backend's public client delegates to
 * it; see the overview comment in the source for the algorithm.
 */
public final class LockEngine implements LockClient {
    private static final Logger log = LoggerFactory.getLogger(LockEngine.class);

    private final ClaimStore store;

    private final EngineConfig config;
    private final String clientId;
    private final Ticker ticker;
    /** Fixed-lease timers and the overdue check: never waits for a round trip. */
    private final ScheduledThreadPoolExecutor scheduler;
    /** The watchdog's batched renewals and the early renewals of short grants. */
    private final ScheduledThreadPoolExecutor renewer;

    private final WaiterLimit waiterLimit;
    private final AsyncSupport async;
    private final LockLeases leases;
    private final LockReleaser releaser;
    private final LockAcquirer acquirer;
    private final NameStates<HoldImpl, LockState> states = new NameStates<>(LockState::new);
    private final AtomicLong holdIds = new AtomicLong();
    private final ThreadLocal<OwnerId> threadOwners;

    private final @Nullable ClaimEngine claims;
    private final @Nullable AcquiresTogether together;
    private final Set<Claim.Kind> kinds;
    private final @Nullable CounterStore counters;
    private final AtomicLong callIds = new AtomicLong();
    private final EngineAdmin admin;

    private volatile boolean closed;
    private final java.util.concurrent.atomic.AtomicBoolean closing = new java.util.concurrent.atomic.AtomicBoolean();
    /** Closes the engine when the JVM shuts down; removed by {@link #close()}. */
    private final Thread shutdownHook;
    /** The threads that have an owner id: a thread that ended may still hold a lock nobody can unlock. */
    private final EndedThreadHolds endedThreads;

    private LockEngine(ClaimStore store, ClaimAdmin adminStore, EngineConfig config) {
        this.store = Objects.requireNonNull(store, "store");
        Set<Claim.Kind> kinds = store.kinds();
        this.config = Objects.requireNonNull(config, "config");
        this.clientId = config.clientId();
        String id = clientId;
        this.ticker = config.ticker();
        this.scheduler = daemonExecutor("distlock-timers-" + OwnerId.redact(clientId));
        this.renewer = daemonExecutor("distlock-watchdog-" + OwnerId.redact(clientId));
        this.waiterLimit = new WaiterLimit(config.maxWaiters(), clientId);
        this.async = new AsyncSupport(config.asyncExecutor(), scheduler, waiterLimit, clientId);
        this.leases = new LockLeases(states, store, config, scheduler, renewer);
        this.releaser = new LockReleaser(this, config, leases);
        this.acquirer = new LockAcquirer(this, config, leases);
        this.claims = kinds.contains(Claim.Kind.READ_WRITE_LOCK) || kinds.contains(Claim.Kind.SEMAPHORE)
                ? new ClaimEngine(this, store, config, scheduler)
                : null;
        this.endedThreads = new EndedThreadHolds(claims == null ? List.of(states) : List.of(states, claims.states()));
        this.threadOwners = ThreadLocal.withInitial(() -> {
            Thread t = Thread.currentThread();
            OwnerId owner = new OwnerId(id + ":t" + threadId(t));
            endedThreads.register(owner, t);
            return owner;
        });
        this.kinds = Set.copyOf(kinds);
        this.counters = store instanceof CounterStore c ? c : null;
        this.together = store instanceof AcquiresTogether t ? t : null;
        this.admin = new EngineAdmin(adminStore);
        long tick = leases.tickNanos();
        renewer.scheduleWithFixedDelay(this::tickWatchdogs, tick, tick, TimeUnit.NANOSECONDS);
        long overdue = Math.max(1, tick / 4);
        scheduler.scheduleWithFixedDelay(this::expireOverdue, overdue, overdue, TimeUnit.NANOSECONDS);
        if (store instanceof ReportsLoss reports) {
            reports.onPossibleLoss(() -> {
                try {
                    renewer.execute(this::tickWatchdogs);
                } catch (java.util.concurrent.RejectedExecutionException e) {
                    // closing: nothing left to check
                }
            });
        }
        this.shutdownHook = new Thread(this::closeAtShutdown, "distlock-shutdown-" + OwnerId.redact(clientId));
        try {
            Runtime.getRuntime().addShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            // the JVM is shutting down already: nothing to hook into
        }
    }

    /** How long the shutdown hook waits for the close; a store that does not answer must not hold the JVM's exit. */
    private static final long CLOSE_AT_SHUTDOWN_MILLIS = 5_000;

    private void closeAtShutdown() {
        if (closed) {
            return;
        }
        log.info("distlock: the JVM is shutting down; closing lock client {}", OwnerId.redact(clientId));
        Thread closer = new Thread(
                () -> {
                    try {
                        close();
                    } catch (RuntimeException e) {
                        log.warn("distlock: closing at shutdown failed; what is left expires with its lease", e);
                    }
                },
                "distlock-shutdown-close-" + OwnerId.redact(clientId));
        closer.setDaemon(true);
        closer.start();
        try {
            closer.join(CLOSE_AT_SHUTDOWN_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (closer.isAlive()) {
            log.warn(
                    "distlock: closing lock client {} at shutdown took over {} ms; the JVM goes on exiting, and what"
                            + " is left expires with its lease",
                    OwnerId.redact(clientId),
                    CLOSE_AT_SHUTDOWN_MILLIS);
        }
    }

    /** The JVM shutdown hook that closes this engine (for tests). */
    Thread shutdownHook() {
        return shutdownHook;
    }

    /**
     * Starts an engine over a backend's {@code store}. The kinds the store keeps ({@link ClaimStore#kinds()}) are the
     * primitives the client offers, count-down latches where the store is also a {@link CounterStore}; the others
     * throw {@link UnsupportedOperationException} naming the backend. Closing the engine closes the store.
     */
    public static <S extends ClaimStore & ClaimAdmin> LockEngine create(S store, EngineConfig config) {
        return new LockEngine(store, store, config);
    }

    private static ScheduledThreadPoolExecutor daemonExecutor(String threadName) {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
        executor.setRemoveOnCancelPolicy(true);
        return executor;
    }

    private void tickWatchdogs() {
        leases.watchdog.tick();
        ClaimEngine c = claims;
        if (c != null) {
            c.tick();
        }
        // after the renewals: a release that waits on a slow store never holds back another hold's renewal
        endedThreads.release();
    }

    private void expireOverdue() {
        leases.expireOverdue();
        ClaimEngine c = claims;
        if (c != null) {
            c.expireOverdue();
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
        return new EngineReadWriteLock(this, claims("read-write locks", Claim.Kind.READ_WRITE_LOCK), Checks.name(name));
    }

    @Override
    public DistributedSemaphore semaphore(String name, int permits) {
        ensureOpen();
        String checked = Checks.name(name);
        if (permits < 1) {
            throw new IllegalArgumentException("permits must be positive: " + permits);
        }
        return new EngineSemaphore(this, claims("semaphores", Claim.Kind.SEMAPHORE), checked, permits);
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

    private ClaimEngine claims(String what, Claim.Kind kind) {
        ClaimEngine c = claims;
        if (c == null || !kinds.contains(kind)) {
            throw unsupported(what);
        }
        return c;
    }

    private UnsupportedOperationException unsupported(String what) {
        return new UnsupportedOperationException(store.unsupported(what));
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
        if (!closing.compareAndSet(false, true)) {
            return;
        }
        closed = true;
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            // the JVM is shutting down: the hook runs or ran (this close may be its own)
        }
        async.close(closedException());
        scheduler.shutdownNow();
        renewer.shutdownNow();
        states.close(h -> {
            leases.stopRenewal(h); // waits for a renewal in flight, so none runs after the release
            leases.releaseOnClose(h);
        });
        ClaimEngine c = claims;
        if (c != null) {
            c.close();
        }
        try {
            store.close();
        } catch (RuntimeException e) {
            log.warn("distlock: closing the store failed", e);
        }
    }

    @Override
    public String toString() {
        return "LockEngine[" + OwnerId.redact(clientId) + ", " + store + "]";
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
        return admin.inspectKey(key).isPresent();
    }

    /** Runs one watchdog tick now; for tests that drive time by hand. */
    void tickWatchdog() {
        leases.watchdog.tick();
    }

    /** Runs the overdue check now; for tests that drive time by hand. */
    void expireOverdueNow() {
        expireOverdue();
    }

    int watchdogSize() {
        return leases.watchdog.size();
    }

    int stateCount() {
        return states.size();
    }

    /** The state of {@code name} if one exists; for tests that play the watchdog's part by hand. */
    @Nullable
    LockState state(String name) {
        return states.get(name);
    }

    /** See {@link LockAcquirer#acquire}. */
    @Nullable
    HoldImpl acquire(EngineLock lock, AcquireCall call) throws InterruptedException {
        if (call.waitNanos() <= 0) {
            return acquirer.acquire(lock, call);
        }
        waiterLimit.enter(() -> "a wait for lock '" + lock.name() + "'");
        try {
            return acquirer.acquire(lock, call);
        } finally {
            waiterLimit.exit();
        }
    }

    /** Starts an asynchronous acquire of {@code lock}; see {@link AsyncWait}. */
    <T> CompletableFuture<T> acquireAsync(EngineLock lock, AcquireCall call, AsyncWait.Deliver<T> deliver) {
        if (closed) {
            return CompletableFuture.failedFuture(closedException());
        }
        return async.start(
                call.waitNanos(),
                () -> "a wait for lock '" + lock.name() + "'",
                onEnd -> acquirer.acquireAsync(lock, call, deliver, onEnd));
    }

    AsyncSupport async() {
        return async;
    }

    WaiterLimit waiterLimit() {
        return waiterLimit;
    }

    boolean isClosed() {
        return closed;
    }

    void unlockThread(EngineLock lock) {
        releaser.unlockThread(lock);
    }

    void release(HoldImpl h) {
        releaser.release(h);
    }

    // ---------------------------------------------------------------- several locks at once (LockBatches)

    /** Whether the store tries and releases several locks together. */
    boolean acquiresTogether() {
        return together != null;
    }

    /** See {@link LockAcquirer#tryTogether}; null when the store cannot or a name has local state. */
    @Nullable
    List<HoldImpl> tryTogether(
            List<EngineLock> locks, boolean threadView, @Nullable Duration fixedLease, boolean interruptible)
            throws InterruptedException {
        AcquiresTogether t = together;
        return t == null ? null : acquirer.tryTogether(t, locks, threadView, fixedLease, interruptible);
    }

    /** See {@link LockReleaser#unlockTogether}; the store must {@link #acquiresTogether()}. */
    List<@Nullable RuntimeException> unlockTogether(List<EngineLock> locks) {
        return releaser.unlockTogether(Objects.requireNonNull(together, "together"), locks);
    }

    /** See {@link LockReleaser#releaseTogether}; the store must {@link #acquiresTogether()}. */
    List<@Nullable RuntimeException> releaseTogether(List<HoldImpl> holds) {
        return releaser.releaseTogether(Objects.requireNonNull(together, "together"), holds);
    }

    // ---------------------------------------------------------------- helpers

    void ensureOpen() {
        if (closed) {
            throw closedException();
        }
    }

    IllegalStateException closedException() {
        return new IllegalStateException("lock client " + OwnerId.redact(clientId) + " is closed");
    }
}
