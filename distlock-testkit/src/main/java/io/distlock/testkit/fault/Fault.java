package io.distlock.testkit.fault;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * A fault in force: made by a {@link FaultProxy}, {@link ProcessFaults} or {@link StoreFaults}, it heals by itself
 * when its duration passes, or earlier at {@link #heal()} or {@link #close()} (so a try-with-resources block bounds
 * it too). Healing runs the undo step once, whoever triggers it. A one-shot fault (a deleted hold, a killed session,
 * a failover) has nothing to undo and is healed when its call returns.
 */
public final class Fault implements AutoCloseable {
    private static final ScheduledExecutorService HEALER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "distlock-fault-healer");
        t.setDaemon(true);
        return t;
    });

    private final String name;
    private final String target;
    private final Runnable undo;
    private final FaultLog log;
    private final long startedAt;
    private final AtomicBoolean healed = new AtomicBoolean();
    private final CountDownLatch done = new CountDownLatch(1);
    private volatile @Nullable ScheduledFuture<?> timer;
    private volatile @Nullable RuntimeException undoFailure;

    private Fault(String name, String target, Runnable undo, FaultLog log) {
        this.name = name;
        this.target = target;
        this.undo = undo;
        this.log = log;
        this.startedAt = System.nanoTime();
    }

    /**
     * Starts a fault: runs {@code apply} now, logs the start once it is in force, and schedules {@code undo} after
     * {@code duration}. If {@code apply} throws, nothing is logged and nothing is undone.
     *
     * @throws IllegalArgumentException if {@code duration} is negative
     */
    public static Fault start(
            String name, String target, Duration duration, Runnable apply, Runnable undo, FaultLog log) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(duration, "duration");
        Objects.requireNonNull(apply, "apply");
        Objects.requireNonNull(undo, "undo");
        Objects.requireNonNull(log, "log");
        if (duration.isNegative()) {
            throw new IllegalArgumentException("duration must not be negative: " + duration);
        }
        apply.run();
        // logged once in force: a pause takes effect when kill returns, not when it is spawned
        Fault f = new Fault(name, target, undo, log);
        log.record(name, target, true);
        f.timer = HEALER.schedule(f::heal, duration.toNanos(), TimeUnit.NANOSECONDS);
        return f;
    }

    /**
     * A fault that happens at once and has nothing to undo (a deleted key, a killed session). Its start is logged
     * before {@code apply} runs and its end after, so that the logged window covers the moment the store changed,
     * wherever in {@code apply} that was (a revocation lists the leases first, then revokes them). If {@code apply}
     * throws, the end is logged and the failure thrown.
     */
    public static Fault oneShot(String name, String target, Runnable apply, FaultLog log) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(apply, "apply");
        Objects.requireNonNull(log, "log");
        Fault f = new Fault(name, target, () -> {}, log);
        log.record(name, target, true);
        try {
            apply.run();
        } finally {
            f.heal();
        }
        return f;
    }

    public String name() {
        return name;
    }

    public String target() {
        return target;
    }

    /** {@link System#nanoTime()} when it was in force. */
    public long startedAt() {
        return startedAt;
    }

    public boolean isActive() {
        return !healed.get();
    }

    /**
     * Undoes the fault now if it is still in force; returns once it is healed (also when another thread is healing
     * it).
     *
     * @throws RuntimeException the undo step's failure, if it failed
     */
    public void heal() {
        if (healed.compareAndSet(false, true)) {
            ScheduledFuture<?> t = timer;
            if (t != null) {
                t.cancel(false);
            }
            try {
                undo.run();
            } catch (RuntimeException e) {
                undoFailure = e;
            } finally {
                log.record(name, target, false);
                done.countDown();
            }
        } else {
            try {
                done.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        RuntimeException failure = undoFailure;
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * Waits until the fault healed by itself (or was healed), at most {@code bound}.
     *
     * @return whether it is healed
     */
    public boolean awaitHealed(Duration bound) throws InterruptedException {
        return done.await(bound.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** Heals the fault (see {@link #heal()}). */
    @Override
    public void close() {
        heal();
    }

    @Override
    public String toString() {
        return name + " on " + target + (isActive() ? " (active)" : " (healed)");
    }
}
