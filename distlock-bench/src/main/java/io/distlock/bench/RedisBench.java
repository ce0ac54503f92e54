package io.distlock.bench;

import static io.distlock.bench.Harness.ops;
import static io.distlock.bench.Harness.row;

import io.distlock.DistributedLock;
import io.distlock.bench.Harness.Result;
import io.distlock.bench.Scenarios.Timing;
import io.distlock.internal.EngineConfig;
import io.distlock.redis.RedisLockClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;

/*
 * Overview
 *
 * Redis side by side (issue 3), one run, one Redis server: the raw PING round trip (the physical floor), a bare
 * reference lock (SET NX PX + an owner-checked Lua release, one round trip each), a fenced reference lock, distlock,
 * Redisson RLock and RFairLock, and Spring Integration's RedisLockRegistry. Every key this run writes carries a random
 * run id, and the run deletes exactly the keys that contain it at the end (SCAN MATCH + UNLINK); nothing else is
 * flushed.
 *
 * Same footing: distlock's clients arm no Lettuce timer per command, so the harness's own Lettuce client (PING, the
 * bare and fenced reference locks, the raw scripts) arms none either; Redisson and Spring run as configured by default.
 * Not the same in one respect: the harness waits for each answer with Lettuce's synchronous API, a timed park, while
 * distlock parks without a timeout (AwaitDeadlines); that costs PING and the reference locks 1-4 µs of CPU per round
 * trip that distlock does not pay, so the ratios to them still lean slightly towards distlock.
 * The uncontended floor is the faster of two PINGs taken in the same interleaved window: one from the harness's
 * connection and one from a connection with Lettuce resources of its own, as distlock has.
 *
 * The fenced reference is the smallest lock that does what issue 3 asks of distlock's acquire: one EVALSHA of a script
 * that runs SET NX PX and, when it succeeds, INCR on the name's fence counter (hold and counter share a hash tag, like
 * distlock's keys), returning the token; busy answers 0 and the caller polls like the bare lock; the release is the
 * bare lock's. It measures what the fencing token and the script cost by themselves: on a busy server every script
 * call costs Redis several microseconds more than a native SET, so the bare lock is a bound that no fenced lock reaches
 * on a CPU-saturated machine, and the fenced reference is the like-for-like comparison for distlock.
 *
 * CPU time per operation: every counted phase also reads this JVM's CPU time (OperatingSystemMXBean) and the server's
 * (INFO cpu, user + sys) at the window's edges; divided by the window's operations they show where each implementation
 * spends its time. The JVM figure includes the benchmark's own threads.
 *
 * Command counts come from INFO commandstats deltas over a window. Redis counts the commands a script runs inside
 * EVAL/EVALSHA as well, so the report gives the script calls (one request each), the (un)subscribe calls, and the
 * total including the commands inside scripts, separately. INFO itself is excluded. The counts are exact only when
 * nothing else talks to the same server during the window: the run measures the background for one second first and
 * prints it.
 *
 * Phases that run one after another see whatever load other processes put on the (small, shared) machine at the time,
 * and the first one in a fresh JVM pays for the JIT's warm-up, which can favour either side. So the 10,000-key
 * targets are read from a phase where the implementations take turns in 1-second slices (Harness.alternating,
 * rotating who goes first, clients opened once and warmed up first), each rate being its operations over the time
 * spent in its own slices; the sequential 10,000-key phase stays in the report for comparison with earlier runs and
 * carries the command counts and CPU time per operation.
 */
/**
 * The Redis benchmark: distlock against Redisson and Spring Integration on one Redis server.
 *
 * <p>{@link #run} is the full comparison of issue 3 (about five minutes at 5-second phases); {@link #quick} a subset
 * of about 20 seconds for a smoke check, e.g. from the {@code distlock bench} command.
 */
public final class RedisBench {
    static final int THREADS = 8;
    static final int KEYS = 10_000;
    static final int HOLDS = 10_000;

    // row labels: results are looked up by label (see row), so adding a row cannot shift another's place
    static final String PING = "PING (Lettuce sync)";
    static final String PING_OWN = "PING (Lettuce sync, own resources)";
    static final String TWO_SCRIPTS = "2 × EVALSHA of `return 1` (Lettuce sync)";
    static final String SCRIPTS = "distlock's acquire and release scripts (Lettuce sync)";
    static final String SCRIPTED_SET = "Lua SET NX PX without a token + Lua release (Lettuce sync)";
    static final String OWN_SCRIPTS = "distlock's scripts (Lettuce sync, own resources)";
    static final String BARE = "bare SET NX PX + Lua release";
    static final String FENCED = "fenced reference (Lua SET NX PX + INCR, Lua release)";
    /**
     * The fenced reference on a client with Lettuce resources of its own that serve nobody else, as distlock's default
     * client has: the like-for-like comparison for distlock's default row. Only in the interleaved uncontended phase.
     */
    static final String FENCED_OWN = "fenced reference (a client of its own)";

    static final String DISTLOCK = "distlock";
    /**
     * distlock built on the harness's own Lettuce client (the builder's {@code redisClient}), as an application that
     * has a Lettuce client already may build it: its commands share an event loop that the other rows keep awake.
     * Only in the interleaved uncontended phase, for comparison; the targets read {@link #DISTLOCK}.
     */
    static final String DISTLOCK_SHARED = "distlock on the harness's Lettuce client";

    static final String RLOCK = "Redisson RLock";
    static final String RFAIR = "Redisson RFairLock";

    /**
     * Lettuce without a timer per command, as distlock sets up its own clients (see RedisLockClient): the harness's
     * client (PING, the bare and fenced reference locks, the raw scripts) runs on the same footing, so the floor and
     * the reference locks do not pay a cost distlock has shed. The synchronous API still bounds each wait.
     */
    private static final ClientOptions NO_COMMAND_TIMERS = ClientOptions.builder()
            .timeoutOptions(TimeoutOptions.builder().timeoutCommands(false).build())
            .build();

    private final String uri;
    private final String host;
    private final int port;
    final Timing timing;
    final Report report;
    private final String runId =
            "dlbench-" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16);
    private final RedisClient lettuce;
    private final StatefulRedisConnection<String, String> admin;

    private RedisBench(String uri, Duration phase, PrintStream out) {
        this.uri = Objects.requireNonNull(uri, "uri");
        RedisURI parsed = RedisURI.create(uri);
        this.host = parsed.getHost();
        this.port = parsed.getPort();
        this.timing = Timing.of(phase);
        this.report = new Report(out);
        this.lettuce = RedisClient.create(parsed);
        lettuce.setOptions(NO_COMMAND_TIMERS);
        this.admin = lettuce.connect();
    }

    /**
     * Runs the full Redis comparison against the server at {@code uri} and prints a Markdown report.
     *
     * @param uri a Redis URI such as {@code redis://127.0.0.1:6379}
     * @param phase the measured duration of each phase (warm-up is half of it, between 0.5 and 3 s)
     * @param out where the report goes
     * @throws io.lettuce.core.RedisException if the server cannot be reached
     */
    public static void run(String uri, Duration phase, PrintStream out) {
        RedisBench b = new RedisBench(uri, phase, out);
        try {
            b.full();
        } finally {
            b.close();
        }
    }

    /**
     * Runs a short subset (uncontended against the PING floor, one key from 8 threads; distlock and Redisson) and
     * prints a Markdown report; about 30 seconds at the default 2-second phase on a busy 2-core machine.
     *
     * @throws io.lettuce.core.RedisException if the server cannot be reached
     */
    public static void quick(String uri, Duration phase, PrintStream out) {
        RedisBench b = new RedisBench(uri, phase, out);
        try {
            b.quickRun();
        } finally {
            b.close();
        }
    }

    /**
     * Runs only the one-key, 8-separate-clients comparison (distlock, Redisson RLock), with commands per operation.
     *
     * @throws io.lettuce.core.RedisException if the server cannot be reached
     */
    public static void clients(String uri, Duration phase, PrintStream out) {
        only(uri, phase, out, "Redis, one key, 8 separate clients only", b -> {
            List<Result> eight = new ArrayList<>();
            for (LockProvider.Factory f : List.of(b.distlock(), b.redisson(false, false))) {
                eight.add(b.counted(
                        "one key, 8 clients", w -> Scenarios.oneKeyManyClients(f, "k8", THREADS, b.timing, w)));
            }
            b.report.table(eight, true);
        });
    }

    /**
     * Runs only the interleaved uncontended comparison (see {@link #interleavedUncontended}), from which the uncontended
     * target is read, with the ratios to the floor (the faster PING, see {@link #floor}); short enough to repeat, since
     * one run's p50 ratios move by several hundredths between runs.
     *
     * @throws io.lettuce.core.RedisException if the server cannot be reached
     */
    public static void uncontended(String uri, Duration phase, PrintStream out) {
        only(uri, phase, out, "Redis, uncontended (interleaved) only", b -> {
            b.report.section(Harness.INTERLEAVED_SECTION);
            List<Result> inter = b.interleavedUncontended();
            b.report.table(inter, false);
            b.floorRatios(inter);
        });
    }

    /**
     * Runs the interleaved uncontended comparison twice: with the machine's other core left idle, and with one thread of
     * this JVM spinning all the while (it only keeps a core busy; it talks to nobody). On a virtual machine whose idle
     * cores are slow to wake, a round trip is mostly wake-up time, and the second window shows how much: the PING floor
     * and every lock's p50 drop, and the ratios to PING move with them.
     *
     * @throws io.lettuce.core.RedisException if the server cannot be reached
     */
    public static void floorWithBusyCore(String uri, Duration phase, PrintStream out) {
        only(uri, phase, out, "Redis, uncontended with an idle and with a busy core", b -> {
            for (boolean busy : new boolean[] {false, true}) {
                AtomicBoolean stop = new AtomicBoolean();
                if (busy) {
                    Thread spinner = new Thread(
                            () -> {
                                while (!stop.get()) {
                                    Thread.onSpinWait();
                                }
                            },
                            "bench-spinner");
                    spinner.setDaemon(true);
                    spinner.start();
                }
                try {
                    b.report.section(
                            busy
                                    ? "Uncontended, interleaved, one thread of this JVM spinning all the while"
                                    : "Uncontended, interleaved, nothing else running");
                    List<Result> inter = b.interleavedUncontended();
                    b.report.table(inter, false);
                    b.floorRatios(inter);
                } finally {
                    stop.set(true);
                }
            }
        });
    }

    /**
     * Runs only the 10,000-names row of issue 28 (see {@link RedisRatios#namesKept}): one client per implementation,
     * 8 threads, a lock object kept per name; distlock, the fenced reference and Redisson RLock in alternating slices.
     *
     * @throws io.lettuce.core.RedisException if the server cannot be reached
     */
    public static void names(String uri, Duration phase, PrintStream out) {
        only(uri, phase, out, "Redis, 10,000 names with a lock object kept per name only", RedisRatios::names);
    }

    /**
     * Runs the Redis rows of issue 28 (see {@link RedisRatios}) and prints their ratios in one table.
     *
     * @throws io.lettuce.core.RedisException if the server cannot be reached
     */
    public static void ratios(String uri, Duration phase, PrintStream out) {
        only(uri, phase, out, "Redis, the ratios of issue 28", RedisRatios::all);
    }

    /** Each interleaved row's p50 ÷ the floor (the faster PING). */
    private void floorRatios(List<Result> inter) {
        double floor = floor(inter);
        report.line(
                String.format(Locale.ROOT, "| implementation | p50 ÷ floor (the faster PING's p50, %.1f µs) |", floor));
        report.line("| --- | ---: |");
        for (Result r : inter) {
            report.line("| " + r.label() + " | " + Report.ratio(r.p50Micros() / floor) + " |");
        }
        report.line("");
    }

    /**
     * Runs only the 10,000-key comparison (bare and fenced reference locks, distlock, Redisson RLock): the phases one
     * after another, with commands and CPU time per operation (e.g. under a profiler), then the same in alternating
     * slices, from which the ratios are read.
     *
     * @throws io.lettuce.core.RedisException if the server cannot be reached
     */
    public static void keys(String uri, Duration phase, PrintStream out) {
        only(uri, phase, out, "Redis, 10,000 keys only", b -> {
            List<LockProvider.Factory> fs = List.of(b.bare(), b.fenced(), b.distlock(), b.redisson(false, false));
            b.report.section("10,000 keys, 8 threads, one client (the phases one after another)");
            List<Result> many = new ArrayList<>();
            for (LockProvider.Factory f : fs) {
                many.add(b.counted("10,000 keys", w -> Scenarios.manyKeys(f, "m", KEYS, THREADS, b.timing, w)));
            }
            b.report.table(many, false);
            b.report.line(manyKeysRatios("the phases one after another, for comparison", many));
            b.report.line("");
            List<Result> alt = b.manyKeysAlternating(fs);
            b.report.line(manyKeysRatios("alternating slices", alt));
            b.report.line("");
            b.report.section("Requests and CPU time per operation (the phases one after another)");
        });
    }

    /** distlock's 10,000-key ops/s against the bare and fenced reference locks' and Redisson RLock's. */
    private static String manyKeysRatios(String which, List<Result> many) {
        return String.format(
                        Locale.ROOT,
                        "- ops/s (%s): distlock ÷ bare %.2f×, distlock ÷ fenced reference %.2f×, fenced reference ÷ bare"
                                + " %.2f×, distlock ÷ Redisson RLock %.2f×",
                        which,
                        ops(many, DISTLOCK) / ops(many, BARE),
                        ops(many, DISTLOCK) / ops(many, FENCED),
                        ops(many, FENCED) / ops(many, BARE),
                        ops(many, DISTLOCK) / ops(many, RLOCK))
                + roundSpread(row(many, DISTLOCK), row(many, BARE), "bare", 0.95)
                + roundSpread(row(many, DISTLOCK), row(many, RLOCK), RLOCK, 2.5);
    }

    /**
     * For results of alternating slices: how distlock ÷ {@code other} spreads over the rounds (min, median, max, and
     * how many rounds fall below {@code target}), which shows how far the run's overall ratio can be trusted; empty
     * for phases run one after another.
     */
    static String roundSpread(Result distlock, Result other, String name, double target) {
        double[] r = Harness.roundRatios(distlock, other);
        if (r.length == 0) {
            return "";
        }
        int below = 0;
        for (double x : r) {
            below += x < target ? 1 : 0;
        }
        return String.format(
                Locale.ROOT,
                "%n  - distlock ÷ %s per round of slices (%d rounds): min %.2f×, median %.2f×, max %.2f×; %d below"
                        + " %.2f×",
                name,
                r.length,
                r[0],
                r[r.length / 2],
                r[r.length - 1],
                below,
                target);
    }

    /** One scenario alone: a report with its title, the environment before and after, and commands per operation. */
    private static void only(
            String uri, Duration phase, PrintStream out, String title, java.util.function.Consumer<RedisBench> body) {
        RedisBench b = new RedisBench(uri, phase, out);
        try {
            b.report.title(title + " — " + uri);
            b.report.environment("start");
            body.accept(b);
            b.printPerOp();
            b.report.environment("end");
        } finally {
            b.close();
        }
    }

    // ---------------------------------------------------------------- implementations

    LockProvider.Factory distlock() {
        return distlock(DISTLOCK, ":d:", b -> b.uri(uri));
    }

    LockProvider.Factory distlockSharingLettuce() {
        return distlock(DISTLOCK_SHARED, ":ds:", b -> b.redisClient(lettuce));
    }

    /** A distlock client labelled {@code label}, its keys under the run id and {@code keys}, on {@code target}. */
    private LockProvider.Factory distlock(
            String label, String keys, java.util.function.UnaryOperator<RedisLockClient.Builder> target) {
        return LockProvider.factory(label, () -> {
            RedisLockClient c = target.apply(RedisLockClient.builder())
                    .keyPrefix(runId + keys)
                    .build();
            return provider(c::lock, c::close);
        });
    }

    LockProvider.Factory bare() {
        return LockProvider.factory(BARE, () -> {
            StatefulRedisConnection<String, String> conn = lettuce.connect();
            RedisCommands<String, String> cmd = conn.sync();
            String sha = cmd.scriptLoad(BareLock.RELEASE);
            return provider(name -> new BareLock(cmd, sha, runId + ":b:" + name), conn::close);
        });
    }

    LockProvider.Factory fenced() {
        return LockProvider.factory(FENCED, () -> {
            StatefulRedisConnection<String, String> conn = lettuce.connect();
            RedisCommands<String, String> cmd = conn.sync();
            String acquire = cmd.scriptLoad(FencedLock.ACQUIRE);
            String release = cmd.scriptLoad(BareLock.RELEASE);
            return provider(name -> new FencedLock(cmd, acquire, release, runId + ":f:{" + name + "}"), conn::close);
        });
    }

    /** The fenced reference on a client of its own ({@link OwnClient}), as distlock's default client is. */
    LockProvider.Factory fencedOnOwnResources() {
        return LockProvider.factory(FENCED_OWN, () -> {
            OwnClient own = new OwnClient(uri);
            try {
                StatefulRedisConnection<String, String> conn = own.client.connect();
                RedisCommands<String, String> cmd = conn.sync();
                String acquire = cmd.scriptLoad(FencedLock.ACQUIRE);
                String release = cmd.scriptLoad(BareLock.RELEASE);
                return provider(name -> new FencedLock(cmd, acquire, release, runId + ":fo:{" + name + "}"), () -> {
                    conn.close();
                    own.close();
                });
            } catch (RuntimeException e) {
                own.close();
                throw e;
            }
        });
    }

    LockProvider.Factory redisson(boolean fair, boolean small) {
        return LockProvider.factory(fair ? RFAIR : RLOCK, () -> {
            RedissonClient r = Redisson.create(redissonConfig(small, 30_000));
            String p = runId + (fair ? ":rf:" : ":r:");
            return provider(name -> fair ? r.getFairLock(p + name) : r.getLock(p + name), r::shutdown);
        });
    }

    Config redissonConfig(boolean small, long watchdogMillis) {
        Config c = new Config();
        var single = c.useSingleServer().setAddress("redis://" + host + ":" + port);
        if (small) { // many clients in one JVM: smaller pools than the defaults (24 idle connections, 32 threads)
            single.setConnectionMinimumIdleSize(2)
                    .setConnectionPoolSize(8)
                    .setSubscriptionConnectionMinimumIdleSize(1)
                    .setSubscriptionConnectionPoolSize(8);
            c.setNettyThreads(4);
            c.setThreads(4);
        }
        c.setLockWatchdogTimeout(watchdogMillis);
        return c;
    }

    LockProvider.Factory spring() {
        return LockProvider.factory("Spring RedisLockRegistry", () -> {
            LettuceConnectionFactory cf = new LettuceConnectionFactory(new RedisStandaloneConfiguration(host, port));
            cf.afterPropertiesSet();
            cf.start();
            RedisLockRegistry registry = new RedisLockRegistry(cf, runId + ":s");
            return provider(registry::obtain, () -> {
                registry.destroy();
                cf.destroy();
            });
        });
    }

    static LockProvider provider(java.util.function.Function<String, Lock> locks, Runnable close) {
        return new LockProvider() {
            @Override
            public Lock lock(String name) {
                return locks.apply(name);
            }

            @Override
            public void close() {
                close.run();
            }
        };
    }

    // ---------------------------------------------------------------- runs

    private void quickRun() {
        report.title("Redis (quick) — " + uri);
        report.environment("start");
        List<Result> rows = new ArrayList<>();
        rows.add(ping());
        rows.add(Scenarios.uncontended(distlock(), "u", timing));
        rows.add(Scenarios.uncontended(redisson(false, false), "u", timing));
        report.section("Uncontended lock+unlock, 1 thread");
        report.table(rows, false);
        List<Result> one = new ArrayList<>();
        one.add(Scenarios.oneKeyOneClient(distlock(), "k1", THREADS, timing));
        one.add(Scenarios.oneKeyOneClient(redisson(false, false), "k1", THREADS, timing));
        report.section("One key, 8 threads, one client");
        report.table(one, true);
        report.environment("end");
        report.targetHeader();
        report.target(
                "uncontended p50 vs PING p50",
                row(rows, DISTLOCK).p50Micros() / row(rows, PING).p50Micros(),
                "<=",
                2.1);
        report.target("one key 8 threads, vs Redisson ops/s", ops(one, DISTLOCK) / ops(one, RLOCK), ">=", 3);
    }

    private void full() {
        report.title("Redis — " + uri + " (run id " + runId + ")");
        report.environment("start");
        double background = backgroundPerSecond();
        report.line(String.format(
                Locale.ROOT, "- background on the server before the run: %.1f commands/s (besides ours)", background));

        report.section("Uncontended lock+unlock, 1 thread");
        List<Result> unc = new ArrayList<>();
        unc.add(ping());
        for (LockProvider.Factory f :
                List.of(bare(), fenced(), distlock(), redisson(false, false), redisson(true, false), spring())) {
            unc.add(counted("uncontended", w -> Scenarios.uncontended(f, "u", timing, w)));
        }
        report.table(unc, false);

        report.section(Harness.INTERLEAVED_SECTION);
        report.line("The phases above run one after another, so load from other processes can favour one of them; here"
                + " every implementation takes one operation in turn for the whole window, so all see the same load."
                + " ops/s = operations / the time spent in them. The uncontended targets are read from this table.");
        report.line("");
        List<Result> inter = interleavedUncontended();
        report.table(inter, false);

        report.section("Re-entrant acquire (commands per re-entry, INFO commandstats)");
        Map<String, Double> reentry = new LinkedHashMap<>();
        reentry.put(DISTLOCK, reentry(distlock()));
        reentry.put(RLOCK, reentry(redisson(false, false)));
        report.line("| implementation | Redis commands per re-entrant lock()+unlock() (1,000 re-entries) |");
        report.line("| --- | ---: |");
        reentry.forEach((k, v) -> report.line("| " + k + " | " + String.format(Locale.ROOT, "%.3f", v) + " |"));

        report.section("One key, 8 threads, ONE client");
        List<Result> oneClient = new ArrayList<>();
        for (LockProvider.Factory f : List.of(distlock(), redisson(false, false), redisson(true, false), spring())) {
            oneClient.add(counted("one key, 1 client", w -> Scenarios.oneKeyOneClient(f, "k1", THREADS, timing, w)));
        }
        report.table(oneClient, true);

        report.section("One key, 8 threads, 8 SEPARATE clients");
        List<Result> eight = new ArrayList<>();
        for (LockProvider.Factory f : List.of(distlock(), redisson(false, false), redisson(true, false), spring())) {
            eight.add(counted("one key, 8 clients", w -> Scenarios.oneKeyManyClients(f, "k8", THREADS, timing, w)));
        }
        report.table(eight, true);

        report.section("10,000 keys, 8 threads, one client");
        List<LockProvider.Factory> manyFs = List.of(bare(), fenced(), distlock(), redisson(false, false), spring());
        List<Result> many = new ArrayList<>();
        for (LockProvider.Factory f : manyFs) {
            many.add(counted("10,000 keys", w -> Scenarios.manyKeys(f, "m", KEYS, THREADS, timing, w)));
        }
        report.table(many, false);
        List<Result> manyAlt = manyKeysAlternating(manyFs);
        report.line(manyKeysRatios("alternating slices", manyAlt));

        report.section("Redis requests per lock()+unlock() (INFO commandstats over the measured windows)");
        report.line(
                "A script call (EVAL/EVALSHA) is one request; the commands a script runs inside are counted by Redis"
                        + " too and appear only in the last columns.");
        report.line("");
        printPerOp();

        report.section("Commands per release with 1 and with 1,000 waiters on one key");
        report.line("Every thread loops lock()+unlock() on one key; waiters = threads − 1. With 1 waiter: 2 threads in"
                + " 2 clients. With 1,000 waiters: 1,001 threads over 20 clients (about 50 per client; Redisson with"
                + " smaller pools, see the notes). Counts are INFO commandstats deltas over the measured window"
                + " divided by the releases in it.");
        report.line("");
        report.line("| implementation | waiters | releases/s | script calls / release | (un)subscribe / release"
                + " | all commands / release (incl. inside scripts) |");
        report.line("| --- | ---: | ---: | ---: | ---: | ---: |");
        Map<String, double[]> perRelease = new LinkedHashMap<>();
        for (LockProvider.Factory f : List.of(distlock(), redisson(false, true), spring())) {
            double[] w1 = waiters(f, 1, 2);
            double[] w1000 = waiters(f, 1000, 20);
            perRelease.put(f.name(), new double[] {w1[1], w1000[1], w1[3], w1000[3]});
        }

        report.section("Watchdog: 10,000 held locks, renewal requests per tick");
        double distlockPerTick = watchdogDistlock();
        double redissonPerTick = watchdogRedisson();

        report.environment("end");
        report.section("Targets (issue 3)");
        double floor = floor(inter);
        Result ping = row(inter, PING);
        Result pingOwn = row(inter, PING_OWN);
        Result twoScripts = row(inter, TWO_SCRIPTS);
        Result rawScripts = row(inter, SCRIPTS);
        Result scriptedSet = row(inter, SCRIPTED_SET);
        Result ownScripts = row(inter, OWN_SCRIPTS);
        Result bareUnc = row(inter, BARE);
        Result fencedUnc = row(inter, FENCED);
        Result dUnc = row(inter, DISTLOCK);
        Result rUnc = row(inter, RLOCK);
        Result bareMany = row(manyAlt, BARE);
        Result fencedMany = row(manyAlt, FENCED);
        Result dMany = row(manyAlt, DISTLOCK);
        Result rMany = row(manyAlt, RLOCK);
        report.line(String.format(
                Locale.ROOT,
                "Sequential phases (for comparison): distlock p50 %.2f× PING, bare lock %.2f×, fenced reference %.2f×,"
                        + " Redisson RLock %.2f×.",
                row(unc, DISTLOCK).p50Micros() / row(unc, PING).p50Micros(),
                row(unc, BARE).p50Micros() / row(unc, PING).p50Micros(),
                row(unc, FENCED).p50Micros() / row(unc, PING).p50Micros(),
                row(unc, RLOCK).p50Micros() / row(unc, PING).p50Micros()));
        report.line(String.format(
                Locale.ROOT,
                "Interleaved: PING p50 %.1f µs (harness's connection), %.1f µs (own resources); the floor is the faster,"
                        + " %.1f µs. Bare lock p50 %.1f µs (%.2f× floor); fenced reference p50 %.1f µs (%.2f× floor);"
                        + " Redisson RLock p50 %.1f µs (%.2f× floor).",
                ping.p50Micros(),
                pingOwn.p50Micros(),
                floor,
                bareUnc.p50Micros(),
                bareUnc.p50Micros() / floor,
                fencedUnc.p50Micros(),
                fencedUnc.p50Micros() / floor,
                rUnc.p50Micros(),
                rUnc.p50Micros() / floor));
        report.line("");
        report.targetHeader();
        report.target(
                "uncontended lock+unlock p50 ÷ PING p50 (interleaved, the faster PING)",
                dUnc.p50Micros() / floor,
                "<=",
                2.1);
        report.target(
                "uncontended ops/s: PING ÷ distlock (interleaved, the faster PING)",
                floorRow(inter).opsPerSec() / dUnc.opsPerSec(),
                "<=",
                2.1);
        report.target(
                "(bare SET NX PX lock, for comparison) uncontended p50 ÷ PING p50 (interleaved)",
                bareUnc.p50Micros() / floor,
                "<=",
                2.1);
        report.target(
                "re-entrant acquire: commands per re-entry",
                Objects.requireNonNull(reentry.get(DISTLOCK)),
                "==",
                0,
                false);
        report.target(
                "one key, 8 threads, one client: ops/s ÷ Redisson RLock",
                ops(oneClient, DISTLOCK) / ops(oneClient, RLOCK),
                ">=",
                3);
        report.target("one key, 8 clients: ops/s ÷ Redisson RLock", ops(eight, DISTLOCK) / ops(eight, RLOCK), ">=", 3);
        report.target(
                "one key, 8 clients: busiest/idlest thread",
                row(eight, DISTLOCK).busiestToIdlest(),
                "<=",
                1.5);
        report.target(
                "10,000 keys: ops/s ÷ Redisson RLock (alternating slices)",
                dMany.opsPerSec() / rMany.opsPerSec(),
                ">=",
                2.5);
        report.line("| (10,000 keys ÷ Redisson RLock, the phases one after another) | "
                + Report.ratio(ops(many, DISTLOCK) / ops(many, RLOCK)) + " | | |");
        report.target(
                "10,000 keys: ops/s ÷ bare SET NX PX lock (alternating slices)",
                dMany.opsPerSec() / bareMany.opsPerSec(),
                ">=",
                0.95);
        report.line("| (10,000 keys ÷ bare SET NX PX lock, the phases one after another) | "
                + Report.ratio(ops(many, DISTLOCK) / ops(many, BARE)) + " | | |");
        double[] d = Objects.requireNonNull(perRelease.get(DISTLOCK));
        report.target("script calls per release, 1,000 waiters ÷ 1 waiter (no growth, ±5 %)", d[1] / d[0], "<=", 1.05);
        report.target("all commands per release, 1,000 waiters ÷ 1 waiter (no growth, ±5 %)", d[3] / d[2], "<=", 1.05);
        report.target("watchdog requests per renewal round (tick), 10,000 holds", distlockPerTick, "<=", 10, false);
        report.line("");
        report.line(String.format(
                Locale.ROOT,
                "Redisson for comparison: %.0f requests per renewal round for the same 10,000 holds.",
                redissonPerTick));
        report.line("");
        report.line("For comparison, not targets: the fenced reference lock issues a fencing token (INCR) in the same"
                + " script as its SET NX PX, as issue 3 asks of distlock; the bare lock does not (see the CPU table"
                + " above for where each spends its time).");
        report.line("");
        report.line("| for comparison (not a target) | measured |");
        report.line("| --- | ---: |");
        report.line("| fenced reference: uncontended p50 ÷ floor (interleaved) | "
                + Report.ratio(fencedUnc.p50Micros() / floor) + " |");
        Result fencedOwn = row(inter, FENCED_OWN);
        report.line("| fenced reference on a client of its own, as distlock's: p50 ÷ floor (interleaved)" + " | "
                + Report.ratio(fencedOwn.p50Micros() / floor) + " |");
        report.line("| distlock ÷ that fenced reference, like for like: p50 (interleaved) | "
                + Report.ratio(dUnc.p50Micros() / fencedOwn.p50Micros()) + " |");
        report.line("| 2 × EVALSHA of `return 1`: p50 ÷ floor (interleaved; the floor of a lock made of two scripts) | "
                + Report.ratio(twoScripts.p50Micros() / floor) + " |");
        report.line("| a script's SET NX PX without a token + Lua release: p50 ÷ floor (interleaved; the bare lock with"
                + " its acquire made a script) | " + Report.ratio(scriptedSet.p50Micros() / floor) + " |");
        report.line("| distlock's two scripts from the harness's connection: p50 ÷ floor (interleaved) | "
                + Report.ratio(rawScripts.p50Micros() / floor) + " |");
        report.line(String.format(
                Locale.ROOT,
                "| distlock's client on top of its scripts: distlock p50 − scripts p50 (interleaved; the scripts sent"
                        + " from a connection set up like distlock's: own Lettuce resources, no per-command timer) | %.1f"
                        + " µs |",
                dUnc.p50Micros() - ownScripts.p50Micros()));
        report.line("| 10,000 keys: distlock ops/s ÷ fenced reference ops/s (alternating slices) | "
                + Report.ratio(dMany.opsPerSec() / fencedMany.opsPerSec()) + " |");
        report.line("| 10,000 keys: fenced reference ops/s ÷ bare SET NX PX lock ops/s (alternating slices) | "
                + Report.ratio(fencedMany.opsPerSec() / bareMany.opsPerSec()) + " |");
        report.line("| (10,000 keys, the phases one after another) distlock ÷ fenced reference | "
                + Report.ratio(ops(many, DISTLOCK) / ops(many, FENCED)) + " |");
        report.line("| (10,000 keys, the phases one after another) fenced reference ÷ bare | "
                + Report.ratio(ops(many, FENCED) / ops(many, BARE)) + " |");
    }

    // ---------------------------------------------------------------- scenarios specific to Redis

    private Result ping() {
        RedisCommands<String, String> cmd = admin.sync();
        return Harness.run(PING, 1, timing.warmup(), timing.measure(), (t, p) -> cmd.ping());
    }

    /**
     * One uncontended op each in turn: PING, from the harness's connection and from a connection with Lettuce resources
     * of its own as distlock has (the floor is the faster of the two, see {@link #floor}); two EVALSHAs of {@code return
     * 1} (the floor of any lock whose acquire and release are scripts); distlock's own plain-acquire and lean-release
     * scripts sent from the harness's connection; the bare lock with its SET sent from a script (what making the acquire
     * a script costs, without a token); distlock's scripts again from the connection with its own resources (what
     * distlock's client adds is the difference between the distlock row and this one); the bare and fenced reference
     * locks, the fenced one also on a client of its own (distlock's like-for-like), distlock and Redisson RLock.
     */
    List<Result> interleavedUncontended() {
        RedisCommands<String, String> cmd = admin.sync();
        try (OwnClient own = new OwnClient(uri);
                StatefulRedisConnection<String, String> ownConnection = own.client.connect()) {
            RedisCommands<String, String> ownCmd = ownConnection.sync();
            List<String> labels = new ArrayList<>();
            List<Harness.Body> bodies = new ArrayList<>();
            labels.add(PING);
            bodies.add((t, p) -> cmd.ping());
            labels.add(PING_OWN);
            bodies.add((t, p) -> ownCmd.ping());
            String one = cmd.scriptLoad("return 1");
            labels.add(TWO_SCRIPTS);
            bodies.add((t, p) -> {
                cmd.evalsha(one, ScriptOutputType.INTEGER);
                cmd.evalsha(one, ScriptOutputType.INTEGER);
            });
            String acquire = cmd.scriptLoad(distlockScript("lock-acquire.lua"));
            String release = cmd.scriptLoad(distlockScript("lock-release-lean.lua"));
            labels.add(SCRIPTS);
            bodies.add(distlockScripts(cmd, acquire, release, runId + ":s:{ui}"));
            // the bare lock with its acquire made a script, without a token: what being a script costs the acquire
            String setOnly = cmd.scriptLoad("return redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])");
            String bareRelease = cmd.scriptLoad(BareLock.RELEASE);
            String[] setOnlyKeys = {runId + ":s:{us}:hold"};
            labels.add(SCRIPTED_SET);
            bodies.add((t, p) -> {
                Object set = cmd.evalsha(setOnly, ScriptOutputType.STATUS, setOnlyKeys, "raw", "30000");
                if (!"OK".equals(set)) {
                    throw new IllegalStateException("not acquired: " + set);
                }
                Long released = cmd.evalsha(bareRelease, ScriptOutputType.INTEGER, setOnlyKeys, "raw");
                if (released == null || released != 1L) {
                    throw new IllegalStateException("not released: " + released);
                }
            });
            labels.add(OWN_SCRIPTS);
            bodies.add(distlockScripts(ownCmd, acquire, release, runId + ":s:{uo}"));
            return Harness.interleavedLocks(
                    labels,
                    bodies,
                    List.of(
                            bare(),
                            fenced(),
                            fencedOnOwnResources(),
                            distlock(),
                            distlockSharingLettuce(),
                            redisson(false, false)),
                    "ui",
                    timing);
        }
    }

    /**
     * A Lettuce client set up as distlock sets up its own: Lettuce resources of its own, so an event loop that serves
     * nobody else, and no per-command timer. Closing it shuts both down.
     */
    private static final class OwnClient implements AutoCloseable {
        final ClientResources resources = DefaultClientResources.create();
        final RedisClient client;

        OwnClient(String uri) {
            try {
                client = RedisClient.create(resources, RedisURI.create(uri));
            } catch (RuntimeException e) {
                var unused = resources.shutdown(0, 2, TimeUnit.SECONDS);
                throw e;
            }
            client.setOptions(NO_COMMAND_TIMERS);
        }

        @Override
        public void close() {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            var unused = resources.shutdown(0, 2, TimeUnit.SECONDS);
        }
    }

    /**
     * The physical floor of the interleaved uncontended rows: the lower of the two PING p50s (the harness's connection
     * and the one with its own resources), so that no lock is measured against the slower of two equally valid floors.
     */
    static double floor(List<Result> inter) {
        return floorRow(inter).p50Micros();
    }

    /** The PING row whose p50 is the floor (both targets, p50 and ops/s, are read against this one row). */
    static Result floorRow(List<Result> inter) {
        Result ping = row(inter, PING);
        Result own = row(inter, PING_OWN);
        return own.p50Micros() < ping.p50Micros() ? own : ping;
    }

    /**
     * One uncontended acquire+release made of distlock's plain-acquire and lean-release scripts ({@code acquire},
     * {@code release}: their SHA-1s), sent from {@code cmd} on the keys of {@code tag}; throws when either does not do
     * what it should.
     */
    private static Harness.Body distlockScripts(
            RedisCommands<String, String> cmd, String acquire, String release, String tag) {
        String[] acquireKeys = {tag + ":hold", tag + ":fence"};
        String[] releaseKeys = {tag + ":hold", tag + ":queue", tag + ":wq"};
        // the spare tokens the engine asks for with its default configuration (one per local hand-off of a streak)
        String spare = Integer.toString(EngineConfig.DEFAULT_HAND_OFF_LIMIT);
        return (t, p) -> {
            Long token = cmd.evalsha(acquire, ScriptOutputType.INTEGER, acquireKeys, "raw", "30000", spare);
            if (token == null || token <= 0) {
                throw new IllegalStateException("not acquired: " + token);
            }
            Long released = cmd.evalsha(release, ScriptOutputType.INTEGER, releaseKeys, "raw");
            if (released == null || released != 1L) {
                throw new IllegalStateException("not released: " + released);
            }
        };
    }

    /** The source of one of distlock's Redis scripts, from the distlock-redis jar. */
    private static String distlockScript(String file) {
        try (InputStream in = RedisLockClient.class.getResourceAsStream(file)) {
            if (in == null) {
                throw new IllegalStateException("no script " + file + " beside " + RedisLockClient.class);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The 10,000-key scenario in alternating slices (see {@link Harness#alternating}), one client per factory, and its
     * section of the report. Its keys ({@code a0} to {@code a9999}) are not the sequential phase's.
     */
    private List<Result> manyKeysAlternating(List<LockProvider.Factory> factories) {
        return manyKeysAlternating(
                factories,
                "Every operation draws a key at random from 10,000. The 10,000-key targets are read from this table;"
                        + " the table above (the phases one after another) is kept for comparison and carries the"
                        + " command counts and CPU time per operation.");
    }

    /** {@link #manyKeysAlternating(List)} with {@code note} under the section's title. */
    List<Result> manyKeysAlternating(List<LockProvider.Factory> factories, String note) {
        String[] names = new String[KEYS];
        for (int i = 0; i < KEYS; i++) {
            names[i] = "a" + i;
        }
        List<Result> alt = Harness.alternatingLocks(
                factories,
                THREADS,
                timing,
                p -> (t, random) -> {
                    Lock lock = p.lock(names[random.nextInt(names.length)]);
                    lock.lock();
                    lock.unlock();
                },
                null);
        report.section("10,000 keys, 8 threads, one client, in alternating slices");
        report.line(Harness.slicesNote(timing, THREADS, factories.size(), note));
        report.line("");
        report.table(alt, false);
        return alt;
    }

    /** Commands per re-entrant lock()+unlock() while the thread already holds the lock. */
    private double reentry(LockProvider.Factory f) {
        int n = 1000;
        try (LockProvider p = f.open()) {
            Lock lock = p.lock("re");
            lock.lock();
            try {
                lock.lock(); // warm the path
                lock.unlock();
                Map<String, Long> before = commandStats();
                for (int i = 0; i < n; i++) {
                    lock.lock();
                    lock.unlock();
                }
                Map<String, Long> delta = delta(before, commandStats());
                return total(delta) / (double) n;
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * Runs {@code waiters + 1} threads looping lock()+unlock() on one key over {@code clients} clients; prints a row
     * and returns {script calls, script calls per release, total, total per release}.
     */
    private double[] waiters(LockProvider.Factory f, int waiters, int clients) {
        int threads = waiters + 1;
        List<LockProvider> providers = new ArrayList<>();
        Map<String, Long>[] stats = newStatsPair();
        try {
            for (int i = 0; i < Math.min(clients, threads); i++) {
                providers.add(f.open());
            }
            Lock[] locks = new Lock[threads];
            for (int i = 0; i < threads; i++) {
                locks[i] = providers.get(i % providers.size()).lock("w" + waiters);
            }
            Result r = Harness.run(
                    f.name(),
                    threads,
                    timing.warmup().plusSeconds(1),
                    timing.measure(),
                    (t, p) -> {
                        locks[t].lock();
                        locks[t].unlock();
                    },
                    () -> stats[0] = commandStats(),
                    () -> stats[1] = commandStats());
            Map<String, Long> delta = delta(stats[0], stats[1]);
            double releases = Math.max(1, r.windowOps());
            double scripts = scripts(delta);
            double subs = subscribes(delta);
            double all = total(delta);
            report.line(String.format(
                    Locale.ROOT,
                    "| %s | %,d | %s | %.2f | %.2f | %.2f |%s",
                    f.name(),
                    waiters,
                    Report.num(r.opsPerSec()),
                    scripts / releases,
                    subs / releases,
                    all / releases,
                    r.errors() > 0 || r.stuck() > 0
                            ? " errors " + r.errors() + ", stuck " + r.stuck() + ": " + r.firstError()
                            : ""));
            report.line("<!-- " + f.name() + " " + waiters + " waiters, commands in window: " + new TreeMap<>(delta)
                    + " -->");
            return new double[] {scripts, scripts / releases, all, all / releases};
        } finally {
            providers.forEach(LockProvider::close);
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Long>[] newStatsPair() {
        return new Map[] {Map.of(), Map.of()};
    }

    private double watchdogDistlock() {
        Duration lease = Duration.ofSeconds(3);
        try (RedisLockClient c = RedisLockClient.builder()
                .uri(uri)
                .keyPrefix(runId + ":wd:")
                .leaseTime(lease)
                .build()) {
            List<DistributedLock> held = new ArrayList<>();
            for (int i = 0; i < HOLDS; i++) {
                DistributedLock l = c.lock("h" + i);
                l.lock();
                held.add(l);
            }
            double perTick = countTicks("distlock (lease 3 s, tick 1 s)", 1000);
            for (DistributedLock l : held) {
                l.unlock();
            }
            return perTick;
        }
    }

    private double watchdogRedisson() {
        RedissonClient r = Redisson.create(redissonConfig(false, 3000));
        try {
            List<Lock> held = new ArrayList<>();
            for (int i = 0; i < HOLDS; i++) {
                Lock l = r.getLock(runId + ":wr:h" + i);
                l.lock();
                held.add(l);
            }
            double perTick = countTicks("Redisson RLock (lockWatchdogTimeout 3 s, tick 1 s)", 1000);
            for (Lock l : held) {
                l.unlock();
            }
            return perTick;
        } finally {
            r.shutdown();
        }
    }

    /** Counts requests over a quiet window of several ticks; prints a row; returns requests per tick. */
    private double countTicks(String label, long tickMillis) {
        try {
            Thread.sleep(tickMillis * 3 / 2); // let the acquisitions' own traffic settle
            long windowMillis = Math.max(3000, timing.measure().toMillis());
            Map<String, Long> before = commandStats();
            Thread.sleep(windowMillis);
            Map<String, Long> delta = delta(before, commandStats());
            // renewal rounds = renewed holds / holds (both libraries renew with PEXPIRE inside their scripts); the
            // window holds 4-5 rounds, since a tick starts a fixed delay after the previous one ended
            long renewed = delta.getOrDefault("pexpire", 0L);
            double ticks = renewed > 0 ? renewed / (double) HOLDS : windowMillis / (double) tickMillis;
            double requests = scripts(delta) + subscribes(delta) + nonScript(delta);
            report.line(String.format(
                    Locale.ROOT,
                    "- %s: %,d holds; in %.1f s %,d renewals = %.1f rounds: %.1f requests per round (script calls %s),"
                            + " %.0f commands per round incl. inside scripts; %s",
                    label,
                    HOLDS,
                    windowMillis / 1000.0,
                    renewed,
                    ticks,
                    requests / ticks,
                    Report.num(scripts(delta)),
                    total(delta) / ticks,
                    new TreeMap<>(delta)));
            return requests / ticks;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    // ---------------------------------------------------------------- INFO commandstats

    /** INFO commandstats, and the CPU time of this JVM and of the Redis server, over one measured window. */
    final class Counter implements Scenarios.Window {
        private Map<String, Long> before = Map.of();
        Map<String, Long> delta = Map.of();
        private Usage usageBefore = Usage.ZERO;
        /** The resources used over the window. */
        Usage usage = Usage.ZERO;

        @Override
        public void start() {
            before = commandStats();
            usageBefore = usageNow();
        }

        @Override
        public void end() {
            Usage after = usageNow();
            delta = delta(before, commandStats());
            usage = after.minus(usageBefore);
        }
    }

    private final List<String> perOp = new ArrayList<>();
    private final List<String> cpuPerOp = new ArrayList<>();

    /** Runs a scenario with a command counter and remembers its commands per operation for {@link #printPerOp}. */
    Result counted(String scenario, java.util.function.Function<Scenarios.Window, Result> run) {
        Counter c = new Counter();
        Result r = run.apply(c);
        double ops = Math.max(1, r.windowOps());
        perOp.add(String.format(
                Locale.ROOT,
                "| %s | %s | %.2f | %.2f | %.2f | %.2f | %s |",
                scenario,
                r.label(),
                scripts(c.delta) / ops,
                subscribes(c.delta) / ops,
                nonScript(c.delta) / ops,
                total(c.delta) / ops,
                new TreeMap<>(c.delta)));
        Usage u = c.usage;
        double wall = Math.max(1, u.wallNanos());
        cpuPerOp.add(String.format(
                Locale.ROOT,
                "| %s | %s | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %s | %.2f | %.2f |",
                scenario,
                r.label(),
                Report.num(r.opsPerSec()),
                u.jvmNanos() / 1000.0 / ops,
                u.ioNanos() / 1000.0 / ops,
                (u.jvmNanos() - u.ioNanos()) / 1000.0 / ops,
                u.redisNanos() / 1000.0 / ops,
                (u.jvmNanos() + u.redisNanos()) / 1000.0 / ops,
                Report.num(u.allocatedBytes() / ops),
                u.jvmNanos() / wall,
                u.redisNanos() / wall));
        return r;
    }

    private void printPerOp() {
        if (perOp.isEmpty() && cpuPerOp.isEmpty()) {
            return; // nothing was counted (e.g. the interleaved phase alone)
        }
        report.line("| scenario | implementation | script calls / op | (un)subscribe / op | other requests / op"
                + " | all commands / op (incl. inside scripts) | commands in the window |");
        report.line("| --- | --- | ---: | ---: | ---: | ---: | --- |");
        perOp.forEach(report::line);
        perOp.clear();
        report.line("");
        report.line("CPU time per lock()+unlock() over the same windows: the client is this whole JVM"
                + " (OperatingSystemMXBean.getProcessCpuTime), so it includes the benchmark's own threads (workers, key"
                + " choice, latency samples, GC, JIT) besides the lock client; Redis is INFO cpu used_cpu_user +"
                + " used_cpu_sys. Each phase is measured on its own (phases run one after another), divided by the"
                + " operations completed in the window; \"cores\" is CPU time over wall time (this machine has "
                + Runtime.getRuntime().availableProcessors()
                + " CPUs). Of the client's CPU, \"I/O threads\" is that of the client libraries' network threads"
                + " (Netty event loops: Lettuce's, Redisson's), which encode and send the requests and read the answers,"
                + " and \"rest\" everything else (the calling threads, the bench's own work, GC, JIT); \"allocated\" is"
                + " what the JVM's threads allocated (ThreadMXBean.getThreadAllocatedBytes).");
        report.line("");
        report.line("| scenario | implementation | ops/s | client JVM CPU µs / op | of it I/O threads | rest"
                + " | Redis CPU µs / op | both µs / op | allocated bytes / op | client JVM cores | Redis cores |");
        report.line("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        cpuPerOp.forEach(report::line);
        cpuPerOp.clear();
    }

    /**
     * Resources used, as running totals or over a window: this JVM's CPU time, the Redis server's (user + sys), the
     * wall clock, the CPU time of the client libraries' network I/O threads (Netty event loops), all in nanoseconds,
     * and the bytes allocated by this JVM's threads.
     */
    record Usage(long jvmNanos, long redisNanos, long wallNanos, long ioNanos, long allocatedBytes) {
        static final Usage ZERO = new Usage(0, 0, 0, 0, 0);

        Usage minus(Usage earlier) {
            return new Usage(
                    jvmNanos - earlier.jvmNanos,
                    redisNanos - earlier.redisNanos,
                    wallNanos - earlier.wallNanos,
                    ioNanos - earlier.ioNanos,
                    allocatedBytes - earlier.allocatedBytes);
        }
    }

    Usage usageNow() {
        long jvm = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
        String info = admin.sync().info("cpu");
        double seconds = 0;
        for (String line : info.split("\r?\n")) {
            if (line.startsWith("used_cpu_user:") || line.startsWith("used_cpu_sys:")) {
                seconds +=
                        Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        long io = 0;
        long allocated = 0;
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        for (java.lang.management.ThreadInfo t : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (t == null) {
                continue; // ended meanwhile
            }
            String name = t.getThreadName();
            if (name.contains("EventLoop") || name.contains("netty")) {
                io += Math.max(0, threads.getThreadCpuTime(t.getThreadId()));
            }
            allocated += Math.max(0, threads.getThreadAllocatedBytes(t.getThreadId()));
        }
        return new Usage(jvm, Math.round(seconds * 1e9), System.nanoTime(), io, allocated);
    }

    private static final Set<String> SCRIPT = Set.of("eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro");
    private static final Set<String> SUBSCRIBE =
            Set.of("subscribe", "unsubscribe", "ssubscribe", "sunsubscribe", "psubscribe", "punsubscribe");
    // commands the libraries here only run inside their scripts (so they are not requests of their own)
    private static final Set<String> INSIDE_SCRIPTS = Set.of(
            "get",
            "set",
            "del",
            "unlink",
            "pexpire",
            "expire",
            "pttl",
            "ttl",
            "hget",
            "hset",
            "hincrby",
            "hexists",
            "hdel",
            "incr",
            "incrby",
            "publish",
            "spublish",
            "exists",
            "zadd",
            "zrem",
            "zrange",
            "zscore",
            "rpush",
            "lpop",
            "lindex",
            "lrem",
            "lrange",
            "llen",
            "zcard",
            "hgetall",
            "hlen",
            "type",
            "pexpireat",
            "mget",
            "zrangebyscore",
            "zremrangebyscore",
            "lpush",
            "rpop",
            "hmget",
            "hscan",
            "sadd",
            "srem",
            "smembers",
            "scard");

    Map<String, Long> commandStats() {
        String info = admin.sync().info("commandstats");
        Map<String, Long> calls = new HashMap<>();
        for (String line : info.split("\r?\n")) {
            if (!line.startsWith("cmdstat_")) {
                continue;
            }
            int colon = line.indexOf(':');
            String name = line.substring("cmdstat_".length(), colon);
            int at = line.indexOf("calls=", colon);
            int end = line.indexOf(',', at);
            calls.put(name, Long.parseLong(line.substring(at + 6, end)));
        }
        return calls;
    }

    static Map<String, Long> delta(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> d = new HashMap<>();
        after.forEach((k, v) -> {
            long diff = v - before.getOrDefault(k, 0L);
            if (diff != 0 && !k.equals("info")) {
                d.put(k, diff);
            }
        });
        return d;
    }

    static double total(Map<String, Long> d) {
        return d.values().stream().mapToLong(Long::longValue).sum();
    }

    static double scripts(Map<String, Long> d) {
        return sum(d, SCRIPT);
    }

    static double subscribes(Map<String, Long> d) {
        return sum(d, SUBSCRIBE);
    }

    static double nonScript(Map<String, Long> d) {
        long n = 0;
        for (var e : d.entrySet()) {
            if (!SCRIPT.contains(e.getKey())
                    && !SUBSCRIBE.contains(e.getKey())
                    && !INSIDE_SCRIPTS.contains(e.getKey())) {
                n += e.getValue();
            }
        }
        return n;
    }

    private static double sum(Map<String, Long> d, Set<String> names) {
        long n = 0;
        for (String k : names) {
            n += d.getOrDefault(k, 0L);
        }
        return n;
    }

    private double backgroundPerSecond() {
        try {
            Map<String, Long> before = commandStats();
            Thread.sleep(1000);
            return total(delta(before, commandStats()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Double.NaN;
        }
    }

    // ---------------------------------------------------------------- cleanup

    private void close() {
        try {
            RedisCommands<String, String> cmd = admin.sync();
            ScanCursor cursor = ScanCursor.INITIAL;
            long deleted = 0;
            do {
                KeyScanCursor<String> page = cmd.scan(
                        cursor, ScanArgs.Builder.matches("*" + runId + "*").limit(5000));
                if (!page.getKeys().isEmpty()) {
                    deleted += cmd.unlink(page.getKeys().toArray(new String[0]));
                }
                cursor = page;
            } while (!cursor.isFinished());
            report.line("");
            report.line("- cleanup: deleted " + deleted + " keys containing " + runId);
        } finally {
            admin.close();
            lettuce.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    /** The reference lock: SET key token NX PX 30000, released by an owner-checked script; polls every 0.2 ms. */
    static class BareLock extends LockAndUnlockOnly {
        static final String RELEASE =
                "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
        private static final AtomicLong TOKENS = new AtomicLong();
        private static final SetArgs NX_PX = SetArgs.Builder.nx().px(30_000);
        final RedisCommands<String, String> cmd;
        private final String sha;
        final String key;
        private String token = "";

        BareLock(RedisCommands<String, String> cmd, String sha, String key) {
            this.cmd = cmd;
            this.sha = sha;
            this.key = key;
        }

        /** One attempt: true when this owner now holds the key. */
        boolean tryAcquire(String owner) {
            return "OK".equals(cmd.set(key, owner, NX_PX));
        }

        @Override
        public void lock() {
            String t = Long.toString(TOKENS.incrementAndGet());
            while (!tryAcquire(t)) {
                LockSupport.parkNanos(200_000);
            }
            token = t;
        }

        @Override
        public void unlock() {
            Long n = cmd.evalsha(sha, ScriptOutputType.INTEGER, new String[] {key}, token);
            if (n == null || n != 1L) {
                throw new IllegalMonitorStateException("not held: " + key);
            }
        }
    }

    /**
     * The fenced reference lock: {@link BareLock} whose acquire is one script that runs SET NX PX and, when it
     * succeeds, INCR on the name's fence counter (the fencing token); same release, same 0.2 ms polling.
     */
    static final class FencedLock extends BareLock {
        static final String ACQUIRE = "if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then"
                + " return redis.call('incr', KEYS[2]) end return 0";
        private final String acquireSha;
        private final String fenceKey;
        long fencingToken;

        /** {@code tag} is {@code <run id>:f:{<name>}}: hold key {@code tag:hold}, fence counter {@code tag:fence}. */
        FencedLock(RedisCommands<String, String> cmd, String acquireSha, String releaseSha, String tag) {
            super(cmd, releaseSha, tag + ":hold");
            this.acquireSha = acquireSha;
            this.fenceKey = tag + ":fence";
        }

        @Override
        boolean tryAcquire(String owner) {
            Long t = cmd.evalsha(acquireSha, ScriptOutputType.INTEGER, new String[] {key, fenceKey}, owner, "30000");
            if (t == null || t <= 0) {
                return false;
            }
            fencingToken = t;
            return true;
        }
    }
}
