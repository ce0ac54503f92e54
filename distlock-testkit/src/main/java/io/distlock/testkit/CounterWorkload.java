package io.distlock.testkit;

import io.distlock.DistributedLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * The read-sleep-write counter: threads repeatedly take a lock, read a {@link FencedResource} with their fencing
 * token, pause, and write the value plus one. Without mutual exclusion increments are lost (and the resource
 * rejects stale tokens); with it, none are. Bounded in time; starts all threads at once from a gate.
 */
public final class CounterWorkload {

    /**
     * What a run did.
     *
     * @param increments writes the resource accepted
     * @param value the counter's final value
     * @param rejected operations the resource refused for stale tokens
     * @param maxInside the most threads ever inside the critical section at once
     * @param perThread increments per thread, in thread order
     */
    public record Result(long increments, long value, long rejected, int maxInside, List<Long> perThread) {
        /** Increments that were accepted but are missing from the value. */
        public long lostIncrements() {
            return increments - value;
        }
    }

    private CounterWorkload() {}

    /** Runs one platform thread per lock object for {@code duration}, pausing {@code pause} inside. */
    public static Result run(List<DistributedLock> locks, Duration duration, Duration pause) {
        return run(locks, duration, pause, Thread::new);
    }

    /** As {@link #run(List, Duration, Duration)}, with threads from {@code factory} (virtual threads, say). */
    public static Result run(List<DistributedLock> locks, Duration duration, Duration pause, ThreadFactory factory) {
        FencedResource resource = new FencedResource();
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger maxInside = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch gate = new CountDownLatch(1);
        List<AtomicLong> counts = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        long end = System.nanoTime() + duration.toNanos();
        for (DistributedLock lock : locks) {
            AtomicLong count = new AtomicLong();
            counts.add(count);
            threads.add(factory.newThread(() -> {
                try {
                    gate.await();
                    while (System.nanoTime() - end < 0) {
                        lock.lock();
                        try {
                            Object acquisition = new Object();
                            long token = lock.fencingToken();
                            maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                            OptionalLong v = resource.read(token, acquisition);
                            if (!pause.isZero()) {
                                LockSupport.parkNanos(pause.toNanos());
                            }
                            if (v.isPresent() && resource.write(token, acquisition, v.getAsLong() + 1)) {
                                count.incrementAndGet();
                            }
                            inside.decrementAndGet();
                        } finally {
                            lock.unlock();
                        }
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }));
        }
        threads.forEach(Thread::start);
        gate.countDown();
        for (Thread t : threads) {
            try {
                t.join(duration.toMillis() + TimeUnit.SECONDS.toMillis(30));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
            if (t.isAlive()) {
                throw new AssertionError("a workload thread is stuck: " + t + " " + List.of(t.getStackTrace()));
            }
        }
        Throwable t = failure.get();
        if (t != null) {
            throw new AssertionError("a workload thread failed: " + t, t);
        }
        List<Long> perThread = new ArrayList<>();
        for (AtomicLong c : counts) {
            perThread.add(c.get());
        }
        long total = perThread.stream().mapToLong(Long::longValue).sum();
        return new Result(total, resource.value(), resource.rejected(), maxInside.get(), perThread);
    }
}
