package io.distlock.bench;

import io.distlock.DistributedCountDownLatch;
import io.distlock.DistributedReadWriteLock;
import io.distlock.DistributedSemaphore;
import io.distlock.LockClient;
import io.distlock.PermitHold;
import io.distlock.bench.Harness.Result;
import io.distlock.bench.Scenarios.Timing;
import io.distlock.redis.RedisLockClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import org.redisson.Redisson;
import org.redisson.api.RCountDownLatch;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RSemaphore;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/*
 * Overview
 *
 * Side by side against Redisson on the same Redis, in one run: read-write locks (90 % reads, 8 threads in one client
 * and in 8 clients), semaphores of 4 permits with 8 threads (distlock's leased, owned PermitHolds against
 * RPermitExpirableSemaphore with a lease and the bare RSemaphore), latches (8 waiters in 8 clients: from the last
 * countDown until every waiter has returned; Redis commands per countDown with 1 and 1,000 waiters), the watchdog's
 * round trips for 10,000 permit holds, and crash recovery (a child JVM holding 2 of 4 permits is killed).
 *
 * The throughput phases alternate the implementations in short slices (Harness.alternating), so machine load falls on
 * both sides alike; ratios are distlock over the peer. Command counts are INFO commandstats deltas (scripts count once
 * as evalsha plus the commands they run, which are listed too).
 */
/** Benchmarks of distlock's Redis read-write locks, semaphores and latches against Redisson's. */
final class RedisSyncBench {
    private static final int THREADS = 8;
    private static final int PERMITS = 4;
    private static final Duration CHILD_LEASE = Duration.ofSeconds(3);

    private final String uri;
    private final String host;
    private final int port;
    private final String runId = "sync-" + UUID.randomUUID().toString().substring(0, 8);
    private final PrintStream out;

    private RedisSyncBench(String uri, PrintStream out) {
        RedisURI u = RedisURI.create(uri);
        this.uri = uri;
        this.host = u.getHost();
        this.port = u.getPort();
        this.out = out;
    }

    static void run(String uri, Duration phase, PrintStream out) throws Exception {
        RedisSyncBench b = new RedisSyncBench(uri, out);
        Timing timing = Timing.of(phase);
        out.printf(
                Locale.ROOT,
                "%n## Redis synchronizers against Redisson%n%n- %s, load average %s, %d CPUs%n",
                java.time.Instant.now(),
                Report.loadAverage(),
                Runtime.getRuntime().availableProcessors());
        b.readWrite(timing, 1);
        b.readWrite(timing, THREADS);
        b.semaphores(timing);
        b.latch();
        b.latchCommands(1);
        b.latchCommands(1000);
        b.renewal();
        b.crashRecovery();
    }

    private Config redissonConfig() {
        return redissonConfig(host, port);
    }

    /** The Redisson client both Redis synchronizer benchmarks compare against: one server, small pools. */
    static Config redissonConfig(String host, int port) {
        Config c = new Config();
        c.useSingleServer()
                .setAddress("redis://" + host + ":" + port)
                .setConnectionMinimumIdleSize(2)
                .setConnectionPoolSize(8)
                .setSubscriptionConnectionMinimumIdleSize(1)
                .setSubscriptionConnectionPoolSize(8);
        c.setNettyThreads(4);
        c.setThreads(4);
        return c;
    }

    private LockClient distlock() {
        return RedisLockClient.builder().uri(uri).keyPrefix(runId + ":d:").build();
    }

    private void table(String title, List<Result> rows, String note) {
        out.printf("%n### %s%n%n%s%n%n", title, note);
        out.println("| implementation | ops/s | p50 µs | p99 µs | errors | distlock / this |");
        out.println("| --- | ---: | ---: | ---: | ---: | ---: |");
        double ours = rows.get(0).opsPerSec();
        for (Result r : rows) {
            out.printf(
                    Locale.ROOT,
                    "| %s | %.0f | %.0f | %.0f | %d | %s |%n",
                    r.label(),
                    r.opsPerSec(),
                    r.p50Micros(),
                    r.p99Micros(),
                    r.errors(),
                    r.opsPerSec() > 0 ? String.format(Locale.ROOT, "%.2f×", ours / r.opsPerSec()) : "-");
        }
    }

    // ---------------------------------------------------------------- read-write locks

    /** 90 % read lock, 10 % write lock, a short critical section; {@code clients} clients share the threads. */
    private void readWrite(Timing timing, int clients) throws Exception {
        String name = "rw-" + clients;
        List<LockClient> ours = new ArrayList<>();
        List<RedissonClient> theirs = new ArrayList<>();
        try {
            ReadWriteLock[] d = new ReadWriteLock[THREADS];
            ReadWriteLock[] r = new ReadWriteLock[THREADS];
            for (int i = 0; i < clients; i++) {
                ours.add(distlock());
                theirs.add(Redisson.create(redissonConfig()));
            }
            for (int t = 0; t < THREADS; t++) {
                DistributedReadWriteLock rw = ours.get(t % clients).readWriteLock(name);
                d[t] = rw;
                r[t] = theirs.get(t % clients).getReadWriteLock(runId + ":r:" + name);
            }
            List<Result> rows = Harness.alternating(
                    List.of("distlock readWriteLock", "Redisson RReadWriteLock"),
                    List.of(slice(rwBody(d)), slice(rwBody(r))),
                    THREADS,
                    timing,
                    null);
            table(
                    "Read-write lock, one name, " + THREADS + " threads in " + clients
                            + (clients == 1 ? " client" : " clients") + ", 90 % reads",
                    rows,
                    "Each operation: lock, 20 µs of work (busy), unlock; reads and writes drawn at random per operation.");
        } finally {
            ours.forEach(LockClient::close);
            theirs.forEach(RedissonClient::shutdown);
        }
    }

    /** A body as a slice of {@link Harness#alternating}: a checked exception fails the operation. */
    private static Harness.SliceBody slice(Harness.Body body) {
        Harness.Probe probe = new Harness.Probe(THREADS); // the bodies mark no hand-offs
        return (t, random) -> {
            try {
                body.run(t, probe);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        };
    }

    private static Harness.Body rwBody(ReadWriteLock[] locks) {
        return (t, probe) -> {
            boolean write = ThreadLocalRandom.current().nextInt(10) == 0;
            Lock l = write ? locks[t].writeLock() : locks[t].readLock();
            l.lock();
            try {
                spin(20_000);
            } finally {
                l.unlock();
            }
        };
    }

    private static void spin(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() - end < 0) {
            Thread.onSpinWait();
        }
    }

    // ---------------------------------------------------------------- semaphores

    private void semaphores(Timing timing) throws Exception {
        LockClient ours = distlock();
        RedissonClient r = Redisson.create(redissonConfig());
        try {
            DistributedSemaphore d = ours.semaphore("sem", PERMITS);
            RPermitExpirableSemaphore expirable = r.getPermitExpirableSemaphore(runId + ":rpe:sem");
            expirable.trySetPermits(PERMITS);
            RSemaphore bare = r.getSemaphore(runId + ":rs:sem");
            bare.trySetPermits(PERMITS);
            Harness.Body ourBody = (t, probe) -> {
                PermitHold p = d.acquire(1);
                try {
                    spin(20_000);
                } finally {
                    p.release();
                }
            };
            Harness.Body expirableBody = (t, probe) -> {
                String id = expirable.acquire(30, TimeUnit.SECONDS);
                try {
                    spin(20_000);
                } finally {
                    expirable.release(id);
                }
            };
            Harness.Body bareBody = (t, probe) -> {
                bare.acquire();
                try {
                    spin(20_000);
                } finally {
                    bare.release();
                }
            };
            List<Result> rows = Harness.alternating(
                    List.of(
                            "distlock semaphore (owned, leased, renewed)",
                            "Redisson RPermitExpirableSemaphore (30 s lease)",
                            "Redisson RSemaphore (no owner, no lease)"),
                    List.of(slice(ourBody), slice(expirableBody), slice(bareBody)),
                    THREADS,
                    timing,
                    null);
            table(
                    "Semaphore of " + PERMITS + " permits, " + THREADS + " threads in one client",
                    rows,
                    "Each operation: acquire 1 permit, 20 µs of work (busy), release.");
        } finally {
            ours.close();
            r.shutdown();
        }
    }

    // ---------------------------------------------------------------- latches

    /** 8 waiters in 8 clients each; the time from the last countDown until every waiter has returned. */
    private void latch() throws Exception {
        int rounds = 30;
        long[] ours = new long[rounds];
        long[] theirs = new long[rounds];
        List<LockClient> dc = new ArrayList<>();
        List<RedissonClient> rc = new ArrayList<>();
        try {
            for (int i = 0; i < THREADS + 1; i++) {
                dc.add(distlock());
                rc.add(Redisson.create(redissonConfig()));
            }
            for (int round = 0; round < rounds; round++) {
                String name = "latch-" + round;
                ours[round] = latchRound(
                        () -> dc.get(THREADS).countDownLatch(name).trySetCount(1),
                        i -> () -> dc.get(i).countDownLatch(name).await(Duration.ofSeconds(30)),
                        () -> {
                            dc.get(THREADS).countDownLatch(name).countDown();
                            return Boolean.TRUE;
                        });
                RCountDownLatch[] latches = new RCountDownLatch[THREADS + 1];
                for (int i = 0; i <= THREADS; i++) {
                    latches[i] = rc.get(i).getCountDownLatch(runId + ":rl:" + name);
                }
                theirs[round] = latchRound(
                        () -> latches[THREADS].trySetCount(1),
                        i -> () -> latches[i].await(30, TimeUnit.SECONDS),
                        () -> {
                            latches[THREADS].countDown();
                            return Boolean.TRUE;
                        });
            }
        } finally {
            dc.forEach(LockClient::close);
            rc.forEach(RedissonClient::shutdown);
        }
        Arrays.sort(ours);
        Arrays.sort(theirs);
        out.printf(
                "%n### Latch: %d waiters in %d clients, last countDown until every waiter returned (%d rounds)%n%n",
                THREADS, THREADS, rounds);
        out.println("| implementation | p50 µs | p90 µs | max µs |");
        out.println("| --- | ---: | ---: | ---: |");
        printLatch("distlock countDownLatch", ours);
        printLatch("Redisson RCountDownLatch", theirs);
        out.printf(
                Locale.ROOT, "%ndistlock p50 / Redisson p50: %.2f%n", (double) ours[rounds / 2] / theirs[rounds / 2]);
    }

    private void printLatch(String label, long[] sorted) {
        out.printf(
                Locale.ROOT,
                "| %s | %.0f | %.0f | %.0f |%n",
                label,
                sorted[sorted.length / 2] / 1e3,
                sorted[sorted.length * 9 / 10] / 1e3,
                sorted[sorted.length - 1] / 1e3);
    }

    interface Step {
        Object run() throws Exception;
    }

    interface Waiter {
        Step of(int i);
    }

    private static long latchRound(Step set, Waiter await, Step countDown) throws Exception {
        set.run();
        CountDownLatch waiting = new CountDownLatch(THREADS);
        long[] returned = new long[THREADS];
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < THREADS; i++) {
            int n = i;
            Step s = await.of(i);
            Thread t = new Thread(() -> {
                waiting.countDown();
                try {
                    s.run();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                returned[n] = System.nanoTime();
            });
            threads.add(t);
            t.start();
        }
        waiting.await();
        Thread.sleep(300); // every waiter subscribed and parked
        countDown.run();
        long zero = System.nanoTime(); // the countDown's answer: the latch is at zero in Redis
        for (Thread t : threads) {
            t.join(35_000);
        }
        long last = 0;
        for (long r : returned) {
            last = Math.max(last, r - zero);
        }
        return last;
    }

    /** Redis commands the countDown that reaches zero costs, with {@code waiters} waiters in one client. */
    private void latchCommands(int waiters) throws Exception {
        RedisClient admin = RedisClient.create(uri);
        try (StatefulRedisConnection<String, String> c = admin.connect();
                LockClient waiting = distlock();
                LockClient counting = distlock()) {
            String name = "latch-cmds-" + waiters;
            DistributedCountDownLatch latch = counting.countDownLatch(name);
            var unusedSet = latch.trySetCount(1);
            List<Thread> threads = new ArrayList<>();
            CountDownLatch started = new CountDownLatch(waiters);
            for (int i = 0; i < waiters; i++) {
                Thread t = new Thread(() -> {
                    started.countDown();
                    try {
                        var unusedAwait = waiting.countDownLatch(name).await(Duration.ofSeconds(60));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                threads.add(t);
                t.start();
            }
            started.await();
            Thread.sleep(1000);
            String before = c.sync().info("commandstats");
            latch.countDown();
            String after = c.sync().info("commandstats");
            for (Thread t : threads) {
                t.join(60_000);
            }
            out.printf(
                    "%n- countDown to zero with %d waiter(s) in one client: Redis commands %s%n",
                    waiters, Commands.delta(before, after));
        } finally {
            admin.shutdown();
        }
    }

    // ---------------------------------------------------------------- renewal

    /** 10,000 permit holds of one client, renewed by the watchdog: scripts per tick from INFO commandstats. */
    private void renewal() throws Exception {
        int holds = 10_000;
        RedisClient admin = RedisClient.create(uri);
        try (StatefulRedisConnection<String, String> c = admin.connect();
                LockClient client = RedisLockClient.builder()
                        .uri(uri)
                        .keyPrefix(runId + ":renew:")
                        .leaseTime(Duration.ofSeconds(3))
                        .build()) {
            List<PermitHold> held = new ArrayList<>();
            for (int i = 0; i < holds; i++) {
                held.add(client.semaphore("renew-" + i, 2).tryAcquire(1).orElseThrow());
            }
            Thread.sleep(500);
            String before = c.sync().info("commandstats");
            long start = System.nanoTime();
            Thread.sleep(5000); // five ticks of a 3 s lease (one tick every second)
            String after = c.sync().info("commandstats");
            double seconds = (System.nanoTime() - start) / 1e9;
            int valid = 0;
            for (PermitHold h : held) {
                valid += h.isValid() ? 1 : 0;
            }
            out.printf(
                    Locale.ROOT,
                    "%n- %d permit holds of one client, watchdog lease 3 s (a tick a second), over %.1f s: Redis"
                            + " commands %s; %d holds still valid%n",
                    holds,
                    seconds,
                    Commands.delta(before, after),
                    valid);
            for (PermitHold h : held) {
                try {
                    h.release();
                } catch (IllegalMonitorStateException e) {
                    // lost (its renewal came too late on a loaded machine): reported above as not valid
                }
            }
        } finally {
            admin.shutdown();
        }
    }

    // ---------------------------------------------------------------- crash recovery

    /**
     * A child JVM takes 2 of 4 permits and is killed (SIGKILL); the time until this process gets all 4, for distlock
     * (child lease 3 s) and for Redisson's RSemaphore (bounded at 15 s: its permits never come back).
     */
    private void crashRecovery() throws Exception {
        out.printf("%n### Crash recovery: a child JVM holding 2 of 4 permits is killed%n%n");
        out.println("| implementation | all 4 permits back after the kill |");
        out.println("| --- | --- |");
        try (LockClient client = distlock()) {
            String name = "crash";
            Process p = child("distlock", runId + ":d:", name);
            DistributedSemaphore s = client.semaphore(name, PERMITS);
            long killed = kill(p);
            Optional<PermitHold> all = s.tryAcquire(PERMITS, Duration.ofSeconds(15));
            out.printf(
                    Locale.ROOT,
                    "| distlock semaphore (child lease %d s) | %s |%n",
                    CHILD_LEASE.toSeconds(),
                    all.isPresent()
                            ? String.format(Locale.ROOT, "%.2f s", (System.nanoTime() - killed) / 1e9)
                            : "not within 15 s");
            all.ifPresent(PermitHold::release);
        }
        RedissonClient r = Redisson.create(redissonConfig());
        try {
            String name = runId + ":rs:crash";
            r.getSemaphore(name).trySetPermits(PERMITS);
            Process p = child("redisson", name, "");
            long killed = kill(p);
            boolean got = r.getSemaphore(name).tryAcquire(PERMITS, 15, TimeUnit.SECONDS);
            out.printf(
                    Locale.ROOT,
                    "| Redisson RSemaphore | %s |%n",
                    got
                            ? String.format(Locale.ROOT, "%.2f s", (System.nanoTime() - killed) / 1e9)
                            : "not within 15 s (never: no owner, no lease)");
        } finally {
            r.shutdown();
        }
    }

    private Process child(String kind, String prefixOrName, String name) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(
                        java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java")
                                .toString(),
                        "-cp",
                        System.getProperty("java.class.path"),
                        Child.class.getName(),
                        kind,
                        uri,
                        prefixOrName,
                        name)
                .redirectErrorStream(true);
        Process p = pb.start();
        BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            if (line.equals("HELD")) {
                return p;
            }
        }
        throw new IllegalStateException("the child ended before it held the permits: " + p.waitFor());
    }

    private static long kill(Process p) throws InterruptedException {
        p.destroyForcibly();
        p.waitFor();
        return System.nanoTime();
    }

    /** The child JVM of {@link #crashRecovery}: takes 2 of 4 permits, says HELD, and waits to be killed. */
    public static final class Child {
        private Child() {}

        public static void main(String[] args) throws Exception {
            if (args[0].equals("distlock")) {
                LockClient c = RedisLockClient.builder()
                        .uri(args[1])
                        .keyPrefix(args[2])
                        .leaseTime(CHILD_LEASE)
                        .build();
                var unused = c.semaphore(args[3], PERMITS).acquire(2);
            } else {
                Config config = new Config();
                config.useSingleServer().setAddress(args[1]);
                RedissonClient r = Redisson.create(config);
                r.getSemaphore(args[2]).acquire(2);
            }
            System.out.println("HELD");
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE);
        }
    }

    /** INFO commandstats deltas. */
    static final class Commands {
        private Commands() {}

        static String delta(String before, String after) {
            java.util.Map<String, Long> b = parse(before);
            java.util.Map<String, Long> a = parse(after);
            StringBuilder s = new StringBuilder();
            for (var e : new java.util.TreeMap<>(a).entrySet()) {
                long d = e.getValue() - b.getOrDefault(e.getKey(), 0L);
                if (d > 0 && !e.getKey().equals("info")) {
                    s.append(s.length() == 0 ? "" : ", ")
                            .append(e.getKey())
                            .append(' ')
                            .append(d);
                }
            }
            return s.length() == 0 ? "none" : s.toString();
        }

        static java.util.Map<String, Long> parse(String info) {
            java.util.Map<String, Long> m = new java.util.HashMap<>();
            for (String line : info.split("\r?\n")) {
                if (line.startsWith("cmdstat_")) {
                    int colon = line.indexOf(':');
                    int calls = line.indexOf("calls=");
                    int comma = line.indexOf(',', calls);
                    m.put(line.substring(8, colon), Long.parseLong(line.substring(calls + 6, comma)));
                }
            }
            return m;
        }
    }
}
