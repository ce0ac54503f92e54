package io.distlock.safety;

import io.distlock.DistributedLockException;
import io.distlock.LockClient;
import io.distlock.testkit.history.FencedResourceClient;
import io.distlock.testkit.history.HistoryWriter;
import io.distlock.testkit.history.RecordedHold;
import io.distlock.testkit.history.RecordedLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * W1 of FAULTS.md: the fenced counter. Each thread loops: take a hold (waiting at most {@code wait}), check it, read
 * the counter through the fenced resource, sleep a random time up to {@code think}, check again, write the value plus
 * one, release. Every step is recorded. Store errors are recorded (as unknown outcomes) and the loop goes on after a
 * short pause, so a fault does not end the workload.
 */
final class Workload {
    private final LockClient client;
    private final HistoryWriter history;
    private final String key;
    private final int threads;
    private final Duration wait;
    private final Duration think;
    private final int resourcePort;
    private final long seed;
    /**
     * Where the fenced resource is: this JVM's loopback, or, for a worker JVM in a network namespace of its own, the
     * address it is relayed at ({@code -Dsafety.resource.host}).
     */
    static final String RESOURCE_HOST = System.getProperty("safety.resource.host", "127.0.0.1");

    private boolean fixedThink;
    private final AtomicBoolean stop = new AtomicBoolean();
    private final AtomicLong increments = new AtomicLong();
    private final List<Thread> running = new ArrayList<>();
    private final AtomicReference<@Nullable Throwable> failure = new AtomicReference<>();

    Workload(
            LockClient client,
            HistoryWriter history,
            String key,
            int threads,
            Duration wait,
            Duration think,
            int resourcePort,
            long seed) {
        this.client = client;
        this.history = history;
        this.key = key;
        this.threads = threads;
        this.wait = wait;
        this.think = think;
        this.resourcePort = resourcePort;
        this.seed = seed;
    }

    /** Makes every hold last the whole think time instead of a random part of it: a slow holder, easy to hit. */
    Workload fixedThink() {
        this.fixedThink = true;
        return this;
    }

    /** Starts the threads; they run until {@link #stop()} or {@code duration} passes. */
    Workload start(Duration duration) {
        long end = System.nanoTime() + duration.toNanos();
        for (int i = 0; i < threads; i++) {
            SplittableRandom random = new SplittableRandom(seed * 31 + i);
            RecordedLock lock = new RecordedLock(client.lock(key), history);
            Thread t = new Thread(() -> loop(lock, random, end), history.process() + "-w" + i);
            t.setDaemon(true);
            running.add(t);
            t.start();
        }
        return this;
    }

    private void loop(RecordedLock lock, SplittableRandom random, long end) {
        try (FencedResourceClient resource =
                new FencedResourceClient(RESOURCE_HOST, resourcePort, Duration.ofSeconds(5))) {
            while (!stop.get() && System.nanoTime() - end < 0) {
                Optional<RecordedHold> h;
                try {
                    h = lock.tryAcquire(wait);
                } catch (DistributedLockException e) {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
                    continue;
                }
                if (h.isEmpty()) {
                    continue;
                }
                RecordedHold hold = h.get();
                if (hold.check()) {
                    OptionalLong v = resource.read(hold);
                    long sleep =
                            think.toNanos() <= 0 ? 0 : fixedThink ? think.toNanos() : random.nextLong(think.toNanos());
                    LockSupport.parkNanos(sleep);
                    if (v.isPresent() && hold.check() && resource.write(hold, v.getAsLong() + 1)) {
                        increments.incrementAndGet();
                    }
                }
                var unused = hold.release();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException | Error e) {
            failure.compareAndSet(null, e);
            e.printStackTrace();
        }
    }

    void stop() {
        stop.set(true);
    }

    /** Waits for the threads to finish (at most {@code bound}); returns whether they did. */
    boolean join(Duration bound) throws InterruptedException {
        long end = System.nanoTime() + bound.toNanos();
        for (Thread t : running) {
            long left = end - System.nanoTime();
            if (left > 0) {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            }
        }
        return running.stream().noneMatch(Thread::isAlive);
    }

    long increments() {
        return increments.get();
    }

    /** What ended a thread other than the end of the run (a bug of the workload or the library), or null. */
    @Nullable
    Throwable failure() {
        return failure.get();
    }
}
