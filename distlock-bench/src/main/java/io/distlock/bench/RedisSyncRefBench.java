package io.distlock.bench;

import io.distlock.DistributedSemaphore;
import io.distlock.LockClient;
import io.distlock.PermitHold;
import io.distlock.bench.Harness.Result;
import io.distlock.bench.Scenarios.Timing;
import io.distlock.redis.RedisLockClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import org.redisson.Redisson;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RSemaphore;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/*
 * Overview
 *
 * The redis-sync-ref mode: issue 21's missed throughput targets with a third row between distlock and Redisson, the
 * minimal reference of RedisSyncReference (owned, leased, fenced holds; pub/sub wake-ups; no renewal), whose semaphore
 * comes twice: without a queue, and FIFO as the contract asks (granted by the release, in arrival order). The
 * phases are redis-sync's (8 threads, 20 µs of busy work per hold; read-write 90 % reads in 1 and in 8 clients;
 * semaphore of 4 permits in one client), run by Harness.alternating so that all rows of a table share the load. Around
 * every slice an admin connection reads INFO commandstats, so each row also shows the Redis commands it cost per
 * operation (scripts count as evalsha/evalsha_ro plus the commands they ran).
 */
/** distlock, a minimal reference and Redisson side by side for issue 21's read-write lock and semaphore targets. */
final class RedisSyncRefBench {
    private static final int THREADS = 8;
    private static final int PERMITS = 4;
    private static final long LEASE_MS = 30_000;

    private final String uri;
    private final String host;
    private final int port;
    private final String runId = "syncref-" + UUID.randomUUID().toString().substring(0, 8);
    private final PrintStream out;

    private RedisSyncRefBench(String uri, PrintStream out) {
        io.lettuce.core.RedisURI u = io.lettuce.core.RedisURI.create(uri);
        this.uri = uri;
        this.host = u.getHost();
        this.port = u.getPort();
        this.out = out;
    }

    static void run(String uri, Duration phase, PrintStream out) throws Exception {
        RedisSyncRefBench b = new RedisSyncRefBench(uri, out);
        Timing timing = Timing.of(phase);
        out.printf(
                Locale.ROOT,
                "%n## Redis synchronizers: distlock, a minimal reference, Redisson%n%n- %s, load average %s, %d CPUs%n",
                java.time.Instant.now(),
                Report.loadAverage(),
                Runtime.getRuntime().availableProcessors());
        b.semaphores(timing);
        b.readWrite(timing, 1);
        b.readWrite(timing, THREADS);
    }

    private Config redissonConfig() {
        return RedisSyncBench.redissonConfig(host, port);
    }

    private LockClient distlock() {
        return RedisLockClient.builder().uri(uri).keyPrefix(runId + ":d:").build();
    }

    private RedisSyncReference.Client reference() {
        return new RedisSyncReference.Client(uri, runId + ":ref:");
    }

    // ---------------------------------------------------------------- semaphores

    private void semaphores(Timing timing) throws Exception {
        LockClient ours = distlock();
        RedisSyncReference.Client ref = reference();
        RedissonClient r = Redisson.create(redissonConfig());
        try {
            DistributedSemaphore d = ours.semaphore("sem", PERMITS);
            RedisSyncReference.Semaphore refSem = ref.semaphore("sem", PERMITS, LEASE_MS);
            RedisSyncReference.FifoSemaphore fifoSem = ref.fifoSemaphore("semq", PERMITS, LEASE_MS, true);
            RedisSyncReference.FifoSemaphore fifoByReleaser = ref.fifoSemaphore("semr", PERMITS, LEASE_MS, false);
            RPermitExpirableSemaphore expirable = r.getPermitExpirableSemaphore(runId + ":rpe:sem");
            expirable.trySetPermits(PERMITS);
            RSemaphore bare = r.getSemaphore(runId + ":rs:sem");
            bare.trySetPermits(PERMITS);
            List<String> labels = List.of(
                    "distlock semaphore",
                    "reference semaphore",
                    "Redisson RPermitExpirableSemaphore (30 s lease)",
                    "Redisson RSemaphore (no owner, no lease)",
                    "reference FIFO semaphore",
                    "reference FIFO semaphore, waiter woken by the releasing thread");
            Overlap[] overlap = {
                new Overlap(), new Overlap(), new Overlap(), new Overlap(), new Overlap(), new Overlap()
            };
            List<Harness.SliceBody> bodies = List.of(
                    slice(() -> {
                        PermitHold p = d.acquire(1);
                        overlap[0].permit();
                        p.release();
                    }),
                    slice(() -> {
                        RedisSyncReference.Permit p = refSem.acquire();
                        overlap[1].permit();
                        refSem.release(p);
                    }),
                    slice(() -> {
                        String id = expirable.acquire(LEASE_MS, TimeUnit.MILLISECONDS);
                        overlap[2].permit();
                        expirable.release(id);
                    }),
                    slice(() -> {
                        bare.acquire();
                        overlap[3].permit();
                        bare.release();
                    }),
                    slice(() -> {
                        RedisSyncReference.Permit p = fifoSem.acquire();
                        overlap[4].permit();
                        fifoSem.release(p);
                    }),
                    slice(() -> {
                        RedisSyncReference.Permit p = fifoByReleaser.acquire();
                        overlap[5].permit();
                        fifoByReleaser.release(p);
                    }));
            CommandCounter counter = new CommandCounter(uri, labels.size());
            List<Result> rows;
            try {
                rows = Harness.alternating(labels, bodies, THREADS, timing, counter);
            } finally {
                counter.close();
            }
            table(
                    "Semaphore of " + PERMITS + " permits, " + THREADS + " threads in one client",
                    rows,
                    counter,
                    overlap,
                    "Each operation: acquire 1 permit, 20 µs of work (busy), release.");
            ratio(
                    rows,
                    labels.get(1),
                    labels.get(2),
                    "reference ÷ RPermitExpirableSemaphore (target for distlock ≥ 2)");
            ratio(rows, labels.get(1), labels.get(3), "reference ÷ RSemaphore (target for distlock ≥ 1)");
            ratio(rows, labels.get(0), labels.get(1), "distlock ÷ reference");
            ratio(rows, labels.get(0), labels.get(2), "distlock ÷ RPermitExpirableSemaphore");
            ratio(rows, labels.get(0), labels.get(3), "distlock ÷ RSemaphore");
            ratio(rows, labels.get(4), labels.get(3), "reference FIFO ÷ RSemaphore (target for distlock ≥ 1)");
            ratio(rows, labels.get(4), labels.get(2), "reference FIFO ÷ RPermitExpirableSemaphore");
            ratio(rows, labels.get(0), labels.get(4), "distlock ÷ reference FIFO");
            ratio(rows, labels.get(5), labels.get(3), "reference FIFO woken by the releaser ÷ RSemaphore");
            ratio(rows, labels.get(5), labels.get(4), "reference FIFO woken by the releaser ÷ reference FIFO");
            ratio(rows, labels.get(0), labels.get(5), "distlock ÷ reference FIFO woken by the releaser");
        } finally {
            ours.close();
            ref.close();
            r.shutdown();
        }
    }

    // ---------------------------------------------------------------- read-write locks

    private void readWrite(Timing timing, int clients) throws Exception {
        String name = "rw-" + clients;
        List<LockClient> ours = new ArrayList<>();
        List<RedisSyncReference.Client> refs = new ArrayList<>();
        List<RedissonClient> theirs = new ArrayList<>();
        try {
            ReadWriteLock[] d = new ReadWriteLock[THREADS];
            ReadWriteLock[] f = new ReadWriteLock[THREADS];
            ReadWriteLock[] r = new ReadWriteLock[THREADS];
            for (int i = 0; i < clients; i++) {
                ours.add(distlock());
                refs.add(reference());
                theirs.add(Redisson.create(redissonConfig()));
            }
            for (int t = 0; t < THREADS; t++) {
                d[t] = ours.get(t % clients).readWriteLock(name);
                f[t] = refs.get(t % clients).readWriteLock(name, LEASE_MS);
                r[t] = theirs.get(t % clients).getReadWriteLock(runId + ":r:" + name);
            }
            List<String> labels =
                    List.of("distlock readWriteLock", "reference read-write lock", "Redisson RReadWriteLock");
            Overlap[] overlap = {new Overlap(), new Overlap(), new Overlap()};
            CommandCounter counter = new CommandCounter(uri, labels.size());
            List<Result> rows;
            try {
                rows = Harness.alternating(
                        labels,
                        List.of(rwSlice(d, overlap[0]), rwSlice(f, overlap[1]), rwSlice(r, overlap[2])),
                        THREADS,
                        timing,
                        counter);
            } finally {
                counter.close();
            }
            table(
                    "Read-write lock, one name, " + THREADS + " threads in " + clients
                            + (clients == 1 ? " client" : " clients") + ", 90 % reads",
                    rows,
                    counter,
                    overlap,
                    "Each operation: lock, 20 µs of work (busy), unlock; reads and writes drawn at random per operation.");
            ratio(
                    rows,
                    labels.get(1),
                    labels.get(2),
                    "reference ÷ RReadWriteLock (target for distlock ≥ " + (clients == 1 ? 3 : 2) + ")");
            ratio(rows, labels.get(0), labels.get(1), "distlock ÷ reference");
            ratio(rows, labels.get(0), labels.get(2), "distlock ÷ RReadWriteLock");
        } finally {
            ours.forEach(LockClient::close);
            refs.forEach(RedisSyncReference.Client::close);
            theirs.forEach(RedissonClient::shutdown);
        }
    }

    private static Harness.SliceBody rwSlice(ReadWriteLock[] locks, Overlap overlap) {
        return (t, random) -> {
            boolean write = random.nextInt(10) == 0;
            Lock l = write ? locks[t].writeLock() : locks[t].readLock();
            l.lock();
            try {
                if (write) {
                    overlap.write();
                } else {
                    overlap.read();
                }
            } finally {
                l.unlock();
            }
        };
    }

    /**
     * The 20 µs of work of one hold, with a count of holds that broke mutual exclusion as this process sees it (more
     * than {@link #PERMITS} permits at once; a writer beside any other holder).
     */
    static final class Overlap {
        private final java.util.concurrent.atomic.AtomicInteger readers =
                new java.util.concurrent.atomic.AtomicInteger();
        private final java.util.concurrent.atomic.AtomicInteger writers =
                new java.util.concurrent.atomic.AtomicInteger();
        private final java.util.concurrent.atomic.AtomicLong broken = new java.util.concurrent.atomic.AtomicLong();

        void permit() {
            if (readers.incrementAndGet() > PERMITS) {
                broken.incrementAndGet();
            }
            spin(20_000);
            readers.decrementAndGet();
        }

        void read() {
            readers.incrementAndGet();
            if (writers.get() != 0) {
                broken.incrementAndGet();
            }
            spin(20_000);
            readers.decrementAndGet();
        }

        void write() {
            if (writers.incrementAndGet() != 1 || readers.get() != 0) {
                broken.incrementAndGet();
            }
            spin(20_000);
            writers.decrementAndGet();
        }

        long broken() {
            return broken.get();
        }
    }

    // ---------------------------------------------------------------- helpers

    interface Op {
        void run() throws Exception;
    }

    private static Harness.SliceBody slice(Op op) {
        return (t, random) -> {
            try {
                op.run();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        };
    }

    private static void spin(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() - end < 0) {
            Thread.onSpinWait();
        }
    }

    private void ratio(List<Result> rows, String a, String b, String what) {
        double[] rounds = Harness.roundRatios(Harness.row(rows, a), Harness.row(rows, b));
        out.printf(
                Locale.ROOT,
                "- %s: %.2f× (median of the rounds' ratios %.2f×)%n",
                what,
                Harness.ops(rows, a) / Harness.ops(rows, b),
                rounds.length == 0 ? Double.NaN : rounds[rounds.length / 2]);
    }

    private void table(String title, List<Result> rows, CommandCounter counter, Overlap[] overlap, String note) {
        out.printf("%n### %s%n%n%s%n%n", title, note);
        out.println("| implementation | ops/s | p50 µs | p99 µs | errors | Redis commands / op | scripts / op |"
                + " µs in scripts / op |");
        out.println("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        for (int i = 0; i < rows.size(); i++) {
            Result r = rows.get(i);
            double ops = Math.max(1, r.ops());
            Map<String, Long> c = counter.calls(i);
            long all = c.values().stream().mapToLong(Long::longValue).sum();
            long scripts = c.getOrDefault("evalsha", 0L)
                    + c.getOrDefault("eval", 0L)
                    + c.getOrDefault("evalsha_ro", 0L)
                    + c.getOrDefault("eval_ro", 0L);
            out.printf(
                    Locale.ROOT,
                    "| %s | %.0f | %.0f | %.0f | %d | %.1f | %.2f | %.1f |%n",
                    r.label(),
                    r.opsPerSec(),
                    r.p50Micros(),
                    r.p99Micros(),
                    r.errors(),
                    all / ops,
                    scripts / ops,
                    counter.scriptMicros(i) / ops);
        }
        out.println();
        for (int i = 0; i < rows.size(); i++) {
            Result r = rows.get(i);
            double ops = Math.max(1, r.ops());
            StringBuilder s = new StringBuilder();
            for (var e : new TreeMap<>(counter.calls(i)).entrySet()) {
                double per = e.getValue() / ops;
                if (per >= 0.005) {
                    s.append(s.length() == 0 ? "" : ", ")
                            .append(e.getKey())
                            .append(' ')
                            .append(String.format(Locale.ROOT, "%.2f", per));
                }
            }
            out.printf(
                    "- %s, holds that overlapped others they exclude: %d; commands per op: %s%n",
                    r.label(), overlap[i].broken(), s.length() == 0 ? "none" : s);
            if (r.firstError() != null) {
                out.printf("  first error: %s%n", r.firstError());
            }
        }
        out.println();
    }

    /**
     * INFO commandstats deltas around every measured slice of {@link Harness#alternating}, per implementation (the
     * warm-up is not counted: the hook runs around measured slices only).
     */
    private static final class CommandCounter implements Harness.SliceHook, AutoCloseable {
        private final RedisClient admin;
        private final StatefulRedisConnection<String, String> connection;
        private final List<Map<String, Long>> totals = new ArrayList<>();
        private Map<String, Long> before = Map.of();

        CommandCounter(String uri, int implementations) {
            admin = RedisClient.create(uri);
            connection = admin.connect();
            for (int i = 0; i < implementations; i++) {
                totals.add(new HashMap<>());
            }
        }

        @Override
        public void before(int implementation) {
            before = parse(connection.sync().info("commandstats"));
        }

        @Override
        public void after(int implementation) {
            Map<String, Long> after = parse(connection.sync().info("commandstats"));
            Map<String, Long> total = totals.get(implementation);
            for (var e : after.entrySet()) {
                long d = e.getValue() - before.getOrDefault(e.getKey(), 0L);
                if (d > 0 && !e.getKey().equals("info")) {
                    total.merge(e.getKey(), d, Long::sum);
                }
            }
        }

        /** Calls per command; the key {@code script-usec} holds the microseconds Redis spent in scripts. */
        Map<String, Long> calls(int implementation) {
            Map<String, Long> calls = new HashMap<>(totals.get(implementation));
            calls.remove(SCRIPT_USEC);
            return calls;
        }

        long scriptMicros(int implementation) {
            return totals.get(implementation).getOrDefault(SCRIPT_USEC, 0L);
        }

        private static final String SCRIPT_USEC = "script-usec";

        /** Calls of each command, and under {@link #SCRIPT_USEC} the usec of evalsha and eval. */
        private static Map<String, Long> parse(String info) {
            Map<String, Long> m = new HashMap<>(RedisSyncBench.Commands.parse(info));
            long usec = 0;
            for (String line : info.split("\r?\n")) {
                if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
                    int at = line.indexOf("usec=");
                    usec += Long.parseLong(line.substring(at + 5, line.indexOf(',', at)));
                }
            }
            m.put(SCRIPT_USEC, usec);
            return m;
        }

        @Override
        public void close() {
            connection.close();
            admin.shutdown();
        }
    }
}
