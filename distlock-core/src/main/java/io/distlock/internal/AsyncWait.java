package io.distlock.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Steps instead of a parked thread
 *   An asynchronous acquire or await is the same attempt loop as a blocking one, cut into steps (LockAttempt, the
 *   claims' and the latch's steps). Nothing waits between two steps: the waiter's wake-up (from the store's
 *   subscription, a local release or a hand-off) and its timer (the deadline or the next retry, a task on the client's
 *   timer thread) only schedule the next step on the client's executor (AsyncSupport). The wake-ups and the timer
 *   never run a step themselves, so the store's I/O thread and the timer thread never make a round trip or run user
 *   code.
 *
 * One step at a time
 *   schedule() counts requests; the first one submits the task, and the task runs steps until it has served every
 *   request counted meanwhile. So the steps of one wait never overlap and a wake-up during a step is never lost: it
 *   makes one more step.
 *
 * Completion from outside
 *   The future may be completed by its user (cancel, completeExceptionally, orTimeout) or by the client's close at any
 *   moment. That completion schedules a step, and the next step gives up: the waiter leaves the local queue, its store
 *   queue entry is abandoned and a hold handed to it meanwhile is released. A step that decided while the future was
 *   being completed from outside finds complete() refused, and releases the hold it got. Either way nothing is left.
 *
 * Completions
 *   The future is completed from a step, on the client's executor: dependent stages run there, never on the store's
 *   I/O thread or the timer thread.
 */
/** An asynchronous wait driven by wake-ups and timers instead of a parked thread; see the overview in the source. */
abstract class AsyncWait<T> implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(AsyncWait.class);

    /** How a decided acquire's hold (null: the wait ran out) becomes the future's value. */
    interface Deliver<T> {
        T value(@Nullable EngineHold hold);
    }

    final CompletableFuture<T> future = new CompletableFuture<>();
    private final AsyncSupport async;
    private final AtomicInteger requests = new AtomicInteger();
    /** Touched by steps only, which never overlap. */
    private @Nullable ScheduledFuture<?> timer;

    private boolean finished;

    AsyncWait(AsyncSupport async) {
        this.async = async;
    }

    /** Runs the wait until it is decided (true) or must wait at most {@link #waitNanos()} for a wake-up. */
    abstract boolean step() throws InterruptedException;

    /** After a step that did not decide: how long to wait for a wake-up before the next step. */
    abstract long waitNanos();

    /** After a step that decided: the hold got, or null. */
    abstract @Nullable EngineHold result();

    /** After a step that decided: the future's value; {@code hold} is {@link #result()}. */
    abstract T value(@Nullable EngineHold hold);

    /** The future was completed from outside before the wait decided: leave nothing behind. */
    abstract void abandon();

    /** Ends the wait's bookkeeping, once, however it ended. */
    abstract void end();

    /** Starts the wait: its first step is scheduled. */
    final CompletableFuture<T> start() {
        async.started(this);
        future.whenComplete((v, e) -> schedule());
        schedule();
        return future;
    }

    /** Asks for one more step; never blocks, so a store's I/O thread or a timer may call it. */
    final void schedule() {
        if (requests.getAndIncrement() == 0) {
            try {
                async.executor.execute(this);
            } catch (RejectedExecutionException e) {
                // the executor is shut down or full: the step cannot wait for it, and a wait must not be left behind
                log.debug("distlock: the async executor refused a step; running it on the calling thread", e);
                run();
            }
        }
    }

    @Override
    public final void run() {
        int served = requests.get();
        for (; ; ) {
            if (!finished) {
                stepOnce();
            }
            served = requests.addAndGet(-served);
            if (served == 0) {
                return;
            }
        }
    }

    private void stepOnce() {
        ScheduledFuture<?> t = timer;
        if (t != null) {
            timer = null;
            t.cancel(false);
        }
        if (future.isDone()) {
            finish();
            try {
                abandon();
            } catch (RuntimeException e) {
                log.warn("distlock: cleaning up after a cancelled wait failed", e);
            }
            return;
        }
        boolean decided;
        try {
            decided = step();
        } catch (InterruptedException | RuntimeException e) {
            finish();
            future.completeExceptionally(e);
            return;
        }
        if (decided) {
            finish();
            EngineHold hold = result();
            boolean delivered;
            try {
                delivered = future.complete(value(hold));
            } catch (RuntimeException e) {
                delivered = future.completeExceptionally(e);
            }
            if (!delivered && hold != null) {
                // cancelled while the hold was on its way: it is released, not left without an owner
                releaseQuietly(hold);
            }
            return;
        }
        long nanos = waitNanos();
        if (nanos <= 0) {
            schedule();
        } else if (nanos < AcquireCall.FOREVER / 2) {
            try {
                timer = async.timers.schedule(this::schedule, nanos, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException e) {
                schedule(); // the client is closing: the next step finds it closed
            }
        }
    }

    private void finish() {
        finished = true;
        async.ended(this);
        end();
    }

    /** Completes the future with the client's close; the step it schedules cleans up. */
    final void closing(RuntimeException closed) {
        var unused = future.completeExceptionally(closed);
    }

    private static void releaseQuietly(EngineHold hold) {
        try {
            hold.releaseHold();
        } catch (RuntimeException e) {
            log.warn("distlock: releasing {} after its wait was cancelled failed", hold.describe(), e);
        }
    }
}
