package io.distlock.redis;

import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Waits for a command's answer with a deadline, without a timed sleep per wait.
 *
 * <p>A timed park arms a kernel timer for every wait; on the machines we measure on that costs the waiting thread about
 * 1 µs of CPU per round trip, more than the rest of distlock's client path between the engine and Lettuce. Here the
 * waiting thread sleeps without a timeout, and one daemon thread per JVM (like the JDK's own {@code CompletableFuture}
 * delayer) looks at the waits in progress every {@value #PERIOD_MILLIS} ms and cancels each command whose deadline has
 * passed, as a timed wait would have. A wait therefore ends at most about {@value #PERIOD_MILLIS} ms after its
 * deadline. The checking thread ends once no wait has been in progress for a second, and the next wait starts a new
 * one, so an application that stopped using Redis (or was undeployed) keeps no thread of ours.
 *
 * <p>Each thread has one {@link Slot}, made on its first wait and dropped by the checking thread after the thread ended;
 * a wait only writes its slot's fields.
 */
final class AwaitDeadlines {
    static final long PERIOD_MILLIS = 10;
    private static final long PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(PERIOD_MILLIS);
    private static final Logger log = LoggerFactory.getLogger(AwaitDeadlines.class);

    static final AwaitDeadlines SHARED = new AwaitDeadlines("distlock-redis-deadlines", TimeUnit.SECONDS.toNanos(1));

    /** One thread's wait: the command it waits for (null between waits) and when to give up on it. */
    static final class Slot {
        final Thread thread;
        volatile @Nullable CompletableFuture<?> waitingFor;
        volatile long deadline;
        /** The command this slot's checker cancelled because its time was up. */
        volatile @Nullable CompletableFuture<?> expired;

        Slot(Thread thread) {
            this.thread = thread;
        }
    }

    private final String threadName;
    private final long idleNanos;
    private final Set<Slot> slots = ConcurrentHashMap.newKeySet();
    private final ThreadLocal<Slot> slot = ThreadLocal.withInitial(this::newSlot);
    private final Object startLock = new Object();
    /** Whether a checking thread runs (or is being started); changed only under {@link #startLock}. */
    private volatile boolean running;

    /** A checker named {@code threadName} that ends after {@code idleNanos} without a wait in progress. */
    AwaitDeadlines(String threadName, long idleNanos) {
        this.threadName = threadName;
        this.idleNanos = idleNanos;
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
        Slot s = slot.get();
        s.deadline = deadline;
        s.waitingFor = command;
        boolean interrupted = false;
        try {
            if (!running) { // after publishing the wait: a checker that is ending sees it, or we see it ended
                startChecker();
            }
            for (; ; ) {
                try {
                    return command.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (CancellationException e) {
                    if (s.expired == command) {
                        throw new TimeoutException("no answer by the deadline");
                    }
                    throw e;
                }
            }
        } finally {
            s.waitingFor = null;
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Threads that have waited here and not ended yet (as far as the checker has seen); for tests. */
    int slots() {
        return slots.size();
    }

    /** Whether a checking thread runs; for tests. */
    boolean checking() {
        return running;
    }

    private Slot newSlot() {
        Slot s = new Slot(Thread.currentThread());
        slots.add(s);
        return s;
    }

    private void startChecker() {
        synchronized (startLock) {
            if (running) {
                return;
            }
            Thread t = new Thread(this::check, threadName);
            t.setDaemon(true);
            t.setContextClassLoader(null);
            t.start();
            running = true;
        }
    }

    private void check() {
        long idleSince = System.nanoTime();
        for (; ; ) {
            try {
                long now = System.nanoTime();
                if (expireOverdue(now)) {
                    idleSince = now;
                } else if (now - idleSince >= idleNanos && stopUnlessWaiting()) {
                    return;
                }
                LockSupport.parkNanos(this, PERIOD_NANOS);
            } catch (Throwable e) { // never let the thread that bounds every wait die
                log.error("distlock: checking the deadlines of Redis commands failed", e);
                LockSupport.parkNanos(this, PERIOD_NANOS);
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
        if (!expireOverdue(System.nanoTime())) {
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

    /** Cancels the commands whose deadline has passed; drops the slots of ended threads. Whether any wait is on. */
    private boolean expireOverdue(long now) {
        boolean waiting = false;
        for (Slot s : slots) {
            CompletableFuture<?> command = s.waitingFor;
            if (command == null) {
                if (!s.thread.isAlive()) {
                    slots.remove(s);
                }
                continue;
            }
            waiting = true;
            if (now - s.deadline >= 0 && !command.isDone()) {
                s.expired = command;
                command.cancel(false);
            }
        }
        return waiting;
    }
}
