package io.distlock.jdbc;

import io.distlock.LockClient;
import io.distlock.testkit.BackendUnderTest;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * The fixture of every JDBC contract test class: one database and table prefix per class, one client per {@link
 * #createClient} on a shared pool. Subclasses name the database and the mode, and the contracts they claim.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class JdbcFixture implements BackendUnderTest {
    private TestDatabase.@Nullable Env env;
    private final List<JdbcLockClient> clients = new CopyOnWriteArrayList<>();

    abstract TestDatabase database();

    abstract JdbcLockClient.Mode mode();

    @BeforeAll
    void startDatabase() throws InterruptedException {
        TestDatabase.Env e = database().start(getClass());
        env = e;
        JdbcLockClient.builder()
                .dataSource(e.pool)
                .tableName(e.table)
                .createSchemaIfMissing()
                .build()
                .close();
        prepareClients();
        warmUp();
    }

    /** Runs once the schema exists and before the first client connects: what the clients need set up first. */
    void prepareClients() {}

    @AfterAll
    void stopDatabase() {
        for (JdbcLockClient c : clients) {
            c.close();
        }
        if (env != null) {
            env.close();
        }
    }

    /**
     * Takes and gives back each kind once on a client of this fixture, so a JVM's first use (class loading, the
     * database's first statements) does not fall into a timing-sensitive contract case with a lease of 400 ms.
     */
    void warmUp() throws InterruptedException {
        if (mode() != JdbcLockClient.Mode.TABLE) {
            return;
        }
        try (JdbcLockClient c = builder(Duration.ofSeconds(30)).build()) {
            String name = "warm-up-" + System.nanoTime();
            for (int i = 0; i < 3; i++) {
                c.lock(name + "-l").lock();
                c.lock(name + "-l").unlock();
                c.readWriteLock(name + "-rw").writeLock().lock();
                c.readWriteLock(name + "-rw").writeLock().unlock();
                c.semaphore(name + "-s", 2).acquire(1).release();
                var unused = c.countDownLatch(name + "-c").trySetCount(1);
                c.countDownLatch(name + "-c").countDown();
            }
        }
    }

    TestDatabase.Env env() {
        TestDatabase.Env e = env;
        if (e == null) {
            throw new IllegalStateException("database not started");
        }
        return e;
    }

    /** Where the lock clients connect; the fixture's own statements use {@code env().pool}, the administrator's. */
    javax.sql.DataSource clientDataSource() {
        return env().pool;
    }

    JdbcLockClient.Builder builder(Duration watchdogLease) {
        return JdbcLockClient.builder()
                .dataSource(clientDataSource())
                .tableName(env().table)
                .mode(mode())
                .maxPinnedConnections(24)
                .leaseTime(watchdogLease);
    }

    @Override
    public LockClient createClient(Duration watchdogLease) {
        JdbcLockClient client = builder(watchdogLease).build();
        clients.add(client);
        return client;
    }

    @Override
    public void expireHold(String name) {
        if (mode() == JdbcLockClient.Mode.TABLE) {
            update("DELETE FROM " + env().table + "_lock WHERE name_hash = ?", Names.hash(name));
            update("DELETE FROM " + env().table + "_claim WHERE name_hash = ? AND granted = 1", Names.hash(name));
            return;
        }
        // a session lock goes only when its session does: kill the holder's session, as an operator would
        for (JdbcLockClient c : clients) {
            if (c.store() instanceof JdbcSessionLockStore s) {
                for (long id : s.sessionIds(name)) {
                    killSession(id);
                }
            }
        }
    }

    /** Kills a server session and waits until the server has ended it and its locks (both end them asynchronously). */
    void killSession(long sessionId) {
        boolean pg = database() == TestDatabase.POSTGRESQL;
        env().execute(pg ? "SELECT pg_terminate_backend(" + sessionId + ")" : "KILL CONNECTION " + sessionId);
        String alive = pg
                ? "SELECT CAST(pid AS VARCHAR) FROM pg_stat_activity WHERE CAST(pid AS VARCHAR) = ?"
                        + " UNION ALL SELECT CAST(pid AS VARCHAR) FROM pg_locks WHERE CAST(pid AS VARCHAR) = ?"
                : "SELECT CAST(ID AS CHAR) FROM information_schema.PROCESSLIST WHERE CAST(ID AS CHAR) = ?";
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
        while (!query(alive, Long.toString(sessionId), pg ? 2 : 1).isEmpty()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("session " + sessionId + " did not end within 5 s");
            }
            io.distlock.testkit.Timing.sleep(Duration.ofMillis(10));
        }
    }

    @Override
    public List<String> residue(String name) {
        String hash = Names.hash(name);
        String t = env().table;
        List<String> out = new ArrayList<>();
        String now = Dialect.valueOf(dialectName()).nowMillis();
        out.addAll(query(
                "SELECT CONCAT('hold ', owner) FROM " + t + "_lock WHERE name_hash = ? AND expires_at > " + now, hash));
        out.addAll(query(
                "SELECT CONCAT('queued ', owner) FROM " + t + "_queue WHERE name_hash = ? AND deadline > " + now,
                hash));
        out.addAll(query("SELECT CONCAT('row ', name_hash) FROM " + t + "_row WHERE name_hash = ?", hash));
        out.addAll(query(
                "SELECT CONCAT(CONCAT(CASE WHEN granted = 1 THEN 'hold ' ELSE 'waiting ' END, mode), CONCAT(' ', owner))"
                        + " FROM " + t + "_claim WHERE name_hash = ? AND expires_at > " + now,
                hash));
        out.addAll(query(
                "SELECT CONCAT('latch count ', CAST(count_left AS CHAR(20))) FROM " + t + "_latch WHERE name_hash = ?"
                        + " AND expires_at > " + now,
                hash));
        out.addAll(query("SELECT CONCAT('latch call ', call_id) FROM " + t + "_latch_call WHERE name_hash = ?", hash));
        if (mode() == JdbcLockClient.Mode.ADVISORY) {
            try (Connection c = env().pool.getConnection()) {
                Db db = new Db(env().pool, Dialect.valueOf(dialectName()), t);
                new SessionLock.Advisory(db)
                        .holder(c, name)
                        .ifPresent(pid -> out.add("advisory lock held by session " + pid));
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }
        return out;
    }

    String dialectName() {
        return switch (database()) {
            case H2_MEM, H2_SERVER -> "H2";
            case MARIADB -> "MARIADB";
            case POSTGRESQL -> "POSTGRESQL";
        };
    }

    @Override
    public Optional<ChildClient> childClient() {
        if (database() == TestDatabase.H2_MEM) {
            return Optional.empty();
        }
        TestDatabase.Env e = env();
        return Optional.of(new ChildClient(
                JdbcChildClientFactory.class, String.join("\n", e.url, e.user, e.password, e.table, mode().name())));
    }

    int update(String sql, String arg) {
        try (Connection c = env().pool.getConnection();
                PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, arg);
            return ps.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(sql + ": " + e.getMessage(), e);
        }
    }

    List<String> query(String sql, String arg) {
        return query(sql, arg, 1);
    }

    /** Runs a query binding {@code arg} to its first {@code times} parameters. */
    List<String> query(String sql, String arg, int times) {
        List<String> out = new ArrayList<>();
        try (Connection c = env().pool.getConnection();
                PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 1; i <= times; i++) {
                ps.setString(i, arg);
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getString(1));
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException(sql + ": " + e.getMessage(), e);
        }
        return out;
    }
}
