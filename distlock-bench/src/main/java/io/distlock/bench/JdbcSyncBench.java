package io.distlock.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.distlock.DistributedLock;
import io.distlock.DistributedReadWriteLock;
import io.distlock.DistributedSemaphore;
import io.distlock.LockClient;
import io.distlock.PermitHold;
import io.distlock.jdbc.JdbcLockClient;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import javax.sql.DataSource;

/*
 * Overview
 *
 * Issue 23's figures for read-write locks, semaphores and latches on JDBC, on MariaDB and PostgreSQL in one run:
 *
 * Round trips: one client on a counting DataSource (a java.lang.reflect.Proxy around the pool's connections) does
 *   single-threaded acquire+release pairs of each kind in each mode and divides what it counted: statements sent
 *   (execute*), commits and rollbacks, and the connection-state calls that the PostgreSQL driver answers with a query
 *   (getTransactionIsolation). On MariaDB the same pairs run over a pool of one connection whose own server counter
 *   (SHOW SESSION STATUS 'Questions', read on that connection between pairs) confirms the count.
 * Throughput: mode TABLE, 8 threads, each with its own client on one pool, one name: lock+unlock; read-write lock with
 *   90% reads; a 4-permit semaphore, one permit per acquire. Every operation goes to the database.
 * Hand-off: a holder in one client releases while a waiter in another client waits; the time from the release call
 *   to the waiter's grant, for a lock, a write lock and a one-permit semaphore (PostgreSQL wakes by LISTEN/NOTIFY,
 *   MariaDB polls).
 * Counter: 3 clients (own pools, as 3 processes would have) x 4 threads increment a row under one lock in mode TABLE.
 */
/** JDBC read-write locks, semaphores and latches: round trips, ops/s against the lock, hand-off time, counter. */
public final class JdbcSyncBench {
    private static final String TABLE = "dlbench_sync";
    private static final int PAIRS = 200;

    private JdbcSyncBench() {}

    /** Runs every part on both databases; an empty URL skips that database. */
    public static void run(String mariadbUrl, String postgresUrl, Duration phase, PrintStream out) {
        String runId = "dlsync-" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 20);
        if (!mariadbUrl.isEmpty()) {
            database(out, phase, runId, "MariaDB", mariadbUrl, "root");
        }
        if (!postgresUrl.isEmpty()) {
            database(out, phase, runId, "PostgreSQL", postgresUrl, "postgres");
        }
    }

    private static void database(PrintStream out, Duration phase, String runId, String db, String url, String user) {
        out.printf("%n## %s (%s)%n", db, url);
        out.printf("%nload average at start: %.2f%n", loadAverage());
        try (HikariDataSource pool = pool(url, user, 48)) {
            JdbcLockClient.builder()
                    .dataSource(pool)
                    .tableName(TABLE)
                    .createSchemaIfMissing()
                    .build()
                    .close();
            roundTrips(out, db, runId, pool);
            if (db.equals("MariaDB")) {
                sessionQuestions(out, runId, url, user);
            }
            throughput(out, runId, pool, phase);
            handOff(out, runId, pool);
            counter(out, runId, url, user, phase);
        }
        out.printf("%nload average at end: %.2f%n", loadAverage());
    }

    // ---------------------------------------------------------------- round trips

    /** What a pair counts on the wire, per operation. */
    private static final class Counts {
        final AtomicLong statements = new AtomicLong();
        final AtomicLong commits = new AtomicLong();
        final AtomicLong stateQueries = new AtomicLong();

        long[] read() {
            return new long[] {statements.get(), commits.get(), stateQueries.get()};
        }
    }

    private static DataSource counting(DataSource ds, Counts counts) {
        return (DataSource) Proxy.newProxyInstance(
                JdbcSyncBench.class.getClassLoader(), new Class<?>[] {DataSource.class}, (p, m, args) -> {
                    Object r = invoke(m, ds, args);
                    return r instanceof Connection c ? countingConnection(c, counts) : r;
                });
    }

    private static Connection countingConnection(Connection c, Counts counts) {
        return (Connection) Proxy.newProxyInstance(
                JdbcSyncBench.class.getClassLoader(), new Class<?>[] {Connection.class}, (p, m, args) -> {
                    switch (m.getName()) {
                        case "commit", "rollback" -> counts.commits.incrementAndGet();
                        case "getTransactionIsolation", "setTransactionIsolation" ->
                            counts.stateQueries.incrementAndGet();
                        default -> {}
                    }
                    Object r = invoke(m, c, args);
                    if (r instanceof PreparedStatement ps) {
                        return countingStatement(ps, PreparedStatement.class, counts);
                    }
                    if (r instanceof Statement s) {
                        return countingStatement(s, Statement.class, counts);
                    }
                    return r;
                });
    }

    private static Object countingStatement(Statement s, Class<?> type, Counts counts) {
        return Proxy.newProxyInstance(JdbcSyncBench.class.getClassLoader(), new Class<?>[] {type}, (p, m, args) -> {
            if (m.getName().startsWith("execute")) {
                counts.statements.incrementAndGet();
            }
            return invoke(m, s, args);
        });
    }

    private static Object invoke(java.lang.reflect.Method m, Object target, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    private record Op(String kind, Function<LockClient, Runnable> acquire) {}

    private static void roundTrips(PrintStream out, String db, String runId, DataSource pool) {
        out.printf(
                "%n### Round trips per operation (%d single-threaded pairs, counted on the wire by the client)%n%n",
                PAIRS);
        out.println("| mode | kind | acquire: statements | commits | isolation queries | release: statements | commits"
                + " | isolation queries |");
        out.println("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
        for (JdbcLockClient.Mode mode : JdbcLockClient.Mode.values()) {
            Counts counts = new Counts();
            try (JdbcLockClient client = JdbcLockClient.builder()
                    .dataSource(counting(pool, counts))
                    .tableName(TABLE)
                    .mode(mode)
                    .build()) {
                for (String kind : List.of("lock", "read lock", "write lock", "semaphore 1 of 4", "latch")) {
                    String name = runId + "-rt-" + mode + "-" + kind.replace(' ', '-');
                    long[] acq = new long[3];
                    long[] rel = new long[3];
                    boolean refused = false;
                    for (int i = 0; i < PAIRS; i++) {
                        long[] a0 = counts.read();
                        Runnable release;
                        try {
                            release = acquire(client, kind, name);
                        } catch (UnsupportedOperationException e) {
                            refused = true;
                            break;
                        }
                        long[] a1 = counts.read();
                        release.run();
                        long[] a2 = counts.read();
                        for (int k = 0; k < 3; k++) {
                            acq[k] += a1[k] - a0[k];
                            rel[k] += a2[k] - a1[k];
                        }
                    }
                    if (refused) {
                        out.printf("| %s | %s | refused | | | | | |%n", mode, kind);
                        continue;
                    }
                    out.printf(
                            Locale.ROOT,
                            "| %s | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |%n",
                            mode,
                            kind,
                            acq[0] / (double) PAIRS,
                            acq[1] / (double) PAIRS,
                            acq[2] / (double) PAIRS,
                            rel[0] / (double) PAIRS,
                            rel[1] / (double) PAIRS,
                            rel[2] / (double) PAIRS);
                }
            } catch (IllegalArgumentException e) {
                out.printf("| %s | (mode not available: %s) | | | | | | |%n", mode, e.getMessage());
            }
        }
        out.println();
        out.println("For latches the acquire column is trySetCount(1) and the release column the countDown() that"
                + " opens it. Each statement and each commit is one round trip; on PostgreSQL each isolation query is"
                + " one more (the driver asks the server), on MariaDB the driver answers it from session tracking.");
    }

    /** Acquires one hold of {@code kind}; returns its release. */
    private static Runnable acquire(LockClient client, String kind, String name) {
        switch (kind) {
            case "lock" -> {
                DistributedLock l = client.lock(name);
                check(l.tryLock());
                return l::unlock;
            }
            case "read lock" -> {
                DistributedLock l = client.readWriteLock(name).readLock();
                check(l.tryLock());
                return l::unlock;
            }
            case "write lock" -> {
                DistributedLock l = client.readWriteLock(name).writeLock();
                check(l.tryLock());
                return l::unlock;
            }
            case "semaphore 1 of 4" -> {
                PermitHold h = client.semaphore(name, 4).tryAcquire(1).orElseThrow();
                return h::release;
            }
            case "latch" -> {
                var latch = client.countDownLatch(name);
                check(latch.trySetCount(1));
                return latch::countDown;
            }
            default -> throw new AssertionError(kind);
        }
    }

    private static void check(boolean acquired) {
        if (!acquired) {
            throw new IllegalStateException("not acquired uncontended");
        }
    }

    /** MariaDB's own per-session counter over a pool of one connection, read on that connection between pairs. */
    private static void sessionQuestions(PrintStream out, String runId, String url, String user) {
        out.printf("%n### MariaDB's own count: SHOW SESSION STATUS 'Questions' per operation, mode TABLE%n%n");
        out.println("| kind | acquire | release |");
        out.println("| --- | ---: | ---: |");
        try (HikariDataSource one = pool(url, user, 1);
                JdbcLockClient client = JdbcLockClient.builder()
                        .dataSource(one)
                        .tableName(TABLE)
                        .build()) {
            for (String kind : List.of("lock", "read lock", "write lock", "semaphore 1 of 4", "latch")) {
                String name = runId + "-q-" + kind.replace(' ', '-');
                long acq = 0;
                long rel = 0;
                int pairs = 50;
                for (int i = 0; i < pairs; i++) {
                    long q0 = questions(one);
                    Runnable release = acquire(client, kind, name);
                    long q1 = questions(one);
                    release.run();
                    long q2 = questions(one);
                    acq += q1 - q0 - 1; // the SHOW itself is a question
                    rel += q2 - q1 - 1;
                }
                out.printf(Locale.ROOT, "| %s | %.2f | %.2f |%n", kind, acq / (double) pairs, rel / (double) pairs);
            }
        }
        out.println();
        out.println("Questions counts every statement the server ran for the session, including the driver's own"
                + " (autocommit switches, the pool's reset on return); COMMIT is one of them.");
    }

    private static long questions(DataSource one) {
        try (Connection c = one.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SHOW SESSION STATUS LIKE 'Questions'")) {
            rs.next();
            return rs.getLong(2);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    // ---------------------------------------------------------------- throughput

    private static void throughput(PrintStream out, String runId, DataSource pool, Duration phase) {
        out.printf("%n### 8 threads with a client each, one name per row: ops/s (%d s per row)%n%n", phase.toSeconds());
        out.println("| mode | primitive | ops/s | ÷ the mode's lock |");
        out.println("| --- | --- | ---: | ---: |");
        for (JdbcLockClient.Mode mode : JdbcLockClient.Mode.values()) {
            String prefix = runId + "-tp-" + mode;
            double lock = measure(pool, mode, phase, 8, (client, t) -> {
                DistributedLock l = client.lock(prefix + "-lock");
                return () -> {
                    l.lock();
                    l.unlock();
                };
            });
            if (Double.isNaN(lock)) {
                out.printf("| %s | (mode not available) | | |%n", mode);
                continue;
            }
            out.printf(Locale.ROOT, "| %s | lock | %.0f | 1.00× |%n", mode, lock);
            double rw = measure(pool, mode, phase, 8, (client, t) -> {
                DistributedReadWriteLock l = client.readWriteLock(prefix + "-rw");
                return () -> {
                    DistributedLock which = ThreadLocalRandom.current().nextInt(10) == 0 ? l.writeLock() : l.readLock();
                    which.lock();
                    which.unlock();
                };
            });
            row(out, mode, "read-write lock, 90% reads", rw, lock);
            double sem = measure(pool, mode, phase, 8, (client, t) -> {
                DistributedSemaphore s = client.semaphore(prefix + "-sem", 4);
                return () -> {
                    try {
                        s.acquire(1).release();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                };
            });
            row(out, mode, "semaphore, 4 permits", sem, lock);
        }
    }

    private static void row(PrintStream out, JdbcLockClient.Mode mode, String what, double ops, double lock) {
        if (Double.isNaN(ops)) {
            out.printf("| %s | %s | refused | |%n", mode, what);
        } else {
            out.printf(Locale.ROOT, "| %s | %s | %.0f | %.2f× |%n", mode, what, ops, ops / lock);
        }
    }

    private interface Body {
        Runnable make(LockClient client, int thread);
    }

    /**
     * Runs {@code threads} loops of one client each for a warm-up second and {@code phase}; returns ops/s, or NaN when
     * the mode is not available on the database or refuses the primitive.
     */
    private static double measure(DataSource pool, JdbcLockClient.Mode mode, Duration phase, int threads, Body body) {
        List<JdbcLockClient> clients = new ArrayList<>();
        AtomicBoolean counting = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong ops = new AtomicLong();
        List<Thread> ts = new ArrayList<>();
        try {
            for (int i = 0; i < threads; i++) {
                JdbcLockClient c = JdbcLockClient.builder()
                        .dataSource(pool)
                        .tableName(TABLE)
                        .mode(mode)
                        .build();
                clients.add(c);
                Runnable op = body.make(c, i);
                ts.add(new Thread(() -> {
                    while (!stop.get()) {
                        op.run();
                        if (counting.get()) {
                            ops.incrementAndGet();
                        }
                    }
                }));
            }
        } catch (IllegalArgumentException | UnsupportedOperationException e) {
            clients.forEach(JdbcLockClient::close);
            return Double.NaN;
        }
        ts.forEach(Thread::start);
        sleep(Duration.ofSeconds(1));
        counting.set(true);
        long start = System.nanoTime();
        sleep(phase);
        counting.set(false);
        long n = ops.get();
        double secs = (System.nanoTime() - start) / 1e9;
        stop.set(true);
        for (Thread t : ts) {
            join(t);
        }
        clients.forEach(JdbcLockClient::close);
        return n / secs;
    }

    // ---------------------------------------------------------------- hand-off

    private static void handOff(PrintStream out, String runId, DataSource pool) {
        out.printf("%n### Hand-off: from the holder's release call to the waiter's grant, two clients (30 rounds)%n%n");
        out.println("| primitive | p50 ms | p90 ms | max ms |");
        out.println("| --- | ---: | ---: | ---: |");
        for (String kind : List.of("lock", "write lock", "semaphore 1 of 1")) {
            long[] micros = new long[30];
            try (JdbcLockClient a = JdbcLockClient.builder()
                            .dataSource(pool)
                            .tableName(TABLE)
                            .build();
                    JdbcLockClient b = JdbcLockClient.builder()
                            .dataSource(pool)
                            .tableName(TABLE)
                            .build()) {
                String name = runId + "-ho-" + kind.replace(' ', '-');
                for (int i = 0; i < micros.length; i++) {
                    Runnable releaseA = blocking(a, kind, name);
                    AtomicLong grantedAt = new AtomicLong();
                    CountDownLatch waiting = new CountDownLatch(1);
                    Thread waiter = new Thread(() -> {
                        waiting.countDown();
                        Runnable releaseB = blocking(b, kind, name);
                        grantedAt.set(System.nanoTime());
                        releaseB.run();
                    });
                    waiter.start();
                    await(waiting);
                    sleep(Duration.ofMillis(300)); // the waiter is parked in the store's wait by now
                    long releasedAt = System.nanoTime();
                    releaseA.run();
                    join(waiter);
                    micros[i] = (grantedAt.get() - releasedAt) / 1000;
                }
            }
            Arrays.sort(micros);
            out.printf(
                    Locale.ROOT,
                    "| %s | %.1f | %.1f | %.1f |%n",
                    kind,
                    micros[micros.length / 2] / 1000.0,
                    micros[micros.length * 9 / 10] / 1000.0,
                    micros[micros.length - 1] / 1000.0);
        }
    }

    /** Acquires with waiting; returns the release. */
    private static Runnable blocking(LockClient client, String kind, String name) {
        try {
            switch (kind) {
                case "lock" -> {
                    DistributedLock l = client.lock(name);
                    l.lockInterruptibly();
                    return l::unlock;
                }
                case "write lock" -> {
                    DistributedLock l = client.readWriteLock(name).writeLock();
                    l.lockInterruptibly();
                    return l::unlock;
                }
                default -> {
                    PermitHold h = client.semaphore(name, 1).acquire(1);
                    return h::release;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    // ---------------------------------------------------------------- counter

    private static void counter(PrintStream out, String runId, String url, String user, Duration phase) {
        out.printf("%n### 3 clients (own pools) x 4 threads increment a row under one lock, mode TABLE%n%n");
        String table = TABLE + "_counter";
        try (HikariDataSource admin = pool(url, user, 2);
                Connection c = admin.getConnection();
                Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS " + table + " (id VARCHAR(64) PRIMARY KEY, v BIGINT NOT NULL)");
            s.execute("INSERT INTO " + table + " (id, v) VALUES ('" + runId + "', 0)");
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        List<HikariDataSource> pools = new ArrayList<>();
        List<JdbcLockClient> clients = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            HikariDataSource p = pool(url, user, 8);
            pools.add(p);
            clients.add(JdbcLockClient.builder().dataSource(p).tableName(TABLE).build());
        }
        AtomicBoolean counting = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong ops = new AtomicLong();
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            JdbcLockClient client = clients.get(i % 3);
            DataSource ds = pools.get(i % 3);
            DistributedLock lock = client.lock(runId + "-counter");
            Thread t = new Thread(() -> {
                while (!stop.get()) {
                    lock.lock();
                    try (Connection c = ds.getConnection();
                            PreparedStatement ps =
                                    c.prepareStatement("UPDATE " + table + " SET v = v + 1 WHERE id = ?")) {
                        ps.setString(1, runId);
                        ps.executeUpdate();
                    } catch (SQLException e) {
                        throw new IllegalStateException(e);
                    } finally {
                        lock.unlock();
                    }
                    if (counting.get()) {
                        ops.incrementAndGet();
                    }
                }
            });
            ts.add(t);
            t.start();
        }
        sleep(Duration.ofSeconds(1));
        counting.set(true);
        long start = System.nanoTime();
        sleep(phase);
        counting.set(false);
        double rate = ops.get() / ((System.nanoTime() - start) / 1e9);
        stop.set(true);
        ts.forEach(JdbcSyncBench::join);
        clients.forEach(JdbcLockClient::close);
        pools.forEach(HikariDataSource::close);
        out.printf(Locale.ROOT, "increments/s: %.0f%n", rate);
    }

    // ---------------------------------------------------------------- helpers

    private static HikariDataSource pool(String url, String user, int size) {
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(url);
        hc.setUsername(user);
        hc.setPassword("");
        hc.setMaximumPoolSize(size);
        hc.setMinimumIdle(Math.min(size, 1));
        hc.setPoolName("bench-sync-" + size + "-" + System.nanoTime());
        return new HikariDataSource(hc);
    }

    private static double loadAverage() {
        return java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void join(Thread t) {
        try {
            t.join(TimeUnit.SECONDS.toMillis(60));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void await(CountDownLatch l) {
        try {
            l.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
