package io.distlock.internal;

import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * One acquire of a claim in progress: the attempt loop of {@link ClaimAcquirer} cut into steps, with the loop's state
 * kept between them. A step runs until the acquire is decided or the waiter must wait; then it says how long (at most)
 * to wait for a wake-up. A parked thread runs the steps one after another; an asynchronous acquire ({@link AsyncWait})
 * runs each on the client's executor when its waiter is woken or its timer fires.
 */
final class ClaimAttempt {
    private final ClaimAcquirer a;
    final ClaimView view;
    final ClaimState s;
    final Claim claim;
    final boolean threadView;
    private final boolean interruptible;
    private final Supplier<ClaimWaiter.Flagged> newWaiter;
    private final long start;
    private final long deadline;
    private final boolean mayWait;
    private @Nullable Backoff backoff;
    private boolean notifies = true;
    private ClaimWaiter.@Nullable Flagged w;
    /** The hold its own attempt got while a hand-off to it was on its way (see {@link #step}). */
    private @Nullable ClaimHold own;

    /** How often a waiter holding its own grant looks again whether the hand-off on its way has come back. */
    private static final long HAND_OFF_RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    /** After a step that did not decide: how long to wait for a wake-up before the next step. */
    long waitNanos;
    /** After a step that decided: the hold, or null when the wait ran out (or a wait of 0's one attempt was busy). */
    @Nullable
    ClaimHold result;

    ClaimAttempt(
            ClaimAcquirer a,
            ClaimView view,
            ClaimState s,
            Claim claim,
            AcquireCall call,
            long start,
            Supplier<ClaimWaiter.Flagged> newWaiter) {
        this.a = a;
        this.view = view;
        this.s = s;
        this.claim = claim;
        this.threadView = call.threadView();
        this.interruptible = call.interruptible();
        this.newWaiter = newWaiter;
        this.start = start;
        this.deadline = start + call.waitNanos();
        this.mayWait = call.waitNanos() > 0;
    }

    /** The waiter, once the acquire waits. */
    ClaimWaiter.@Nullable Flagged waiter() {
        return w;
    }

    /** Whether the acquire holds its grant already and waits only for a hand-off's answer (see {@link #step}). */
    boolean holdsOwn() {
        return own != null;
    }

    /**
     * Ends a wait that did not decide: the waiter leaves and its queue entry is abandoned, or the hold its own attempt
     * got is released.
     */
    void giveUp() {
        ClaimHold mine = own;
        if (mine != null) {
            own = null;
            a.releaseQuietly(mine);
            return;
        }
        ClaimWaiter waiter = w;
        if (waiter != null) {
            a.giveUp(s, waiter, claim);
        }
    }

    /** What {@link #handed} found before a waiter's attempt. */
    private enum Handed {
        /** Nothing handed and no hand-off on its way: the waiter's own attempt goes on. */
        GO_ON,
        /** The acquire is decided: a hold was handed to it, or its wait ran out during a hand-off. */
        DECIDED,
        /** A hand-off to it is on its way: it waits for that. */
        WAIT
    }

    /**
     * Before an attempt of a waiter: takes a hold a release handed to it (DECIDED), or waits while a hand-off to it is
     * on its way (WAIT; DECIDED when the wait has run out), or marks its own attempt on its way (GO_ON).
     */
    private Handed handed(ClaimWaiter.Flagged w) {
        ClaimHold h;
        s.mutex.lock();
        try {
            h = w.handed;
            if (h == null) {
                if (w.claimed) {
                    w.missed |= w.woken;
                } else {
                    w.attempting = true;
                }
                w.woken = false; // a wake-up from here on means: try again without waiting
                if (!w.claimed) {
                    return Handed.GO_ON;
                }
            } else {
                w.handed = null;
            }
        } finally {
            s.mutex.unlock();
        }
        long now = a.ticker.read();
        if (h != null) {
            a.config.metrics().acquired(view.name, now - start);
            view.listeners.acquired(h.fencingToken());
            result = h;
            return Handed.DECIDED;
        }
        if (now - deadline >= 0) {
            a.giveUp(s, w, claim);
            a.config.metrics().notAcquired(view.name, now - start);
            result = null;
            return Handed.DECIDED;
        }
        waitNanos = deadline - now; // the hand-off wakes it when it is decided
        return Handed.WAIT;
    }

    /**
     * Before a late grant is given back: whether it is this attempt's to give back (no hand-off has claimed the waiter
     * or installed its grant); if so, no hand-off claims it until {@link #settled}.
     */
    private boolean settle(ClaimWaiter.@Nullable Flagged w) {
        if (w == null) {
            return true;
        }
        s.mutex.lock();
        try {
            if (w.claimed || w.taken != null) {
                return false;
            }
            w.settling = true;
            return true;
        } finally {
            s.mutex.unlock();
        }
    }

    private void settled(ClaimWaiter.@Nullable Flagged w) {
        if (w != null) {
            s.mutex.lock();
            try {
                w.settling = false;
            } finally {
                s.mutex.unlock();
            }
        }
    }

    private void queued(ClaimWaiter.@Nullable Flagged w) {
        if (w != null) {
            s.mutex.lock();
            try {
                w.attempting = false;
                w.queued = mayWait;
            } finally {
                s.mutex.unlock();
            }
        }
    }

    private void attempted(ClaimWaiter.@Nullable Flagged w) {
        if (w != null) {
            s.mutex.lock();
            try {
                w.attempting = false;
            } finally {
                s.mutex.unlock();
            }
        }
    }

    private boolean decided(ClaimHold h) {
        a.config.metrics().acquired(view.name, a.ticker.read() - start);
        view.listeners.acquired(h.fencingToken());
        result = h;
        return true;
    }

    private long takenToken(ClaimWaiter.Flagged w) {
        s.mutex.lock();
        try {
            return Objects.requireNonNull(w.taken).fencingToken();
        } finally {
            s.mutex.unlock();
        }
    }

    private boolean handOffOnItsWay(ClaimWaiter.Flagged w) {
        s.mutex.lock();
        try {
            w.woken = false;
            return w.claimed;
        } finally {
            s.mutex.unlock();
        }
    }

    /** Runs the loop until the acquire is decided (true, see {@link #result}) or must wait ({@link #waitNanos}). */
    boolean step() throws InterruptedException {
        ClaimHold mine = own;
        if (mine != null) {
            // its own attempt got the grant while a hand-off to it was on its way: decided once that has come back
            if (handOffOnItsWay(Objects.requireNonNull(w))) {
                waitNanos = HAND_OFF_RECHECK_NANOS;
                return false;
            }
            return decided(mine);
        }
        for (; ; ) {
            ClaimWaiter.Flagged w = this.w;
            if (a.engine.isClosed()) {
                if (w != null) {
                    a.giveUp(s, w, claim); // the client closed under a waiter: its queue entry goes too
                }
                a.engine.ensureOpen();
            }
            if (w == null && mayWait && s.subscribedToNotices()) {
                // the name's waiters are subscribed already: a waiter that joins before its first attempt gets every
                // wake-up after it, so a busy answer needs no second attempt (as after subscribing below)
                ClaimWaiter.Flagged joined = newWaiter.get();
                joined.attempt = this;
                this.w = joined;
                w = joined;
                ClaimAcquirer.join(s, joined, claim.owner());
            }
            if (w != null) {
                Handed handed = handed(w);
                if (handed != Handed.GO_ON) {
                    return handed == Handed.DECIDED;
                }
            }
            long sent = a.ticker.read();
            Attempt answer;
            try {
                answer = a.store.tryAcquire(claim, mayWait);
            } catch (IllegalStateException e) {
                // the name is another kind, or a semaphore of another size: nothing written
                ClaimAcquirer.leave(s, w);
                throw e;
            } catch (RuntimeException e) {
                if (w != null) {
                    a.giveUp(s, w, claim); // a hand-off on its way gives back what it gets; else abandoned here
                } else {
                    a.abandonQuietly(claim); // the grant may have happened with its answer lost
                }
                if (interruptible && StoreCalls.interruptedBy(e)) {
                    InterruptedException ie =
                            new InterruptedException("interrupted while asking the store for " + view.describe());
                    ie.initCause(e);
                    throw ie;
                }
                throw StoreCalls.storeFailure("acquire", s.key, e);
            }
            if (answer instanceof Attempt.Acquired
                    && a.ticker.read() - sent >= claim.lease().length().toNanos()) {
                // the lease ran out while the answer was on its way: the hold would be lost at birth, so it is
                // given back and the acquire goes on within its wait, as after a busy answer; a hand-off on its way
                // to this waiter has the same grant, and its own check decides
                if (settle(w)) {
                    a.abandonQuietly(claim);
                    settled(w);
                }
                answer = Attempt.busy(Duration.ZERO);
            }
            if (answer instanceof Attempt.Acquired acquired) {
                ClaimHold h = new ClaimHold(a.engine, s, view, claim, acquired.fencingToken(), threadView, sent);
                if (!a.install(s, w, h)) {
                    // a hand-off installed this waiter's grant first: the waiter takes it from there (a grant of
                    // another token was made after the first ran out, and is given back)
                    if (takenToken(Objects.requireNonNull(w)) != h.fencingToken()) {
                        a.releaseGrant(h);
                    }
                    attempted(w);
                    continue;
                }
                own = h;
                if (w != null && handOffOnItsWay(w)) {
                    // a hand-off to this waiter is on its way with the same grant: the acquire returns once it has
                    // come back, so that it never reaches the store after the hold it would answer has ended
                    waitNanos = HAND_OFF_RECHECK_NANOS;
                    return false;
                }
                return decided(h);
            }
            // busy: the waiter is in the store's queue (an attempt that may wait queues), where a release looks first
            queued(w);
            if (!mayWait) {
                a.config.metrics().notAcquired(view.name, 0);
                result = null;
                return true;
            }
            long retry =
                    Math.max(ClaimAcquirer.MIN_RETRY_NANOS, ClaimAcquirer.nanos(((Attempt.Busy) answer).retryWithin()));
            if (w == null) {
                // subscribe, then try again at once: a release between the busy answer and the subscription would
                // otherwise be missed
                notifies = a.subscribe(s);
                ClaimWaiter.Flagged joined = newWaiter.get();
                joined.attempt = this;
                this.w = joined;
                ClaimAcquirer.join(s, joined, claim.owner());
                continue;
            }
            if (!notifies) {
                Backoff b = backoff;
                if (b == null) {
                    b = new Backoff(ClaimAcquirer.POLL_BASE_NANOS, ClaimAcquirer.POLL_CAP_NANOS);
                    backoff = b;
                }
                retry = Math.min(retry, b.nextNanos());
            }
            long now = a.ticker.read();
            if (now - deadline >= 0) {
                a.giveUp(s, w, claim);
                a.config.metrics().notAcquired(view.name, now - start);
                result = null;
                return true;
            }
            waitNanos = Math.min(deadline - now, retry);
            return false;
        }
    }
}
