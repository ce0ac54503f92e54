package io.distlock.safety;

import static io.distlock.testkit.history.Property.L3;
import static io.distlock.testkit.history.Property.L4;
import static io.distlock.testkit.history.Property.LIN;
import static io.distlock.testkit.history.Property.S1;
import static io.distlock.testkit.history.Property.S2;
import static io.distlock.testkit.history.Property.S3;
import static io.distlock.testkit.history.Property.S4;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.distlock.DistributedLockException;
import io.distlock.LockClient;
import io.distlock.jdbc.JdbcLockClient;
import io.distlock.testkit.Timing;
import io.distlock.testkit.history.CheckReport;
import io.distlock.testkit.history.FencedResourceClient;
import io.distlock.testkit.history.HistoryWriter;
import io.distlock.testkit.history.RecordedHold;
import io.distlock.testkit.history.RecordedLock;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * J6 of FAULTS.md 4.6, transactions around session locks (modes ADVISORY and ROW_LOCK on MariaDB and PostgreSQL):
 * holders that run their own transactions, committed, rolled back, failed and rolled back, or partly rolled back to a
 * savepoint, on connections of the very pool the lock client pins its sessions from, while they hold.
 */
final class JdbcTransactionScenarios {
    private static final List<String> CLIENTS = List.of("c1", "c2", "c3");

    /** How a holder ends its transaction. */
    enum Ending {
        COMMIT,
        ROLLBACK,
        FAILED_ROLLBACK,
        SAVEPOINT_COMMIT
    }

    private JdbcTransactionScenarios() {}

    /**
     * J6: three clients in this JVM, each on a HikariCP pool of its own with {@code autoCommit=false} (as JPA
     * applications configure it) and 6 connections, so the connections a hold pinned and gave back are the ones the
     * holders' transactions get next. Each client's thread loops for 12 s: take the lock, read the fenced counter, run a
     * transaction on a connection of the same pool (insert a row, then one {@link Ending}, chosen at random), then ask
     * a fourth client, {@code c4}, to take the lock at once (it must be refused: the hold survived the transaction),
     * write the counter + 1, release. On PostgreSQL in mode ADVISORY the holder's session is sampled after the
     * transaction: it must be idle outside any transaction (a session-level {@code pg_advisory_lock}, not a
     * transaction-scoped one that a commit would end).
     *
     * <p>MUST: S1 to S4 and LIN (a hold ended by a commit or rollback would let c4 in beside its holder); c4 never gets
     * the lock from a holder; the rows committed are exactly those of the committed transactions (the lock never
     * committed or rolled back a holder's work); after the run no advisory lock is left on any pooled connection and
     * no row or lock in the store (L4); a fresh client takes the lock (L3).
     */
    static CheckReport j6Transactions(JdbcStores.Database store, long seed) throws InterruptedException {
        if (store.mode.equals("TABLE")) {
            throw new IllegalArgumentException("J6 is about session locks, not mode TABLE");
        }
        try (Scenario s = new Scenario(
                "J6", "holders commit and roll back their own transactions while they hold", "tier2", store, seed)) {
            String work = s.prefix + "_work";
            store.execute("DROP TABLE IF EXISTS " + work);
            store.execute("CREATE TABLE " + work + " (id BIGINT PRIMARY KEY, token BIGINT NOT NULL)");
            List<HikariDataSource> pools = new ArrayList<>();
            List<LockClient> clients = new ArrayList<>();
            Counts counts = new Counts();
            List<Thread> threads = new ArrayList<>();
            AtomicReference<@Nullable Throwable> failure = new AtomicReference<>();
            try {
                for (String c : CLIENTS) {
                    Map<String, String> m = Clients.parse(s.spec(c, false));
                    HikariDataSource pool = pool(m, "j6-" + c + "-" + Long.toHexString(seed & 0xFFFF));
                    pools.add(pool);
                    clients.add(JdbcLockClient.builder()
                            .dataSource(pool)
                            .tableName(m.get("table"))
                            .mode(JdbcLockClient.Mode.valueOf(m.get("mode")))
                            .leaseTime(Duration.ofMillis(Long.parseLong(m.get("lease"))))
                            .createSchemaIfMissing()
                            .clientId(c)
                            .build());
                }
                LockClient prober = s.client("c4", false);
                long end = System.nanoTime() + Timing.seconds(12).toNanos();
                for (int i = 0; i < CLIENTS.size(); i++) {
                    String process = CLIENTS.get(i);
                    RecordedLock lock = new RecordedLock(clients.get(i).lock(s.key()), s.history(process));
                    RecordedLock probe = new RecordedLock(prober.lock(s.key()), s.history("c4-" + process));
                    HikariDataSource pool = pools.get(i);
                    SplittableRandom random = new SplittableRandom(seed * 31 + i);
                    Thread t = new Thread(
                            () -> {
                                try {
                                    loop(s, store, lock, probe, pool, work, random, end, counts);
                                } catch (Throwable e) {
                                    failure.compareAndSet(null, e);
                                }
                            },
                            "j6-" + process);
                    t.setDaemon(true);
                    threads.add(t);
                    t.start();
                }
                for (Thread t : threads) {
                    t.join(Timing.seconds(90).toMillis());
                    if (t.isAlive()) {
                        throw new AssertionError(t.getName() + " did not end within its run plus 90 s");
                    }
                }
                if (failure.get() != null) {
                    throw new AssertionError("a holder thread died", failure.get());
                }
                long rows = count(store, "SELECT COUNT(*) FROM " + work);
                long expected = counts.committedRows.get();
                counts.record(s);
                s.measure("rowsCommitted", rows);
                s.measure("rowsExpected", expected);
                long left = JdbcPoolScenarios.advisoryLocks(store, s.prefix, s.key());
                s.measure("advisoryLocksLeftOnPool", left);
                s.probe(List.of("probe"), Timing.seconds(3));
                s.leftovers(Timing.scaled(Duration.ofSeconds(2)));
                CheckReport r = s.finish(Scenario.expect(List.of(S1, S2, S3, S4, L3, L4, LIN), List.of()));
                List<String> broken = new ArrayList<>();
                if (counts.holdsEnded() == 0) {
                    broken.add("no transaction ran under a hold");
                }
                if (counts.probeGranted.get() > 0) {
                    broken.add(counts.probeGranted.get() + " time(s) c4 took the lock right after a holder's"
                            + " transaction ended");
                }
                if (counts.sessionInTransaction.get() > 0) {
                    broken.add(counts.sessionInTransaction.get() + " sample(s) of an advisory hold's session in an"
                            + " open transaction");
                }
                if (counts.advisorySamplesBlind.get() > 0) {
                    broken.add(counts.advisorySamplesBlind.get() + " of " + counts.advisorySamples.get()
                            + " sample(s) did not see the holder's advisory lock in pg_locks");
                }
                if (store.db == JdbcStores.Db.POSTGRESQL
                        && store.mode.equals("ADVISORY")
                        && counts.advisorySamples.get() == 0) {
                    broken.add("no advisory hold's session was sampled");
                }
                if (rows != expected) {
                    broken.add(rows + " rows committed, " + expected + " expected from the holders' commits");
                }
                if (left > 0) {
                    broken.add("an advisory lock left on a pooled connection after every unlock");
                }
                if (!broken.isEmpty()) {
                    throw new AssertionError("J6 on " + store.name() + ": " + String.join("; ", broken));
                }
                return r;
            } finally {
                for (Thread t : threads) {
                    t.interrupt();
                }
                for (LockClient c : clients) {
                    try {
                        c.close();
                    } catch (RuntimeException e) {
                        // closing anyway
                    }
                }
                pools.forEach(HikariDataSource::close);
                try {
                    store.execute("DROP TABLE IF EXISTS " + work);
                } catch (RuntimeException e) {
                    // best effort
                }
            }
        }
    }

    /** One holder: take, read, transaction, probe, write, release, until {@code end}. */
    private static void loop(
            Scenario s,
            JdbcStores.Database store,
            RecordedLock lock,
            RecordedLock probe,
            HikariDataSource pool,
            String work,
            SplittableRandom random,
            long end,
            Counts counts)
            throws InterruptedException {
        try (FencedResourceClient resource =
                new FencedResourceClient(Workload.RESOURCE_HOST, s.resource.port(), Duration.ofSeconds(5))) {
            while (System.nanoTime() - end < 0) {
                Optional<RecordedHold> h;
                try {
                    h = lock.tryAcquire(Timing.seconds(5));
                } catch (DistributedLockException e) {
                    Timing.sleep(Duration.ofMillis(100));
                    continue;
                }
                if (h.isEmpty()) {
                    continue;
                }
                RecordedHold hold = h.get();
                if (hold.check()) {
                    OptionalLong v = resource.read(hold);
                    Ending ending = Ending.values()[random.nextInt(Ending.values().length)];
                    transaction(pool, work, hold.token(), ending, counts);
                    counts.endings.merge(ending, 1L, Long::sum);
                    if (store.db == JdbcStores.Db.POSTGRESQL && store.mode.equals("ADVISORY")) {
                        long[] seen = advisorySessions(store, lock.history());
                        counts.advisorySamples.incrementAndGet();
                        counts.advisorySamplesBlind.addAndGet(seen[0] == 0 ? 1 : 0);
                        counts.sessionInTransaction.addAndGet(seen[1]);
                    }
                    Optional<RecordedHold> other = probe.tryAcquire(Duration.ZERO);
                    if (other.isPresent()) {
                        counts.probeGranted.incrementAndGet();
                        var checked = other.get().check();
                        var released = other.get().release();
                    } else {
                        counts.probeRefused.incrementAndGet();
                    }
                    if (v.isPresent() && hold.check()) {
                        var unused = resource.write(hold, v.getAsLong() + 1);
                    }
                }
                var released = hold.release();
            }
        }
    }

    private static final AtomicLong IDS = new AtomicLong();

    /** A holder's own transaction on a connection of its pool: one insert, then {@code ending}. */
    private static void transaction(HikariDataSource pool, String work, long token, Ending ending, Counts counts) {
        try (Connection c = pool.getConnection()) {
            if (c.getAutoCommit()) {
                throw new AssertionError("the pool handed out a connection in auto-commit mode");
            }
            long id = IDS.incrementAndGet();
            insert(c, work, id, token);
            switch (ending) {
                case COMMIT -> {
                    c.commit();
                    counts.committedRows.incrementAndGet();
                }
                case ROLLBACK -> c.rollback();
                case FAILED_ROLLBACK -> {
                    try {
                        insert(c, work, id, token); // the same key again: the statement fails
                        throw new AssertionError("a duplicate key was accepted in " + work);
                    } catch (SQLException expected) {
                        c.rollback();
                    }
                }
                case SAVEPOINT_COMMIT -> {
                    Savepoint sp = c.setSavepoint();
                    insert(c, work, IDS.incrementAndGet(), token);
                    c.rollback(sp);
                    c.commit();
                    counts.committedRows.incrementAndGet();
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException("the holder's transaction (" + ending + ") failed: " + e, e);
        }
    }

    private static void insert(Connection c, String work, long id, long token) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + work + " (id, token) VALUES (?, ?)")) {
            ps.setLong(1, id);
            ps.setLong(2, token);
            ps.executeUpdate();
        }
    }

    /**
     * The advisory locks of {@code history}'s client now (PostgreSQL): how many there are, and how many of them belong
     * to a session in an open transaction. A session-level lock is held by an idle session, a transaction-scoped one
     * only inside a transaction. The first count is never 0 while the client holds, or the sample would be blind.
     */
    private static long[] advisorySessions(JdbcStores.Database store, HistoryWriter history) {
        try (Connection c = store.admin().getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT COUNT(*), COUNT(*) FILTER (WHERE a.xact_start IS NOT"
                        + " NULL AND a.state <> 'active') FROM pg_locks l JOIN pg_stat_activity a ON l.pid = a.pid"
                        + " WHERE l.locktype = 'advisory' AND l.granted AND a.application_name = ?")) {
            ps.setString(1, store.identity(history.process()));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return new long[] {rs.getLong(1), rs.getLong(2)};
            }
        } catch (SQLException e) {
            throw new IllegalStateException("pg_locks: " + e.getMessage(), e);
        }
    }

    private static long count(JdbcStores.Database store, String sql) {
        try (Connection c = store.admin().getConnection();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException(sql + ": " + e.getMessage(), e);
        }
    }

    private static HikariDataSource pool(Map<String, String> m, String name) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(m.get("uri"));
        config.setUsername(m.get("user"));
        config.setPassword(m.getOrDefault("password", ""));
        config.setAutoCommit(false);
        config.setMaximumPoolSize(6);
        config.setMinimumIdle(0);
        config.setConnectionTimeout(5_000);
        config.setValidationTimeout(2_000);
        config.setPoolName(name);
        return new HikariDataSource(config);
    }

    /** What the holders did, counted across threads. */
    private static final class Counts {
        final Map<Ending, Long> endings = new ConcurrentHashMap<>();
        final AtomicLong committedRows = new AtomicLong();
        final AtomicLong probeGranted = new AtomicLong();
        final AtomicLong probeRefused = new AtomicLong();
        final AtomicLong sessionInTransaction = new AtomicLong();
        final AtomicLong advisorySamples = new AtomicLong();
        final AtomicLong advisorySamplesBlind = new AtomicLong();

        long holdsEnded() {
            return endings.values().stream().mapToLong(Long::longValue).sum();
        }

        void record(Scenario s) {
            for (Ending e : Ending.values()) {
                s.measure("transactions" + e.name(), endings.getOrDefault(e, 0L));
            }
            s.measure("probeGranted", probeGranted.get());
            s.measure("probeRefused", probeRefused.get());
            s.measure("advisorySessionInTransaction", sessionInTransaction.get());
            s.measure("advisorySamples", advisorySamples.get());
            s.measure("advisorySamplesWithoutTheLock", advisorySamplesBlind.get());
            s.note("transactions under a hold: " + endings + "; c4 refused " + probeRefused.get() + ", granted "
                    + probeGranted.get() + "; advisory sessions in a transaction: " + sessionInTransaction.get());
        }
    }
}
