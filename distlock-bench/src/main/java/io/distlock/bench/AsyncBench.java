package io.distlock.bench;

import io.distlock.DistributedLock;
import io.distlock.redis.RedisLockClient;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/*
 * Overview
 *
 * The row
 *   Issue 25's Redis figure: asynchronous acquire+release throughput with IN_FLIGHT acquisitions in flight at once on
 *   NAMES names, from one client, distlock's acquireAsync/releaseAsync against Redisson's lockAsync/unlockAsync on the
 *   same names. Each of the IN_FLIGHT chains acquires a name drawn at random, releases it, and starts its next
 *   acquisition from the release's completion, so no thread of the harness waits; the figure is completed cycles per
 *   second.
 *
 * Runs
 *   The two clients take turns in slices of the phase (distlock, Redisson, distlock, ...: ROUNDS each), so both see the
 *   same load on the shared machine; each slice's figure is printed, and the median of each client's slices gives the
 *   ratio.
 *
 * Redisson's thread ids
 *   Redisson's async lock is owned by a thread id passed by hand (lockAsync(threadId)); each cycle uses a fresh id so
 *   that the release, which may run on any thread, names the owner that acquired.
 */
/** distlock's asynchronous acquisition on Redis against Redisson's lockAsync; see the overview in the source. */
final class AsyncBench {
    static final int IN_FLIGHT = 64;
    static final int NAMES = 100;
    static final int ROUNDS = 3;

    private AsyncBench() {}

    /** One kind of async lock: start one acquire+release cycle of {@code name}'s lock. */
    interface Cycle {
        CompletionStage<?> run(int name);
    }

    static void run(String redisUri, Duration phase, PrintStream out) {
        try {
            runPhases(redisUri, phase, out);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (Exception e) {
            throw new IllegalStateException("the async benchmark failed: " + e, e);
        }
    }

    private static void runPhases(String redisUri, Duration phase, PrintStream out) throws Exception {
        String prefix = "bench-async-" + UUID.randomUUID().toString().substring(0, 8) + ":";
        Duration slice = phase.dividedBy(ROUNDS).compareTo(Duration.ofSeconds(1)) < 0
                ? Duration.ofSeconds(1)
                : phase.dividedBy(ROUNDS);
        out.printf("%n## Async acquire+release, %d in flight on %d names, one client%n%n", IN_FLIGHT, NAMES);
        out.printf("Slices of %.1f s, alternating; %d per client.%n%n", slice.toMillis() / 1000.0, ROUNDS);
        try (RedisLockClient distlock = RedisLockClient.builder().uri(redisUri).build()) {
            Config config = new Config();
            config.useSingleServer().setAddress(redisUri);
            RedissonClient redisson = Redisson.create(config);
            try {
                DistributedLock[] locks = new DistributedLock[NAMES];
                RLock[] rlocks = new RLock[NAMES];
                for (int i = 0; i < NAMES; i++) {
                    locks[i] = distlock.lock(prefix + "d" + i);
                    rlocks[i] = redisson.getLock(prefix + "r" + i);
                }
                AtomicLong ids = new AtomicLong(1_000_000);
                Cycle d = i -> locks[i].acquireAsync().thenCompose(h -> h.releaseAsync());
                Cycle r = i -> {
                    long id = ids.incrementAndGet();
                    RLock l = rlocks[i];
                    return l.lockAsync(id).thenCompose(v -> l.unlockAsync(id));
                };
                // warm-up
                var unusedD = measure(d, Duration.ofSeconds(1));
                var unusedR = measure(r, Duration.ofSeconds(1));
                double[] dOps = new double[ROUNDS];
                double[] rOps = new double[ROUNDS];
                out.println(
                        "| slice | distlock acquireAsync+releaseAsync, ops/s | Redisson lockAsync+unlockAsync, ops/s |");
                out.println("|---|---:|---:|");
                for (int k = 0; k < ROUNDS; k++) {
                    dOps[k] = measure(d, slice);
                    rOps[k] = measure(r, slice);
                    out.printf("| %d | %.0f | %.0f |%n", k + 1, dOps[k], rOps[k]);
                }
                double dm = median(dOps);
                double rm = median(rOps);
                out.printf("%n| median | %.0f | %.0f |%n", dm, rm);
                out.printf(
                        "%n**async ops/s, 64 in flight on 100 names: distlock ÷ Redisson lockAsync = %.2f×**%n",
                        dm / rm);
            } finally {
                redisson.shutdown();
            }
        }
    }

    /** Runs IN_FLIGHT chains of cycles for {@code slice}; returns completed cycles per second. */
    static double measure(Cycle cycle, Duration slice) throws Exception {
        LongAdder done = new LongAdder();
        LongAdder failed = new LongAdder();
        AtomicBoolean stop = new AtomicBoolean();
        List<CompletableFuture<Void>> chains = new ArrayList<>();
        long start = System.nanoTime();
        for (int c = 0; c < IN_FLIGHT; c++) {
            CompletableFuture<Void> end = new CompletableFuture<>();
            chains.add(end);
            next(cycle, done, failed, stop, end);
        }
        TimeUnit.NANOSECONDS.sleep(slice.toNanos());
        stop.set(true);
        long counted = done.sum();
        long elapsed = System.nanoTime() - start;
        CompletableFuture.allOf(chains.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
        if (failed.sum() > 0) {
            throw new IllegalStateException(failed.sum() + " cycles failed");
        }
        return counted / (elapsed / 1e9);
    }

    private static void next(
            Cycle cycle, LongAdder done, LongAdder failed, AtomicBoolean stop, CompletableFuture<Void> end) {
        if (stop.get()) {
            end.complete(null);
            return;
        }
        cycle.run(ThreadLocalRandom.current().nextInt(NAMES)).whenComplete((v, e) -> {
            if (e != null) {
                failed.increment();
            } else {
                done.increment();
            }
            next(cycle, done, failed, stop, end);
        });
    }

    static double median(double[] values) {
        double[] s = values.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }
}
