package io.distlock.internal;

import static io.distlock.internal.StoreCalls.interruptedBy;
import static io.distlock.internal.StoreCalls.storeFailure;

import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.Lease;
import io.distlock.spi.OwnerId;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One acquire of a lock in progress: the attempt loop of {@link LockAcquirer} cut into steps, with the loop's state
 * kept between them. A step runs until the acquire is decided or the waiter must wait; then it says how long (at most)
 * to wait for a wake-up. A parked thread runs the steps one after another; an asynchronous acquire
 * ({@link AsyncWait}) runs each on the client's executor when its waiter is woken or its timer fires.
 */
final class LockAttempt {
    private final LockAcquirer a;
    final EngineLock lock;
    final LockState s;
    private final OwnerId owner;
    private final boolean threadView;
    private final @Nullable Duration fixedLease;
    private final boolean interruptible;
    /** The waiter's wake; null for the calling thread (its waiter unparks it). */
    private final @Nullable Runnable wake;

    private final long start;
    private final long deadline;
    /** Every local waiter in the store's queue (fair locks; stores whose queue is the only order). */
    private final boolean queued;

    private final boolean mayWait;
    private long nextTryAt;
    private @Nullable Backoff backoff;
    private boolean subscribed;
    private boolean notifies = true;
    private @Nullable Waiter w;
    private int wakeUpsBefore;

    /** After a step that did not decide: how long to wait for a wake-up before the next step. */
    long waitNanos;
    /** After a step that decided: the hold, or null when the wait ran out (or a wait of 0's one attempt was busy). */
    @Nullable
    HoldImpl result;

    LockAttempt(LockAcquirer a, EngineLock lock, LockState s, AcquireCall call, long start, @Nullable Runnable wake) {
        this.a = a;
        this.lock = lock;
        this.s = s;
        this.owner = call.owner();
        this.threadView = call.threadView();
        this.fixedLease = call.fixedLease();
        this.interruptible = call.interruptible();
        this.wake = wake;
        this.start = start;
        this.deadline = start + call.waitNanos();
        this.queued = lock.fair || (a.queueOrdered && a.handOffs == null);
        this.mayWait = call.waitNanos() > 0;
        this.nextTryAt = start;
    }

    /** The local waiter, once the acquire has joined the local queue. */
    @Nullable
    Waiter waiter() {
        return w;
    }

    /** Ends a wait that did not decide (timeout of the caller, interrupt, cancellation); see LockWaiters.giveUp. */
    @Nullable
    HoldImpl giveUp(boolean releaseAGrant) {
        Waiter waiter = w;
        return waiter == null ? null : a.waiters.giveUp(s, waiter, releaseAGrant);
    }

    /** Runs the loop until the acquire is decided (true, see {@link #result}) or must wait ({@link #waitNanos}). */
    boolean step() throws InterruptedException {
        for (; ; ) {
            boolean attempt;
            boolean queueAttempt = false;
            // whether this waiter is the one that talks to the store now, so its retry time matters
            boolean competing = false;
            Waiter w = this.w;
            s.mutex.lock();
            try {
                if (a.engine.isClosed()) {
                    if (w != null) {
                        s.waiters.remove(w);
                    }
                    throw a.engine.closedException();
                }
                if (w != null && w.status == Waiter.Status.GRANTED) {
                    HoldImpl grant = Objects.requireNonNull(w.grant);
                    if (w.grantedByStore) {
                        a.metrics.acquired(lock.name(), a.ticker.read() - start);
                        lock.fireAcquired(grant.fencingToken);
                    }
                    result = grant;
                    return true;
                }
                long now = a.ticker.read();
                if (w != null && w.status == Waiter.Status.CLAIMED) {
                    attempt = false;
                } else if (queued) {
                    competing = true;
                    attempt = w == null || w.signalled || now - nextTryAt >= 0;
                } else {
                    HoldImpl holder = s.holder;
                    if (w == null && holder != null && !mayWait) {
                        a.metrics.notAcquired(lock.name(), 0);
                        result = null;
                        return true; // another owner of this client holds it: no round trip needed
                    }
                    // a newcomer that may wait does not barge past this client's own waiters: the first of them is
                    // woken to try (a barging newcomer would only make its attempt fail and queue again)
                    Waiter first = s.firstLocal();
                    competing =
                            holder == null && (w == null ? first == null || !mayWait : w.inStoreQueue || first == w);
                    attempt = competing && (w == null || w.signalled || now - nextTryAt >= 0);
                }
                if (attempt) {
                    // the first attempt of a waiter that may wait, on a store whose queue is the order, takes its
                    // place in that queue at once when no other attempt of this client is on its way: one that did
                    // not would write its entry, delete it again on a busy answer, and queue behind every client
                    // that came meanwhile on its next attempt
                    queueAttempt = w == null && mayWait && a.queueOrdered && !queued && s.attemptsInFlight == 0;
                    s.attemptsInFlight++;
                    wakeUpsBefore = s.wakeUps;
                }
                if (w != null) {
                    // consumed here; a signal after this point wakes the waiter again, so none is missed
                    w.signalled = false;
                    // a release must not hand the lock to a waiter whose own attempt is on its way to the store
                    w.attempting = attempt;
                    if (attempt && mayWait && (queued || a.queueOrdered)) {
                        queueAttempt = true;
                        w.inStoreQueue |= !queued; // from now on it has a place to give back
                    }
                }
            } finally {
                s.mutex.unlock();
            }

            if (attempt) {
                Lease lease = fixedLease != null ? Lease.fixed(fixedLease) : a.renewedLease;
                long sent = a.ticker.read();
                Attempt answer;
                try {
                    if (!subscribed && (w != null || (mayWait && a.recentlyBusy(lock.name())))) {
                        notifies = a.waiters.subscribe(s);
                        subscribed = true;
                    }
                    sent = a.ticker.read();
                    answer = a.store.tryAcquire(
                            Claim.lock(s.key, owner, lease, a.spareTokens), queueAttempt || (queued && mayWait));
                } catch (RuntimeException e) {
                    LockAcquirer.attemptDone(s);
                    a.waiters.leave(s, w);
                    a.waiters.abandonQuietly(s.key, owner, lease); // the grant may have happened with its answer lost
                    if (interruptible && interruptedBy(e)) {
                        InterruptedException ie = new InterruptedException(
                                "interrupted while asking the store for lock '" + lock.name() + "'");
                        ie.initCause(e);
                        throw ie;
                    }
                    throw storeFailure("acquire", s.key, e);
                }
                LockAcquirer.attemptDone(s);
                if (answer instanceof Attempt.Acquired
                        && a.ticker.read() - sent >= lease.length().toNanos()) {
                    // the lease ran out while the answer was on its way: the hold would be lost at birth, so it is
                    // given back and the acquire goes on within its wait, as after a busy answer
                    a.waiters.abandonQuietly(s.key, owner, lease);
                    answer = Attempt.busy(Duration.ZERO);
                }
                if (answer instanceof Attempt.Acquired acquired) {
                    HoldImpl h = new HoldImpl(
                            a.engine,
                            s,
                            lock,
                            owner,
                            threadView,
                            acquired.fencingToken(),
                            fixedLease,
                            sent,
                            lease.length().toNanos(),
                            acquired.spareTokens());
                    a.install(s, w, h);
                    a.metrics.acquired(lock.name(), a.ticker.read() - start);
                    lock.fireAcquired(h.fencingToken);
                    result = h;
                    return true;
                }
                if (!mayWait) {
                    a.metrics.notAcquired(lock.name(), 0);
                    result = null;
                    return true;
                }
                if (w != null) {
                    LockAcquirer.endAttempt(s, w);
                }
                long retry = Math.max(
                        LockAcquirer.MIN_RETRY_NANOS, LockAcquirer.nanos(((Attempt.Busy) answer).retryWithin()));
                if (w != null && !notifies) {
                    Backoff b = backoff;
                    if (b == null) {
                        b = new Backoff(LockAcquirer.POLL_BASE_NANOS, LockAcquirer.POLL_CAP_NANOS);
                        backoff = b;
                    }
                    retry = Math.min(retry, b.nextNanos());
                }
                nextTryAt = a.ticker.read() + retry;
                a.noteBusy(lock.name());
                if (w == null) {
                    // subscribe, then re-check at once; an attempt made while subscribed was that re-check, unless a
                    // wake-up came while it was on its way (it found no waiter to wake). A queueing attempt left a
                    // place in the store's queue, which the waiter gives back if it gives up.
                    this.w = join(subscribed ? wakeUpsBefore : LockWaiters.JOIN_TRY, queueAttempt);
                    continue;
                }
            } else if (w == null) {
                // a local owner holds the lock: wait for its release without asking the store
                this.w = join(LockWaiters.JOIN_QUIET, false);
                continue;
            }

            long now = a.ticker.read();
            if (now - deadline >= 0) {
                HoldImpl granted = a.waiters.giveUp(s, w, false);
                if (granted == null) {
                    a.metrics.notAcquired(lock.name(), now - start);
                }
                result = granted;
                return true;
            }
            waitNanos = competing ? Math.min(deadline - now, Math.max(0, nextTryAt - now)) : deadline - now;
            return false;
        }
    }

    private Waiter join(int wakeUpsSeen, boolean inStoreQueue) {
        Runnable r = wake != null ? wake : Waiter.unparker(Thread.currentThread());
        return a.waiters.join(s, lock, owner, threadView, fixedLease, queued, inStoreQueue, wakeUpsSeen, r);
    }
}
