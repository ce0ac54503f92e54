package io.distlock.bench;

import static io.distlock.bench.Harness.row;

import io.distlock.DistributedLock;
import io.distlock.bench.Harness.Result;
import io.distlock.bench.Scenarios.Timing;
import io.distlock.internal.EngineConfig;
import io.distlock.internal.LockEngine;
import io.distlock.spi.Attempt;
import io.distlock.spi.Lease;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/*
 * Overview
 *
 * What it measures
 *   The engine's own cost per uncontended lock()+unlock(): one in-memory store (MapLockStore, no I/O), called
 *   directly (tryAcquire, then release, with a key, owner and lease made once) and through a LockEngine over that
 *   same store (DistributedLock.lock(), then unlock(), one lock object kept), on one thread. The difference per
 *   operation is what the engine adds: owner and key, per-name state, re-entry count, watchdog registration, the
 *   Attempt's handling and the release's bookkeeping. The two use different names, so they never meet.
 *
 * How
 *   Harness.interleaved runs the two bodies in turn, in a shuffled order each round, after each has been warmed up
 *   alone until the JIT is quiet, so load that comes and goes on the machine hits both alike. Each body runs BATCH
 *   lock+unlock pairs, so the clock is read once per BATCH: a direct pair takes about as long as two clock reads.
 *   The mean per pair is the time spent in a body over its pairs; the p50 per pair is the p50 of its batches over
 *   BATCH.
 */
/** The engine's own cost per uncontended lock+unlock, over an in-memory store; needs no server. */
final class EngineBench {
    /** lock+unlock pairs per timed body call. */
    static final int BATCH = 100;

    static final String DIRECT = "in-memory store called directly: tryAcquire + release";
    static final String ENGINE = "the same store through the engine: lock() + unlock()";

    private EngineBench() {}

    /**
     * Runs the engine row and prints a Markdown report.
     *
     * @param phase the measured duration (warm-up is half of it, between 0.5 and 3 s, then until the JIT is quiet)
     */
    static void run(Duration phase, PrintStream out) {
        Report report = new Report(out);
        report.title("Engine cost per uncontended lock+unlock, in-memory store — no server");
        report.environment("start");
        Timing timing = Timing.of(phase);
        MapLockStore store = new MapLockStore();
        EngineConfig config = EngineConfig.defaults();
        try (LockEngine engine = LockEngine.create(store, config)) {
            LockKey key = new LockKey("direct");
            // the form of the engine's owner ids, so both sides compare strings of about the same length
            OwnerId owner = new OwnerId(
                    config.clientId() + ":t" + Thread.currentThread().getId());
            Lease lease = Lease.renewed(config.watchdogLease());
            DistributedLock lock = engine.lock("engine");
            Harness.Body direct = (t, p) -> {
                for (int i = 0; i < BATCH; i++) {
                    Attempt a = store.tryAcquire(key, owner, lease, false);
                    if (!(a instanceof Attempt.Acquired)) {
                        throw new IllegalStateException("not acquired: " + a);
                    }
                    if (!store.release(key, owner)) {
                        throw new IllegalStateException("not released: " + key);
                    }
                }
            };
            Harness.Body throughEngine = (t, p) -> {
                for (int i = 0; i < BATCH; i++) {
                    lock.lock();
                    lock.unlock();
                }
            };
            List<Result> rows = Harness.interleaved(List.of(DIRECT, ENGINE), List.of(direct, throughEngine), timing);
            report.section("Interleaved: one batch of " + BATCH + " lock+unlock pairs of each in turn, 1 thread");
            report.line("| path | pairs | mean ns / pair | p50 ns / pair | p99 ns / pair | errors |");
            report.line("| --- | ---: | ---: | ---: | ---: | ---: |");
            for (Result r : rows) {
                report.line(String.format(
                        Locale.ROOT,
                        "| %s | %,d | %s | %s | %s | %d |",
                        r.label(),
                        r.ops() * BATCH,
                        Report.num(meanNanos(r)),
                        Report.num(r.p50Micros() * 1000 / BATCH),
                        Report.num(r.p99Micros() * 1000 / BATCH),
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
            double meanDiff = meanNanos(e) - meanNanos(d);
            double p50Diff = (e.p50Micros() - d.p50Micros()) * 1000 / BATCH;
            report.line("");
            report.line(String.format(
                    Locale.ROOT,
                    "- the engine's own cost per uncontended lock+unlock: %.0f ns (mean), %.0f ns (p50)",
                    meanDiff,
                    p50Diff));
            report.environment("end");
            report.section("Target (issue 28)");
            report.line(
                    "Read from the p50s: on a shared machine a batch that loses its core meanwhile takes milliseconds"
                            + " longer, and that lands on the mean, more often on the longer batches (the engine's).");
            report.line("");
            report.targetHeader();
            report.target(
                    "the engine's own cost per uncontended lock+unlock, µs (p50 through the engine − p50 of the store)",
                    p50Diff / 1000,
                    "<=",
                    3,
                    false);
        }
    }

    /** Nanoseconds per lock+unlock pair: the time spent in the row's bodies over its pairs. */
    static double meanNanos(Result r) {
        return 1e9 / (r.opsPerSec() * BATCH);
    }
}
