package io.distlock.internal;

import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import java.time.Duration;
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

    /** Ends a wait that did not decide: the waiter leaves and its queue entry is abandoned. */
    void giveUp() {
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

    /** Runs the loop until the acquire is decided (true, see {@link #result}) or must wait ({@link #waitNanos}). */
    boolean step() throws InterruptedException {
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
                ClaimAcquirer.leave(s, w); // the name is another kind, or a semaphore of another size: nothing written
                throw e;
            } catch (RuntimeException e) {
                ClaimAcquirer.leave(s, w);
                a.abandonQuietly(claim); // the grant may have happened with its answer lost
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
                // given back and the acquire goes on within its wait, as after a busy answer
                a.abandonQuietly(claim);
                answer = Attempt.busy(Duration.ZERO);
            }
            if (answer instanceof Attempt.Acquired acquired) {
                ClaimHold h = new ClaimHold(a.engine, s, view, claim, acquired.fencingToken(), threadView, sent);
                a.install(s, w, h);
                a.config.metrics().acquired(view.name, a.ticker.read() - start);
                view.listeners.acquired(h.fencingToken());
                result = h;
                return true;
            }
            // busy: from here on a release may hand its permits to this waiter (while the attempt was on its way, and
            // once granted, none may: the grant would be made twice)
            attempted(w);
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
