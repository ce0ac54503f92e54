package io.distlock.redis;

import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Waiting
 *   A waiting thread sleeps without a timeout (a timed park would arm a kernel timer for every wait), and one daemon
 *   thread per JVM (like the JDK's own CompletableFuture delayer) looks at the waits in progress every PERIOD_MILLIS
 *   and has each command whose deadline has passed cancelled, as a timed wait would have. A wait therefore ends at
 *   most about PERIOD_MILLIS after its deadline. A wait on the checking thread or on a thread that cancels for it (in
 *   a callback that a cancellation ran) falls back to a timed wait, since the checker may be the one busy with it.
 *
 * Slots
 *   Each thread has one Slot; a wait writes only its own slot's fields. The checker looks at the slots of the threads
 *   that waited lately: a slot without a wait for as long as the checker's idle time leaves the checked set (so
 *   100,000 virtual threads that once waited cost nothing), and its thread's next wait puts it back. A wait nested in
 *   another on the same thread (a ForkJoinPool worker runs queued tasks inside CompletableFuture.get()) puts the outer
 *   wait back in the slot when it ends.
 *
 * Threads
 *   The checking thread ends once no wait has begun or been in progress for a while (a second for SHARED), and the
 *   next wait starts a new one, so an application that stopped using Redis (or was undeployed) keeps no thread of
 *   ours.
 *
 * Cancelling
 *   The checker does not cancel a command itself: a cancellation runs the command's callbacks (a CommandListener of a
 *   Lettuce client the caller handed in, say), and one that is slow or blocks must not hold up the deadlines of the
 *   other waits. The checker hands each cancellation to a small pool of daemon threads (CANCELLERS at most; each ends
 *   after a second without work, so none is kept while nothing is cancelled, except one stuck in a callback that does
 *   not return); only when all of them are busy, or none can be started, does it cancel on its own thread. A command
 *   whose cancellation is under way is not handed off again; one whose cancellation failed (threw, or left it
 *   incomplete) is, at the next look.
 */
/** Waits for a command's answer with a deadline, without a timed sleep per wait; see the overview in the source. */
final class AwaitDeadlines {
    static final long PERIOD_MILLIS = 10;
    static final int CANCELLERS = 8;
    private static final long PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(PERIOD_MILLIS);
    private static final Logger log = LoggerFactory.getLogger(AwaitDeadlines.class);

    static final AwaitDeadlines SHARED = new AwaitDeadlines("distlock-redis-deadlines", TimeUnit.SECONDS.toNanos(1));

    /** One thread's wait: the command it waits for (null between waits) and when to give up on it. */
    static final class Slot {
        final Thread thread;
        volatile @Nullable CompletableFuture<?> waitingFor;
        volatile long deadline;
        /** Whether the slot is in the checked set (it may be there a moment longer or sooner; see {@link #publish}). */
        volatile boolean checked;
        /** Since when (checker's clock) the checker has seen the slot without a wait; written by the checker only. */
        long idleSince;
        /**
         * The deadline of the slot's wait at the checker's last look; written by the checker only. A deadline that has
         * changed since means a wait began and ended in between: short waits between two looks count as activity.
         */
        long seenDeadline;

        Slot(Thread thread) {
            this.thread = thread;
        }
    }

    private final String threadName;
    private final long idleNanos;
    private final Set<Slot> slots = ConcurrentHashMap.newKeySet();
    private final ThreadLocal<Slot> slot = ThreadLocal.withInitial(() -> new Slot(Thread.currentThread()));
    private final Object startLock = new Object();
    /** Whether a checking thread runs (or is being started); changed only under {@link #startLock}. */
    private volatile boolean running;
    /** Runs the cancellations (and the callbacks they run); its threads end after a second without work. */
    private final ThreadPoolExecutor cancellers;
    /** The commands whose cancellation has been handed off and has not ended yet (each is handed off once). */
    private final Set<CompletableFuture<?>> cancelling = ConcurrentHashMap.newKeySet();

    /**
     * A checker named {@code threadName} that ends after {@code idleNanos} in which no wait began or was in progress,
     * and forgets a thread's slot after as long without a wait on it.
     */
    AwaitDeadlines(String threadName, long idleNanos) {
        this.threadName = threadName;
        this.idleNanos = idleNanos;
        AtomicInteger cancellerNumbers = new AtomicInteger();
        this.cancellers = new ThreadPoolExecutor(
                0,
                CANCELLERS,
                1,
                TimeUnit.SECONDS,
                new SynchronousQueue<>(),
                r -> new DeadlineThread(r, threadName + "-cancel-" + cancellerNumbers.incrementAndGet()),
                new ThreadPoolExecutor.CallerRunsPolicy()); // all busy: the checker cancels itself
    }

    /**
     * The answer of {@code command}, waiting at most until {@code System.nanoTime()} reaches {@code deadline}; then the
     * command is cancelled (a command not yet sent is never sent) and a {@link TimeoutException} thrown. Not
     * interruptible: an interrupt is kept for the caller.
     *
     * @throws ExecutionException the command failed
     * @throws CancellationException somebody else cancelled the command
     */
    <T> T await(CompletableFuture<T> command, long deadline) throws ExecutionException, TimeoutException {
        if (Thread.currentThread() instanceof DeadlineThread) {
            return get(command, deadline, true); // the checker may be this thread, or busy with this cancellation
        }
        Slot s = slot.get();
        CompletableFuture<?> outer = s.waitingFor;
        long outerDeadline = s.deadline;
        try {
            publish(s, command, deadline);
            return get(command, deadline, false);
        } finally {
            if (outer == null) {
                s.waitingFor = null;
            } else {
                publish(s, outer, outerDeadline); // a wait this one was nested in goes on
            }
        }
    }

    /**
     * Makes a wait visible to the checker. The wait is written before {@code checked} and {@code running} are read, and
     * the checker writes those before it looks at the wait again, so either this thread sees that it must put the slot
     * back or start a checker, or the checker sees the wait.
     */
    private void publish(Slot s, CompletableFuture<?> command, long deadline) {
        s.deadline = deadline; // before waitingFor: the checker reads them the other way round
        s.waitingFor = command;
        if (!s.checked) {
            s.checked = true;
            slots.add(s);
        }
        if (!running) {
            startChecker();
        }
    }

    /**
     * The answer of {@code command}, keeping an interrupt for the caller. A {@code timed} wait ends itself at the
     * deadline and cancels the command; an untimed one is ended by the checker's cancellation.
     */
    private static <T> T get(CompletableFuture<T> command, long deadline, boolean timed)
            throws ExecutionException, TimeoutException {
        boolean interrupted = false;
        try {
            for (; ; ) {
                try {
                    return timed
                            ? command.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)
                            : command.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (TimeoutException e) {
                    command.cancel(false);
                    throw e;
                } catch (CancellationException e) {
                    // the checker cancels only after the deadline (one clock for all threads); a cancellation
                    // before it was somebody else's
                    if (System.nanoTime() - deadline >= 0) {
                        throw new TimeoutException("no answer by the deadline");
                    }
                    throw e;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Threads whose slot the checker looks at: those that waited lately and are alive, as far as it has seen. */
    int slots() {
        return slots.size();
    }

    /** Whether a checking thread runs; for tests. */
    boolean checking() {
        return running;
    }

    private void startChecker() {
        synchronized (startLock) {
            if (running) {
                return;
            }
            new DeadlineThread(this::check, threadName).start();
            running = true;
        }
    }

    private void check() {
        boolean stopped = false;
        try {
            long idleSince = System.nanoTime();
            for (; ; ) {
                try {
                    long now = System.nanoTime();
                    if (scan(now)) {
                        idleSince = now;
                    } else if (now - idleSince >= idleNanos && stopUnlessWaiting()) {
                        stopped = true;
                        return;
                    }
                } catch (RuntimeException e) { // never let the thread that bounds every wait die of a bug
                    log.error("distlock: checking the deadlines of Redis commands failed", e);
                }
                LockSupport.parkNanos(this, PERIOD_NANOS);
            }
        } finally {
            if (!stopped) { // died of an Error: let another checker take over the waits in progress
                synchronized (startLock) {
                    running = false;
                }
                startChecker();
            }
        }
    }

    /**
     * Ends this checker unless a wait began meanwhile. A wait that published itself before {@code running} went false
     * is seen by the scan below; a later one sees {@code running} false and starts a new checker.
     */
    private boolean stopUnlessWaiting() {
        synchronized (startLock) {
            running = false;
        }
        if (!scan(System.nanoTime())) {
            return true;
        }
        synchronized (startLock) {
            if (running) {
                return true; // a wait started a new checker already
            }
            running = true;
            return false;
        }
    }

    /**
     * Has the commands whose deadline has passed cancelled (see {@link #cancel}); forgets the slots of ended threads
     * and of threads without a wait for the idle time. Whether any wait is in progress or began since the last scan.
     *
     * <p>A wait that began and ended between two scans counts: most waits are a round trip of well under a
     * millisecond, so a checker that counted only the waits it caught in progress took a thread that waits every few
     * milliseconds for an idle one, ended, and had that thread start a new checker (a thread start, on its way to
     * Redis) about once per idle time, and forgot its slot as often.
     */
    private boolean scan(long now) {
        boolean waiting = false;
        for (Slot s : slots) {
            CompletableFuture<?> command = s.waitingFor;
            long deadline = s.deadline; // after waitingFor: publish writes them the other way round
            boolean waitedSince = deadline != s.seenDeadline;
            s.seenDeadline = deadline;
            if (s.waitingFor != command) {
                // a wait began (or a nested one ended) between the two reads: the deadline may be the new wait's, not
                // that of the command read first, so cancel nothing now and look again at the next scan
                s.idleSince = 0;
                waiting = true;
                continue;
            }
            if (command == null) {
                if (!s.thread.isAlive()) {
                    slots.remove(s);
                } else if (waitedSince || s.idleSince == 0) {
                    s.idleSince = now | 1; // idle from now on; 0 means "seen waiting"
                    waiting |= waitedSince;
                } else if (now - s.idleSince >= idleNanos) {
                    forget(s);
                }
                continue;
            }
            s.idleSince = 0;
            waiting = true;
            if (now - deadline >= 0 && !command.isDone() && cancelling.add(command)) {
                try {
                    cancellers.execute(() -> cancel(command));
                } catch (RuntimeException e) { // no canceller thread could be started: cancel here, as before
                    cancel(command);
                } catch (Error e) { // the checker dies of it (see check); its successor sends the command again
                    cancelling.remove(command);
                    throw e;
                }
            }
        }
        return waiting;
    }

    /**
     * Cancels a command whose time is up, on a canceller thread (or the checker's, when they are all busy); when that
     * fails, the next scan sends it again.
     */
    private void cancel(CompletableFuture<?> command) {
        try {
            command.cancel(false);
        } catch (RuntimeException e) { // a callback of the command's: the other waits still get checked
            log.warn("distlock: cancelling a Redis command whose time was up failed", e);
        } finally {
            cancelling.remove(command); // done, or to be sent again at the next look
        }
    }

    /** Takes an idle slot out of the checked set, unless its thread began a wait meanwhile (see {@link #publish}). */
    private void forget(Slot s) {
        s.checked = false;
        slots.remove(s);
        s.idleSince = 0;
        if (s.waitingFor != null) {
            s.checked = true;
            slots.add(s);
        }
    }

    /**
     * The checking thread, and the threads that cancel for it: a wait on one of them (in a callback a cancellation ran)
     * does not count on the checker, which may be the thread itself or may be cancelling on its own thread.
     */
    private static final class DeadlineThread extends Thread {
        DeadlineThread(Runnable task, String name) {
            // no inherited thread locals or context class loader from whichever caller happens to start it
            super(null, task, name, 0, false);
            setDaemon(true);
            setContextClassLoader(null);
        }
    }
}
