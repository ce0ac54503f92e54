package io.distlock.bench;

import static io.distlock.bench.Harness.ops;
import static io.distlock.bench.Harness.row;

import io.distlock.bench.Harness.Result;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.locks.Lock;

/*
 * Overview
 *
 * The rows
 *   The Redis ratios of issue 28, all from one run against one server, so they can be taken before and after a change
 *   to the core with the same command:
 *   - uncontended lock+unlock, interleaved (RedisBench.interleavedUncontended): distlock's p50 ÷ the fenced
 *     reference's, on a client of its own as distlock's is (like for like) and on the harness's shared connection;
 *   - 10,000 keys, 8 threads, one client, alternating slices (RedisBench.manyKeysAlternating): every operation asks the
 *     client for the lock by name (client.lock(name)) and drops it; distlock's ops/s ÷ the fenced reference's and
 *     Redisson RLock's;
 *   - 10,000 names as a user runs them (namesKept): the same threads and names, but one lock object per name, made
 *     once and kept (an application's map from name to lock), so the figure is lock()+unlock() on a warm object;
 *   - one key, 8 threads from one client, and from 8 clients: distlock's ops/s ÷ Redisson RLock's, the phases one
 *     after another as in the full Redis run (with commands and CPU time per operation).
 *   A summary table at the end lists every ratio under a fixed label; scripts that take medians over runs read it.
 *
 * The fenced reference
 *   RedisBench.FencedLock, on a Lettuce connection of its own: one EVALSHA that runs SET NX PX and INCR, and the
 *   compare-and-delete release: the least a lock with a fencing token does.
 */
/** Issue 28's Redis rows: distlock against the fenced reference and Redisson, as ratios from one run. */
final class RedisRatios {
    static final int NAMES = RedisBench.KEYS;

    static final String UNCONTENDED_OWN = "uncontended p50: distlock ÷ fenced reference (a client of its own)";
    static final String UNCONTENDED_SHARED = "uncontended p50: distlock ÷ fenced reference (harness's connection)";
    static final String KEYS_FENCED = "10,000 keys, lock(name) per op, ops/s: distlock ÷ fenced reference";
    static final String KEYS_RLOCK = "10,000 keys, lock(name) per op, ops/s: distlock ÷ Redisson RLock";
    static final String NAMES_FENCED = "10,000 names, lock object kept, ops/s: distlock ÷ fenced reference";
    static final String NAMES_RLOCK = "10,000 names, lock object kept, ops/s: distlock ÷ Redisson RLock";
    static final String ONE_CLIENT = "one key, 8 threads, one client, ops/s: distlock ÷ Redisson RLock";
    static final String EIGHT_CLIENTS = "one key, 8 threads, 8 clients, ops/s: distlock ÷ Redisson RLock";

    private RedisRatios() {}

    /** The 10,000-names row alone, with its ratios. */
    static void names(RedisBench b) {
        List<Result> names = namesKept(b);
        b.report.line(namesRatios(names));
    }

    /** Every row of issue 28, then the summary table of ratios. */
    static void all(RedisBench b) {
        b.report.section(Harness.INTERLEAVED_SECTION);
        List<Result> inter = b.interleavedUncontended();
        b.report.table(inter, false);

        List<Result> keys = b.manyKeysAlternating(
                List.of(b.fenced(), b.distlock(), b.redisson(false, false)),
                "Every operation draws a key at random from 10,000 and asks the client for its lock by name.");

        List<Result> names = namesKept(b);
        b.report.line(namesRatios(names));

        b.report.section("One key, 8 threads, ONE client");
        List<Result> oneClient = new ArrayList<>();
        for (LockProvider.Factory f : List.of(b.distlock(), b.redisson(false, false))) {
            oneClient.add(b.counted(
                    "one key, 1 client", w -> Scenarios.oneKeyOneClient(f, "k1", RedisBench.THREADS, b.timing, w)));
        }
        b.report.table(oneClient, true);

        b.report.section("One key, 8 threads, 8 SEPARATE clients");
        List<Result> eight = new ArrayList<>();
        for (LockProvider.Factory f : List.of(b.distlock(), b.redisson(false, false))) {
            eight.add(b.counted(
                    "one key, 8 clients", w -> Scenarios.oneKeyManyClients(f, "k8", RedisBench.THREADS, b.timing, w)));
        }
        b.report.table(eight, true);

        b.report.section("Ratios (issue 28)");
        b.report.line("| ratio | measured |");
        b.report.line("| --- | ---: |");
        Result d = row(inter, RedisBench.DISTLOCK);
        summary(
                b,
                UNCONTENDED_OWN,
                d.p50Micros() / row(inter, RedisBench.FENCED_OWN).p50Micros());
        summary(
                b,
                UNCONTENDED_SHARED,
                d.p50Micros() / row(inter, RedisBench.FENCED).p50Micros());
        summary(b, KEYS_FENCED, ops(keys, RedisBench.DISTLOCK) / ops(keys, RedisBench.FENCED));
        summary(b, KEYS_RLOCK, ops(keys, RedisBench.DISTLOCK) / ops(keys, RedisBench.RLOCK));
        summary(b, NAMES_FENCED, ops(names, RedisBench.DISTLOCK) / ops(names, RedisBench.FENCED));
        summary(b, NAMES_RLOCK, ops(names, RedisBench.DISTLOCK) / ops(names, RedisBench.RLOCK));
        summary(b, ONE_CLIENT, ops(oneClient, RedisBench.DISTLOCK) / ops(oneClient, RedisBench.RLOCK));
        summary(b, EIGHT_CLIENTS, ops(eight, RedisBench.DISTLOCK) / ops(eight, RedisBench.RLOCK));
        b.report.line("");
        b.report.section("Requests and CPU time per operation (the one-key phases)");
    }

    private static void summary(RedisBench b, String label, double ratio) {
        b.report.line("| " + label + " | " + Report.ratio(ratio) + " |");
    }

    /**
     * 8 threads of one client over 10,000 names, one lock object per name made when the client opens and kept for the
     * run, each operation lock()+unlock() on the object of a name drawn at random; distlock, the fenced reference and
     * Redisson RLock in alternating slices (see {@link Harness#alternating}), and the section of the report.
     */
    static List<Result> namesKept(RedisBench b) {
        String[] names = new String[NAMES];
        for (int i = 0; i < NAMES; i++) {
            names[i] = "n" + i;
        }
        List<LockProvider.Factory> fs = List.of(b.fenced(), b.distlock(), b.redisson(false, false));
        List<Result> rows = Harness.alternatingLocks(
                fs,
                RedisBench.THREADS,
                b.timing,
                p -> {
                    Lock[] locks = new Lock[names.length];
                    for (int i = 0; i < names.length; i++) {
                        locks[i] = p.lock(names[i]);
                    }
                    return (t, random) -> {
                        Lock lock = locks[random.nextInt(locks.length)];
                        lock.lock();
                        lock.unlock();
                    };
                },
                null);
        b.report.section("10,000 names, 8 threads, one client, a lock object kept per name, in alternating slices");
        b.report.line(Harness.slicesNote(
                b.timing,
                RedisBench.THREADS,
                fs.size(),
                "Each client makes one lock object per name when it opens and keeps it; every operation is lock()"
                        + " and unlock() on the object of a name drawn at random from 10,000."));
        b.report.line("");
        b.report.table(rows, false);
        return rows;
    }

    /** distlock's ops/s over 10,000 kept names against the fenced reference's and Redisson RLock's, with the spread. */
    static String namesRatios(List<Result> names) {
        Result d = row(names, RedisBench.DISTLOCK);
        return String.format(
                        Locale.ROOT,
                        "- ops/s (10,000 names, lock objects kept): distlock ÷ fenced reference %.2f×, distlock ÷"
                                + " Redisson RLock %.2f×",
                        d.opsPerSec() / ops(names, RedisBench.FENCED),
                        d.opsPerSec() / ops(names, RedisBench.RLOCK))
                + RedisBench.roundSpread(d, row(names, RedisBench.FENCED), "fenced reference", 1.0)
                + RedisBench.roundSpread(d, row(names, RedisBench.RLOCK), RedisBench.RLOCK, 2.5)
                + "\n";
    }
}
