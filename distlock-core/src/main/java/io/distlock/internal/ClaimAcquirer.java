package io.distlock.internal;

import io.distlock.spi.Claim;
import io.distlock.spi.ClaimStore;
import io.distlock.spi.Lease;
import io.distlock.spi.Mode;
import io.distlock.spi.OwnerId;
import io.distlock.spi.WakesOwners;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import java.util.function.Supplier;
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
 *
 * Wake-ups
 *   A store wake-up, a local release and a local loss wake every waiter of the name in this client, except on a store
 *   whose wake-ups name the owners that can pass (WakesOwners): there a wake-up wakes only the waiters it names, and a
 *   release the store confirmed wakes nobody locally, since its own wake-up names who passes. A release then costs one
 *   attempt per waiter it lets pass, not one per waiter of the client.
 */
/** The acquire half of a {@link ClaimEngine}: attempts, re-entry, waiting and wake-ups. */
final class ClaimAcquirer {
    private static final Logger log = LoggerFactory.getLogger(ClaimAcquirer.class);
    static final long MIN_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    static final long POLL_BASE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    static final long POLL_CAP_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    final ClaimEngine engine;
    final NameStates<ClaimHold, ClaimState> states;
    private final HoldKeeper<ClaimHold, ClaimState> keeper;
    final ClaimStore store;
    private final @Nullable WakesOwners wakesOwners;
    final EngineConfig config;
    final Ticker ticker;

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
        this.wakesOwners = store instanceof WakesOwners w ? w : null;
        this.config = config;
        this.ticker = config.ticker();
    }

    /**
     * Acquires {@code permits} of {@code view} as {@code call} asks. Returns null when the wait ran out (or, for a
     * wait of 0, when the one attempt was busy).
     */
    @Nullable
    ClaimHold acquire(ClaimView view, int permits, AcquireCall call) throws InterruptedException {
        engine.ensureOpen();
        long start = ticker.read();
        ClaimState s = states.enter(view.name);
        boolean interrupted = false;
        try {
            if (call.threadView()) {
                ClaimHold again = reenter(s, call.owner(), view);
                if (again != null) {
                    return again;
                }
            }
            ClaimAttempt run = new ClaimAttempt(this, view, s, claim(s, view, permits, call), call, start, PARKED);
            while (!run.step()) {
                ClaimWaiter.Flagged w = Objects.requireNonNull(run.waiter());
                if (!w.woken) {
                    LockSupport.parkNanos(this, run.waitNanos);
                }
                if (Thread.interrupted()) {
                    // an acquire that holds its grant already returns it, the interrupt kept
                    if (call.interruptible() && !run.holdsOwn()) {
                        run.giveUp();
                        throw new InterruptedException("interrupted while waiting for " + view.describe());
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

    private static final Supplier<ClaimWaiter.Flagged> PARKED = ClaimWaiter.Parked::new;

    private Claim claim(ClaimState s, ClaimView view, int permits, AcquireCall call) {
        Duration fixedLease = call.fixedLease();
        Lease lease = fixedLease != null ? Lease.fixed(fixedLease) : Lease.renewed(config.watchdogLease());
        return Claim.of(s.key, view.kind, view.mode, permits, view.size, call.owner(), lease);
    }

    /**
     * Starts an acquire of {@code permits} of {@code view} for a fresh handle whose steps run on the client's
     * executor. The caller has counted the waiter in the client's limit; {@code onEnd} uncounts it.
     */
    <T> AsyncWait<T> acquireAsync(
            ClaimView view, int permits, AcquireCall call, AsyncWait.Deliver<T> deliver, Runnable onEnd) {
        engine.ensureOpen();
        ClaimState s = states.enter(view.name);
        try {
            return new AsyncClaimWait<>(this, view, s, claim(s, view, permits, call), call, deliver, onEnd);
        } catch (RuntimeException e) {
            states.exit(s);
            throw e;
        }
    }

    /** The asynchronous acquire of a claim: {@link ClaimAttempt}'s steps driven by {@link AsyncWait}. */
    private static final class AsyncClaimWait<T> extends AsyncWait<T> {
        private final ClaimAcquirer a;
        private final ClaimAttempt run;
        private final Runnable onEnd;
        private final Deliver<T> deliver;

        AsyncClaimWait(
                ClaimAcquirer a,
                ClaimView view,
                ClaimState s,
                Claim claim,
                AcquireCall call,
                Deliver<T> deliver,
                Runnable onEnd) {
            super(a.engine.host().async());
            this.deliver = deliver;
            this.a = a;
            this.onEnd = onEnd;
            this.run = new ClaimAttempt(a, view, s, claim, call, a.ticker.read(), this::callback);
        }

        private ClaimWaiter.Flagged callback() {
            return new ClaimWaiter.Callback(this::schedule);
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
            run.giveUp();
        }

        @Override
        void end() {
            a.states.exit(run.s);
            onEnd.run();
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

    /**
     * Installs the hold an attempt got and renews it; returns false, installing nothing, when a hand-off has
     * installed {@code w}'s grant first (the waiter takes that one).
     */
    boolean install(ClaimState s, ClaimWaiter.@Nullable Flagged w, ClaimHold h) {
        s.mutex.lock();
        try {
            if (w != null) {
                if (w.taken != null) {
                    return false;
                }
                w.taken = h;
            }
            s.granted(w, h);
        } finally {
            s.mutex.unlock();
        }
        keeper.activate(h);
        return true;
    }

    /** Ends a grant that was made twice for one waiter and not installed, by its token: the installed one stays. */
    void releaseGrant(ClaimHold h) {
        try {
            var unused = store.release(h.heldClaim());
        } catch (RuntimeException e) {
            log.warn("distlock: could not give back {}; it expires with its lease", h.describe(), e);
        }
    }

    static void join(ClaimState s, ClaimWaiter w, OwnerId owner) {
        s.mutex.lock();
        try {
            s.join(w, owner);
        } finally {
            s.mutex.unlock();
        }
    }

    static void leave(ClaimState s, @Nullable ClaimWaiter w) {
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

    /**
     * Ends a wait that did not decide: the waiter leaves and its queue entry is abandoned. A waiter that a hand-off is
     * on its way to leaves that to the hand-off, which gives back what it gets; a hold handed to it that it has not
     * taken is released.
     */
    void giveUp(ClaimState s, ClaimWaiter w, Claim claim) {
        ClaimHold handed = null;
        boolean claimed = false;
        s.mutex.lock();
        try {
            s.leave(w);
            if (w instanceof ClaimWaiter.Flagged f) {
                handed = f.handed;
                f.handed = null;
                claimed = f.claimed;
                f.gone = true;
            }
        } finally {
            s.mutex.unlock();
        }
        if (handed != null) {
            releaseQuietly(handed);
        } else if (!claimed) {
            abandonQuietly(claim);
        }
    }

    void releaseQuietly(ClaimHold h) {
        try {
            engine.release(h);
        } catch (RuntimeException e) {
            log.warn("distlock: could not give back {}; it expires with its lease", h.describe(), e);
        }
    }

    boolean subscribe(ClaimState s) {
        WakesOwners named = wakesOwners;
        if (named != null) {
            boolean notifies = s.subscribe(() -> named.subscribe(s.key, passes -> onWake(s, passes)));
            if (notifies) {
                s.ownerWakeUps = true;
            }
            return notifies;
        }
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

    private static void onWake(ClaimState s, Predicate<OwnerId> passes) {
        s.mutex.lock();
        try {
            s.wakeWaiters(passes);
        } finally {
            s.mutex.unlock();
        }
    }

    void abandonQuietly(Claim claim) {
        try {
            store.abandon(claim);
        } catch (RuntimeException e) {
            log.warn("distlock: could not clean up after '{}'; it expires with its lease", claim.key(), e);
        }
    }

    static long nanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return AcquireCall.FOREVER;
        }
    }
}
