package io.distlock.internal;

import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.ClaimStore;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.Lease;
import io.distlock.spi.LockKey;
import io.distlock.spi.Mode;
import io.distlock.spi.OwnerId;
import io.distlock.spi.Subscription;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Claims
 *   The engine of read-write locks and semaphores: every acquisition is a Claim (a name, its kind, a mode, a number of
 *   permits of the name's size, an owner and a Lease) that the ClaimStore grants or answers busy in one round trip.
 *   The store decides compatibility (exclusive against everything, shared up to the size) and order (grants as if in
 *   queue order, so a waiting writer holds back newer readers and acquire(5) is not starved by acquire(1)s); the
 *   engine does the rest.
 *
 * Owners and re-entry
 *   A thread's view (readLock().lock()) is owned by the thread's owner id ("<clientId>:t<threadId>"), one hold per
 *   mode: re-entry counts in the hold and costs no round trip. A thread holding the write lock may claim the read lock
 *   (a downgrade: the store grants a shared claim of an owner that holds the name exclusively); a thread holding only
 *   the read lock that asks for the write lock fails at once. A PermitHold or LockHold is owned by a fresh
 *   "<clientId>:h<n>" and released by any thread.
 *
 * Waiting
 *   An acquire that may wait makes every attempt a queued one, so it keeps its place in the store's queue. After its
 *   first busy answer it subscribes to the name (one subscription per name per client, shared by the local waiters)
 *   and tries once more at once, so a release between the two is not missed; then it parks until a wake-up (from the
 *   store, or a local release or loss) or until the busy answer's retry time, whichever comes first. A store that
 *   cannot notify is polled with jittered back-off. A wait that ends by timeout or interrupt abandons its queue entry;
 *   an attempt that failed in transit abandons the claim, so a grant whose answer was lost does not stay unowned.
 *
 * Leases and loss
 *   A hold with a renewed lease joins the client's Watchdog; one with a fixed lease gets a timer at its end, which
 *   marks it lost if it is still held (the store ends it by itself at the same time). A hold found lost is told to its
 *   view's listeners at once, and its thread's next unlock throws LockLostException.
 */
/** The shared implementation of read-write locks and semaphores over a {@link ClaimStore}. */
final class ClaimEngine implements Watchdog.Engine<ClaimHold, HeldClaim> {
    private static final Logger log = LoggerFactory.getLogger(ClaimEngine.class);
    private static final long MIN_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long POLL_BASE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    private static final long POLL_CAP_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    private final LockEngine host;
    private final ClaimStore store;
    private final EngineConfig config;
    private final Ticker ticker;
    private final ScheduledExecutorService scheduler;
    private final Watchdog<ClaimHold, HeldClaim> watchdog;
    private final ConcurrentHashMap<String, ClaimState> states = new ConcurrentHashMap<>();
    private volatile boolean closed;

    ClaimEngine(LockEngine host, ClaimStore store, EngineConfig config, ScheduledExecutorService scheduler) {
        this.host = host;
        this.store = store;
        this.config = config;
        this.ticker = config.ticker();
        this.scheduler = scheduler;
        this.watchdog = new Watchdog<>(this, ticker, config.watchdogLease());
    }

    Ticker ticker() {
        return ticker;
    }

    /** One renewal round for every hold with a renewed lease; the client's scheduler calls it every tick. */
    void tick() {
        watchdog.tick();
    }

    // ---------------------------------------------------------------- acquire

    /**
     * Acquires {@code permits} of {@code view} for {@code owner}. Returns null when the wait ran out (or, for a wait
     * of 0, when the one attempt was busy).
     */
    @Nullable
    ClaimHold acquire(
            ClaimView view,
            int permits,
            OwnerId owner,
            boolean threadView,
            @Nullable Duration fixedLease,
            long waitNanos,
            boolean interruptible)
            throws InterruptedException {
        ensureOpen();
        long start = ticker.read();
        ClaimState s = enter(view.name);
        ClaimWaiter.Parked w = null;
        boolean interrupted = false;
        try {
            if (threadView) {
                ClaimHold again = reenter(s, owner, view);
                if (again != null) {
                    return again;
                }
            }
            Lease lease = fixedLease != null ? Lease.fixed(fixedLease) : Lease.renewed(config.watchdogLease());
            Claim claim = Claim.of(s.key, view.kind, view.mode, permits, view.size, owner, lease);
            boolean mayWait = waitNanos > 0;
            long deadline = start + waitNanos;
            Backoff backoff = null;
            boolean notifies = true;
            for (; ; ) {
                if (closed) {
                    if (w != null) {
                        giveUp(s, w, claim); // the client closed under a waiter: its queue entry goes too
                    }
                    ensureOpen();
                }
                if (w != null) {
                    w.woken = false; // a wake-up from here on means: try again without parking
                }
                long sent = ticker.read();
                Attempt answer;
                try {
                    answer = store.tryAcquire(claim, mayWait);
                } catch (IllegalStateException e) {
                    leave(s, w); // the name is another kind, or a semaphore of another size: nothing was written
                    throw e;
                } catch (RuntimeException e) {
                    leave(s, w);
                    abandonQuietly(claim); // the grant may have happened with its answer lost
                    if (interruptible && StoreCalls.interruptedBy(e)) {
                        InterruptedException ie =
                                new InterruptedException("interrupted while asking the store for " + view.describe());
                        ie.initCause(e);
                        throw ie;
                    }
                    throw StoreCalls.storeFailure("acquire", s.key, e);
                }
                if (answer instanceof Attempt.Acquired acquired) {
                    ClaimHold h = new ClaimHold(this, s, view, claim, acquired.fencingToken(), threadView, sent);
                    install(s, w, h);
                    config.metrics().acquired(view.name, ticker.read() - start);
                    view.listeners.acquired(h.fencingToken());
                    return h;
                }
                if (!mayWait) {
                    config.metrics().notAcquired(view.name, 0);
                    return null;
                }
                long retry = Math.max(MIN_RETRY_NANOS, nanos(((Attempt.Busy) answer).retryWithin()));
                if (w == null) {
                    // subscribe, then try again at once: a release between the busy answer and the subscription
                    // would otherwise be missed
                    notifies = subscribe(s);
                    w = new ClaimWaiter.Parked();
                    join(s, w);
                    continue;
                }
                if (!notifies) {
                    if (backoff == null) {
                        backoff = new Backoff(POLL_BASE_NANOS, POLL_CAP_NANOS);
                    }
                    retry = Math.min(retry, backoff.nextNanos());
                }
                long now = ticker.read();
                if (now - deadline >= 0) {
                    giveUp(s, w, claim);
                    config.metrics().notAcquired(view.name, now - start);
                    return null;
                }
                if (!w.woken) {
                    LockSupport.parkNanos(this, Math.min(deadline - now, retry));
                }
                if (Thread.interrupted()) {
                    if (interruptible) {
                        giveUp(s, w, claim);
                        throw new InterruptedException("interrupted while waiting for " + view.describe());
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

    /** The thread's hold of this view again, if it has one; refuses an upgrade from read to write. */
    private @Nullable ClaimHold reenter(ClaimState s, OwnerId owner, ClaimView view) {
        ClaimHold expired = null;
        s.mutex.lock();
        try {
            ClaimHold h = s.threadHold(owner, view.mode);
            if (h != null) {
                if (h.isValid()) {
                    h.count++;
                    return h;
                }
                expired = h;
            } else if (view.mode == Mode.EXCLUSIVE) {
                ClaimHold read = s.threadHold(owner, Mode.SHARED);
                if (read != null && read.isValid()) {
                    throw new IllegalMonitorStateException("the current thread holds the read lock '" + view.name
                            + "' and asks for its write lock: it would wait for itself for ever; release the read"
                            + " lock first (a write lock may be downgraded to a read lock, not the other way)");
                }
            }
            var unused = s.takeLost(owner, view.mode);
        } finally {
            s.mutex.unlock();
        }
        if (expired != null) {
            markLost(expired, null); // its lease ran out before the watchdog noticed: acquire afresh
            s.mutex.lock();
            try {
                var unused = s.takeLost(owner, view.mode);
            } finally {
                s.mutex.unlock();
            }
        }
        return null;
    }

    private void install(ClaimState s, ClaimWaiter.@Nullable Parked w, ClaimHold h) {
        s.mutex.lock();
        try {
            s.granted(w, h);
        } finally {
            s.mutex.unlock();
        }
        activate(h);
    }

    private static void join(ClaimState s, ClaimWaiter w) {
        s.mutex.lock();
        try {
            s.join(w);
        } finally {
            s.mutex.unlock();
        }
    }

    private static void leave(ClaimState s, @Nullable ClaimWaiter w) {
        if (w == null) {
            return;
        }
        s.mutex.lock();
        try {
            s.leave(w);
        } finally {
            s.mutex.unlock();
        }
    }

    private void giveUp(ClaimState s, ClaimWaiter w, Claim claim) {
        leave(s, w);
        abandonQuietly(claim);
    }

    private boolean subscribe(ClaimState s) {
        s.subscribeLock.lock();
        try {
            Subscription sub = s.subscription;
            if (sub == null) {
                sub = StoreCalls.call("subscribe", s.key, () -> store.subscribe(s.key, () -> onWake(s)));
                s.subscription = sub;
            }
            return sub.notifies();
        } finally {
            s.subscribeLock.unlock();
        }
    }

    private static void onWake(ClaimState s) {
        s.mutex.lock();
        try {
            s.wakeWaiters();
        } finally {
            s.mutex.unlock();
        }
    }

    // ---------------------------------------------------------------- release

    /** Unlocks the calling thread's hold of {@code view}, counting down its re-entries first. */
    void unlockThread(ClaimView view) {
        OwnerId owner = host.threadOwner();
        ClaimState s = enter(view.name);
        try {
            ClaimHold h;
            s.mutex.lock();
            try {
                h = s.threadHold(owner, view.mode);
                if (h == null) {
                    ClaimHold lost = s.takeLost(owner, view.mode);
                    if (lost != null) {
                        throw lost.lostException();
                    }
                    throw new IllegalMonitorStateException("the current thread does not hold " + view.describe());
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

    void release(ClaimHold h) {
        ClaimState s = h.state;
        s.mutex.lock();
        try {
            s.users++;
        } finally {
            s.mutex.unlock();
        }
        try {
            if (h.isLost()) {
                throw h.lostException();
            }
            stopRenewal(h); // from here on no renewal of this hold runs
            if (!h.finish(ClaimHold.RELEASED)) {
                if (h.isLost()) {
                    throw h.lostException();
                }
                throw new IllegalMonitorStateException(h.view.describe() + " was already released by this hold");
            }
            config.metrics().released(h.name(), ticker.read() - h.acquiredAt);
            boolean released;
            try {
                released = store.release(h.held);
            } catch (RuntimeException e) {
                ended(s, h);
                throw StoreCalls.storeFailure("release", s.key, e);
            }
            ended(s, h);
            if (!released) {
                config.metrics().lost(h.name());
                h.view.listeners.lost(h.fencingToken(), null);
                throw h.lostException();
            }
            h.view.listeners.released(h.fencingToken());
        } finally {
            exit(s);
        }
    }

    private static void ended(ClaimState s, ClaimHold h) {
        s.mutex.lock();
        try {
            s.ended(h);
        } finally {
            s.mutex.unlock();
        }
    }

    // ---------------------------------------------------------------- leases and loss

    private void activate(ClaimHold h) {
        if (h.claim.lease().renewed()) {
            watchdog.add(h);
            return;
        }
        try {
            h.timer = scheduler.schedule(
                    () -> {
                        if (h.isActive()) {
                            markLost(h, null);
                        }
                    },
                    Math.max(0, h.validUntil() - ticker.read()),
                    TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // the client is closing; close() releases the hold
        }
    }

    private void stopRenewal(ClaimHold h) {
        ScheduledFuture<?> f = h.timer;
        if (f != null) {
            f.cancel(false);
        }
        if (h.claim.lease().renewed()) {
            watchdog.remove(h);
        }
    }

    @Override
    public Set<HeldClaim> renew(Collection<HeldClaim> holds, Duration lease) {
        return store.renew(holds, lease);
    }

    @Override
    public void markLost(ClaimHold h, @Nullable Throwable cause) {
        if (tellLost(h, cause)) {
            endLostInStore(h);
        }
    }

    /** Marks the hold lost and tells its listeners, once. A claim store ends a hold by itself when its lease runs out. */
    @Override
    public boolean tellLost(ClaimHold h, @Nullable Throwable cause) {
        if (!h.finish(ClaimHold.LOST)) {
            return false;
        }
        stopRenewal(h);
        ClaimState s = h.state;
        s.mutex.lock();
        try {
            s.ended(h);
            if (h.threadView) {
                s.keepLost(h);
            }
        } finally {
            s.mutex.unlock();
        }
        settle(s);
        log.warn("distlock: lost {} (fencing token {})", h.view.describe(), h.fencingToken());
        config.metrics().lost(h.name());
        h.view.listeners.lost(h.fencingToken(), cause);
        return false;
    }

    @Override
    public void endLostInStore(ClaimHold h) {
        // nothing to end: the store's lease of the hold ends by itself
    }

    // ---------------------------------------------------------------- views

    /** The calling thread's live hold of {@code view}, if any. */
    @Nullable
    ClaimHold threadHold(ClaimView view) {
        ClaimState s = states.get(view.name);
        if (s == null) {
            return null;
        }
        OwnerId owner = host.threadOwner();
        s.mutex.lock();
        try {
            ClaimHold h = s.threadHold(owner, view.mode);
            return h != null && h.isValid() ? h : null;
        } finally {
            s.mutex.unlock();
        }
    }

    int threadHoldCount(ClaimView view) {
        ClaimState s = states.get(view.name);
        if (s == null) {
            return 0;
        }
        OwnerId owner = host.threadOwner();
        s.mutex.lock();
        try {
            ClaimHold h = s.threadHold(owner, view.mode);
            return h != null && h.isValid() ? h.count : 0;
        } finally {
            s.mutex.unlock();
        }
    }

    /** The permits of {@code view}'s name that no live hold has, as the store counts them. */
    int available(ClaimView view) {
        LockKey key = new LockKey(view.name);
        return StoreCalls.call("availablePermits", key, () -> store.available(key, view.kind, view.size));
    }

    /** Whether any owner holds the name in {@code mode} (for a write view: exclusively) as far as the store knows. */
    boolean isHeld(ClaimView view) {
        ClaimState s = states.get(view.name);
        if (s != null) {
            s.mutex.lock();
            try {
                for (ClaimHold h : s.holders()) {
                    if (h.mode() == view.mode && h.isValid()) {
                        return true;
                    }
                }
            } finally {
                s.mutex.unlock();
            }
        }
        // the store counts an exclusive hold as taking every permit; shared holds take theirs
        int free = available(view);
        return view.mode == Mode.EXCLUSIVE ? free == 0 : free > 0 && free < view.size;
    }

    // ---------------------------------------------------------------- lifecycle

    void close() {
        closed = true;
        List<ClaimHold> held = new ArrayList<>();
        List<Subscription> subscriptions = new ArrayList<>();
        for (ClaimState s : states.values()) {
            s.mutex.lock();
            try {
                s.wakeWaiters();
                held.addAll(s.holders());
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
        for (ClaimHold h : held) {
            stopRenewal(h);
            if (h.finish(ClaimHold.RELEASED)) {
                try {
                    var unused = store.release(h.held);
                } catch (RuntimeException e) {
                    log.warn(
                            "distlock: could not release {} on close; it expires with its lease", h.view.describe(), e);
                }
            }
        }
        for (Subscription sub : subscriptions) {
            StoreCalls.closeQuietly(sub);
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("lock client " + host.clientId() + " is closed");
        }
    }

    private ClaimState enter(String name) {
        for (; ; ) {
            ClaimState s = states.computeIfAbsent(name, n -> new ClaimState(new LockKey(n)));
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

    private void exit(ClaimState s) {
        s.mutex.lock();
        try {
            s.users--;
        } finally {
            s.mutex.unlock();
        }
        settle(s);
    }

    /** Forgets a name nobody uses any more, closing its subscription. */
    private void settle(ClaimState s) {
        Subscription dropped = null;
        s.mutex.lock();
        try {
            if (!s.removed && s.idle()) {
                s.removed = true;
                states.remove(s.key.name(), s);
                dropped = s.subscription;
                s.subscription = null;
            }
        } finally {
            s.mutex.unlock();
        }
        if (dropped != null) {
            StoreCalls.closeQuietly(dropped);
        }
    }

    private void abandonQuietly(Claim claim) {
        try {
            store.abandon(claim);
        } catch (RuntimeException e) {
            log.warn("distlock: could not clean up after '{}'; it expires with its lease", claim.key(), e);
        }
    }

    private static long nanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE / 4;
        }
    }
}
