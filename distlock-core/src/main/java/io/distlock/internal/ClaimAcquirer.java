package io.distlock.internal;

import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.ClaimStore;
import io.distlock.spi.Lease;
import io.distlock.spi.Mode;
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
 * Attempts
 *   Every acquisition is one Claim, asked of the store as it is until it is granted, the wait runs out or the client
 *   closes. A claim the store rejects outright (the name is another kind, or a semaphore of another size) fails at once
 *   with the store's IllegalStateException; any other failure abandons the claim first, so a grant whose answer was
 *   lost does not stay unowned.
 *
 * Re-entry
 *   A thread's view finds its own live hold of the mode first and counts one more re-entry, with no round trip. A
 *   thread holding only the read lock that asks for the write lock fails at once: it would wait for itself.
 *
 * Waiting
 *   An acquire that may wait makes every attempt a queued one, so it keeps its place in the store's queue. After its
 *   first busy answer it subscribes to the name (one subscription per name per client, shared by the local waiters)
 *   and tries once more at once, so a release between the two is not missed; then it parks until a wake-up (from the
 *   store, or a local release or loss) or until the busy answer's retry time, whichever comes first. A store that
 *   cannot notify is polled with jittered back-off. A wait that ends by timeout, interrupt or the client's close
 *   abandons its queue entry.
 */
/** The acquire half of a {@link ClaimEngine}: attempts, re-entry, waiting and wake-ups. */
final class ClaimAcquirer {
    private static final Logger log = LoggerFactory.getLogger(ClaimAcquirer.class);
    private static final long MIN_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long POLL_BASE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    private static final long POLL_CAP_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    private final ClaimEngine engine;
    private final NameStates<ClaimHold, ClaimState> states;
    private final HoldKeeper<ClaimHold, ClaimState> keeper;
    private final ClaimStore store;
    private final EngineConfig config;
    private final Ticker ticker;

    ClaimAcquirer(
            ClaimEngine engine,
            NameStates<ClaimHold, ClaimState> states,
            HoldKeeper<ClaimHold, ClaimState> keeper,
            ClaimStore store,
            EngineConfig config) {
        this.engine = engine;
        this.states = states;
        this.keeper = keeper;
        this.store = store;
        this.config = config;
        this.ticker = config.ticker();
    }

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
        engine.ensureOpen();
        long start = ticker.read();
        ClaimState s = states.enter(view.name);
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
                if (engine.isClosed()) {
                    if (w != null) {
                        giveUp(s, w, claim); // the client closed under a waiter: its queue entry goes too
                    }
                    engine.ensureOpen();
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
                    ClaimHold h = new ClaimHold(engine, s, view, claim, acquired.fencingToken(), threadView, sent);
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
            states.exit(s);
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
            keeper.forgetExpired(expired); // its lease ran out before the watchdog noticed: acquire afresh
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
        keeper.activate(h);
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
        return s.subscribe(() -> store.subscribe(s.key, () -> onWake(s)));
    }

    private static void onWake(ClaimState s) {
        s.mutex.lock();
        try {
            s.wakeWaiters();
        } finally {
            s.mutex.unlock();
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
