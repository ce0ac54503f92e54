package io.distlock.bench;

import static io.distlock.bench.Harness.row;

import io.distlock.DistributedLock;
import io.distlock.bench.Harness.Result;
import io.distlock.bench.Scenarios.Timing;
import io.distlock.internal.EngineConfig;
import io.distlock.internal.LockEngine;
import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.Lease;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/*
 * Overview
 *
 * What it measures
 *   The engine's own cost per uncontended lock()+unlock(): one in-memory store (MapLockStore, no I/O), called
 *   directly (tryAcquire of a lock claim made once, then release of its hold) and through a LockEngine over that
 *   same store (DistributedLock.lock(), then unlock(), one lock object kept), on one thread. The difference per
 *   pair is what the engine adds: owner and key, per-name state, re-entry count, watchdog registration, the
 *   Attempt's handling and the release's bookkeeping. The two use different names, so they never meet.
 *
 * Hot loop
 *   Harness.interleaved runs the two in turn, in a shuffled order each round, after each has been warmed up alone
 *   until the JIT is quiet, so load that comes and goes on the machine hits both alike. Each turn runs BATCH pairs,
 *   so the clock is read once per BATCH (a direct pair takes about as long as two clock reads). Caches and branch
 *   predictors stay warm with the engine's code: the least the engine can cost.
 *
 * After a round trip
 *   In use, every lock()+unlock() waits for the store between its steps, and the engine's code runs after the
 *   thread slept and the client library's I/O code ran. So the second section runs each pair after one Redis PING on
 *   a Lettuce connection (when a Redis server answers at --redis), in a shuffled order each round, and times the pair
 *   alone, not the PING: the engine's cost as it runs between round trips.
 *
 * Reading it
 *   The p50s: on a shared machine a turn that loses its core meanwhile takes milliseconds longer, and that lands on
 *   the mean, more often on the longer turns (the engine's).
 */
/** The engine's own cost per uncontended lock+unlock, over an in-memory store; needs no server. */
final class EngineBench {
    /** lock+unlock pairs per timed turn in the hot loop. */
    static final int BATCH = 100;

    static final String DIRECT = "in-memory store called directly: tryAcquire + release";
    static final String ENGINE = "the same store through the engine: lock() + unlock()";

    private final Report report;
    private final Timing timing;

    private EngineBench(Duration phase, PrintStream out) {
        this.report = new Report(out);
        this.timing = Timing.of(phase);
    }

    /**
     * Runs the engine row and prints a Markdown report.
     *
     * @param redisUri the Redis server whose PING precedes each pair in the second section; skipped when it does not
     *     answer
     * @param phase the measured duration of each section (warm-up is half of it, between 0.5 and 3 s)
     */
    static void run(String redisUri, Duration phase, PrintStream out) {
        new EngineBench(phase, out).run(redisUri);
    }

    private void run(String redisUri) {
        report.title("Engine cost per uncontended lock+unlock, in-memory store");
        report.environment("start");
        MapLockStore store = new MapLockStore();
        EngineConfig config = EngineConfig.defaults();
        try (LockEngine engine = LockEngine.create(store, config)) {
            LockKey key = new LockKey("direct");
            // the form of the engine's owner ids, so both sides compare strings of about the same length
            OwnerId owner = new OwnerId(
                    config.clientId() + ":t" + Thread.currentThread().getId());
            Claim claim = Claim.lock(key, owner, Lease.renewed(config.watchdogLease()), 0);
            DistributedLock lock = engine.lock("engine");
            Runnable direct = () -> {
                Attempt a = store.tryAcquire(claim, false);
                if (!(a instanceof Attempt.Acquired acquired)) {
                    throw new IllegalStateException("not acquired: " + a);
                }
                if (!store.release(HeldClaim.lock(key, owner, acquired.fencingToken()))) {
                    throw new IllegalStateException("not released: " + key);
                }
            };
            Runnable throughEngine = () -> {
                lock.lock();
                lock.unlock();
            };
            List<Result> hot =
                    Harness.interleaved(List.of(DIRECT, ENGINE), List.of(batch(direct), batch(throughEngine)), timing);
            report.section(
                    "Hot loop, interleaved: a batch of " + BATCH + " lock+unlock pairs of each in turn, 1 thread");
            double hotDiff = table(hot, BATCH);

            report.section(
                    "After a round trip, interleaved: each pair after one Redis PING, only the pair timed, 1 thread");
            double coldDiff = Double.NaN;
            try (RedisRoundTrip ping = RedisRoundTrip.open(redisUri)) {
                List<Result> cold = afterRoundTrip(ping::run, List.of(DIRECT, ENGINE), List.of(direct, throughEngine));
                coldDiff = table(cold, 1);
            } catch (RedisException e) {
                report.line("- skipped: no Redis answers at " + redisUri + " (" + e + ")");
            }
            report.environment("end");
            report.section("Target (issue 28)");
            report.line(
                    "Read from the p50s: on a shared machine a turn that loses its core meanwhile takes milliseconds"
                            + " longer, and that lands on the mean, more often on the longer turns (the engine's).");
            report.line("");
            report.targetHeader();
            report.target(
                    "the engine's own cost per uncontended lock+unlock, µs, after a round trip (p50 engine − p50 store)",
                    coldDiff / 1000,
                    "<=",
                    3,
                    false);
            report.target(
                    "the engine's own cost per uncontended lock+unlock, µs, hot loop (p50 engine − p50 store)",
                    hotDiff / 1000,
                    "<=",
                    3,
                    false);
        }
    }

    /** A turn of {@link #BATCH} pairs. */
    private static Harness.Body batch(Runnable pair) {
        return (t, p) -> {
            for (int i = 0; i < BATCH; i++) {
                pair.run();
            }
        };
    }

    /**
     * Prints the two rows per pair ({@code pairs} pairs per timed turn) and the engine's cost; returns that cost from
     * the p50s, in nanoseconds.
     */
    private double table(List<Result> rows, int pairs) {
        report.line("| path | pairs | mean ns / pair | p50 ns / pair | p99 ns / pair | errors |");
        report.line("| --- | ---: | ---: | ---: | ---: | ---: |");
        for (Result r : rows) {
            report.line(String.format(
                    Locale.ROOT,
                    "| %s | %,d | %s | %s | %s | %d |",
                    r.label(),
                    r.ops() * pairs,
                    Report.num(meanNanos(r, pairs)),
                    Report.num(r.p50Micros() * 1000 / pairs),
                    Report.num(r.p99Micros() * 1000 / pairs),
                    r.errors()));
        }
        for (Result r : rows) {
            if (r.firstError() != null) {
                report.line("");
                report.line("- " + r.label() + ": first error: `" + r.firstError() + "`");
            }
        }
        Result d = row(rows, DIRECT);
        Result e = row(rows, ENGINE);
        double meanDiff = meanNanos(e, pairs) - meanNanos(d, pairs);
        double p50Diff = (e.p50Micros() - d.p50Micros()) * 1000 / pairs;
        report.line("");
        report.line(String.format(
                Locale.ROOT,
                "- the engine's own cost per uncontended lock+unlock: %.0f ns (p50), %.0f ns (mean)",
                p50Diff,
                meanDiff));
        return p50Diff;
    }

    /**
     * The pairs one of each in turn, in a new random order every round, each after {@code roundTrip} (not timed), for
     * the warm-up and then the measured window; each result's rate is its pairs over the time spent in them.
     */
    private List<Result> afterRoundTrip(Runnable roundTrip, List<String> labels, List<Runnable> pairs) {
        int n = pairs.size();
        Harness.LongList[] lat = new Harness.LongList[n];
        long[] spent = new long[n];
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            lat[i] = new Harness.LongList();
            order[i] = i;
        }
        SplittableRandom random = new SplittableRandom(Harness.INTERLEAVE_SEED);
        long warmEnd = System.nanoTime() + timing.warmup().toNanos();
        long end = warmEnd + timing.measure().toNanos();
        for (long now = System.nanoTime(); now - end < 0; now = System.nanoTime()) {
            boolean measuring = now - warmEnd >= 0;
            Harness.shuffle(order, random);
            for (int i : order) {
                roundTrip.run();
                long start = System.nanoTime();
                pairs.get(i).run();
                long took = System.nanoTime() - start;
                if (measuring) {
                    lat[i].add(took);
                    spent[i] += took;
                }
            }
        }
        List<Result> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            long ops = lat[i].size();
            out.add(Result.of(
                    labels.get(i),
                    1,
                    Math.max(1, spent[i]),
                    new long[] {ops},
                    new Harness.LongList[] {lat[i]},
                    new Harness.Probe(1),
                    new long[] {0},
                    null,
                    0,
                    ops,
                    List.of()));
        }
        return out;
    }

    /** Nanoseconds per lock+unlock pair: the time spent in the row's turns over its pairs. */
    static double meanNanos(Result r, int pairsPerTurn) {
        return 1e9 / (r.opsPerSec() * pairsPerTurn);
    }

    /** One Lettuce connection whose PING is the round trip before each pair. */
    private static final class RedisRoundTrip implements AutoCloseable {
        private final RedisClient client;
        private final StatefulRedisConnection<String, String> connection;

        private RedisRoundTrip(RedisClient client, StatefulRedisConnection<String, String> connection) {
            this.client = client;
            this.connection = connection;
        }

        static RedisRoundTrip open(String uri) {
            RedisClient client = RedisClient.create(RedisURI.create(uri));
            try {
                return new RedisRoundTrip(client, client.connect());
            } catch (RuntimeException e) {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
                throw e;
            }
        }

        void run() {
            var unused = connection.sync().ping();
        }

        @Override
        public void close() {
            connection.close();
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }
}
