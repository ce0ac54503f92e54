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
import io.distlock.LockClient;
import io.distlock.jdbc.JdbcLockClient;
import io.distlock.testkit.Timing;
import io.distlock.testkit.history.CheckReport;
import io.distlock.testkit.history.ClientEvent;
import io.distlock.testkit.history.History;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * J3 (FAULTS.md section 4.6): the lock's connections and the application's connection pool. HikariCP retires a
 * connection when it reaches {@code maxLifetime} (at least 30 s) or when told to ({@code softEvictConnections}): an
 * idle connection is closed at once, a borrowed one when it is given back. A session-bound hold (ADVISORY, ROW_LOCK)
 * lives on a connection the library keeps borrowed for the whole hold; if the pool closed it under the hold, the
 * database would release the lock silently.
 */
final class JdbcPoolScenarios {
    private JdbcPoolScenarios() {}

    private static final List<String> CLIENTS = List.of("c1", "c2", "c3");

    /**
     * J3: three clients in this JVM, each on a HikariCP pool of its own with {@code maxLifetime} at Hikari's minimum of
     * 30 s, hold the lock for 0.8 s at a time while every 0.2 to 0.5 s every pool is told to retire all its
     * connections ({@code softEvictConnections}, what reaching {@code maxLifetime} does to each), so every hold sees
     * its pool evict. MUST: no hold is lost (a pinned connection closed under its hold would end it), S1 to S4, and
     * once unlocked nothing stays locked on a pooled connection (L4: the lock tables, {@code pg_locks} for advisory
     * locks, {@code IS_USED_LOCK} for MariaDB's {@code GET_LOCK}; L3: a fresh client takes the lock while the pools
     * are still open).
     */
    static CheckReport j3PoolEvictions(JdbcStores.Database store, long seed) throws InterruptedException {
        return j3PoolEvictions(store, seed, false);
    }

    /** J3; {@code broken}: every client a {@link BrokenLockClient} (scenario J3-BROKEN, which must fail). */
    static CheckReport j3PoolEvictions(JdbcStores.Database store, long seed, boolean broken)
            throws InterruptedException {
        String id = broken ? "J3-BROKEN" : "J3";
        try (Scenario s = new Scenario(id, "pool retires connections during holds", "tier2", store, seed)) {
            SplittableRandom random = new SplittableRandom(seed);
            Duration run = Timing.seconds(12);
            List<HikariDataSource> pools = new ArrayList<>();
            List<LockClient> clients = new ArrayList<>();
            List<Workload> workloads = new ArrayList<>();
            try {
                for (String c : CLIENTS) {
                    Map<String, String> m = Clients.parse(s.spec(c, false));
                    HikariDataSource pool = pool(m, "j3-" + c + "-" + Long.toHexString(seed & 0xFFFF));
                    pools.add(pool);
                    LockClient client = JdbcLockClient.builder()
                            .dataSource(pool)
                            .tableName(m.get("table"))
                            .mode(JdbcLockClient.Mode.valueOf(m.get("mode")))
                            .leaseTime(Duration.ofMillis(Long.parseLong(m.get("lease"))))
                            .createSchemaIfMissing()
                            .clientId(c)
                            .build();
                    if (broken || "true".equals(m.get("broken"))) {
                        client = new BrokenLockClient(client);
                    }
                    clients.add(client);
                }
                for (int i = 0; i < CLIENTS.size(); i++) {
                    Workload w = new Workload(
                                    clients.get(i),
                                    s.history(CLIENTS.get(i)),
                                    s.key(),
                                    1,
                                    Timing.seconds(5),
                                    Duration.ofMillis(800),
                                    s.resource.port(),
                                    seed + i)
                            .fixedThink();
                    workloads.add(w.start(run));
                }
                long end = System.nanoTime()
                        + run.toNanos()
                        - Duration.ofSeconds(1).toNanos();
                int evictions = 0;
                int heldSamples = 0;
                while (System.nanoTime() - end < 0) {
                    heldSamples += (int) Math.min(1, advisoryLocks(store, s.prefix, s.key()));
                    Timing.sleep(Duration.ofMillis(200 + random.nextInt(300)));
                    for (HikariDataSource p : pools) {
                        p.getHikariPoolMXBean().softEvictConnections();
                    }
                    evictions++;
                }
                s.note("softEvictConnections on every pool " + evictions + " times");
                s.measure("poolEvictions", evictions);
                if (store.mode.equals("ADVISORY")) {
                    // the leftover checks must see the holds while they last, or they could not see one left behind
                    if (heldSamples == 0) {
                        throw new AssertionError("the advisory-lock query never saw a hold during the run");
                    }
                    s.note("the advisory-lock query saw a hold in " + heldSamples + " of " + evictions + " samples");
                }
                for (Workload w : workloads) {
                    if (!w.join(Timing.seconds(60))) {
                        throw new AssertionError("a workload did not end within its run plus 60 s");
                    }
                    if (w.failure() != null) {
                        throw new AssertionError("a workload thread died", w.failure());
                    }
                }
                long lost = History.load(s.dir).client().stream()
                        .filter(e -> e.f() == ClientEvent.Op.LOST
                                || e.f() == ClientEvent.Op.RELEASE && "lost".equals(e.error()))
                        .count();
                s.measure("lostHolds", lost);
                long created = pools.stream()
                        .mapToLong(p -> p.getHikariPoolMXBean().getTotalConnections())
                        .sum();
                s.note("holds lost: " + lost + "; connections open in the pools now: " + created);
                // with the pools still open, so a lock left on one of their connections is still there
                long userLocks = advisoryLocks(store, s.prefix, s.key());
                s.measure("advisoryLocksLeftOnPool", userLocks);
                s.probe(List.of("probe"), Timing.seconds(3));
                s.leftovers(Timing.scaled(Duration.ofSeconds(2)));
                if (lost > 0) {
                    s.note("a hold was lost though nothing but the pool acted on it");
                }
                if (userLocks > 0) {
                    s.note("an advisory lock still held on a pooled connection after every unlock");
                }
                workloads.forEach(Workload::stop);
                CheckReport r = s.finish(Scenario.expect(List.of(S1, S2, S3, S4, L3, L4, LIN), List.of()));
                if (lost > 0) {
                    throw new AssertionError(lost + " holds were lost while only the pool evicted connections");
                }
                if (userLocks > 0) {
                    throw new AssertionError("an advisory lock left held on a pooled connection after unlock");
                }
                return r;
            } finally {
                workloads.forEach(Workload::stop);
                for (Workload w : workloads) {
                    var unused = w.join(Timing.seconds(30));
                }
                for (LockClient c : clients) {
                    try {
                        c.close();
                    } catch (RuntimeException e) {
                        // closing anyway
                    }
                }
                pools.forEach(HikariDataSource::close);
            }
        }
    }

    private static HikariDataSource pool(Map<String, String> m, String name) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(m.get("uri"));
        config.setUsername(m.get("user"));
        config.setPassword(m.getOrDefault("password", ""));
        config.setMaximumPoolSize(12);
        config.setMinimumIdle(2);
        config.setMaxLifetime(30_000);
        config.setConnectionTimeout(5_000);
        config.setValidationTimeout(2_000);
        config.setPoolName(name);
        return new HikariDataSource(config);
    }

    /**
     * In ADVISORY mode, the advisory locks held now: on PostgreSQL those in {@code pg_locks} of the suite's client
     * sessions, on MariaDB 1 if some session holds the {@code GET_LOCK} of {@code key} (the name the library derives:
     * {@code dl:} and 60 hex digits of the SHA-256 of the table prefix, a NUL and the name, as UTF-16 code units); 0 in
     * the other modes.
     */
    static long advisoryLocks(JdbcStores.Database store, String table, String key) {
        if (!store.mode.equals("ADVISORY")) {
            return 0;
        }
        if (store.db == JdbcStores.Db.POSTGRESQL) {
            try (Connection c = store.admin().getConnection();
                    PreparedStatement ps = c.prepareStatement(
                            "SELECT COUNT(*) FROM pg_locks l JOIN pg_stat_activity a"
                                    + " ON l.pid = a.pid WHERE l.locktype = 'advisory' AND a.application_name LIKE 'dlsafety_%'");
                    ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            } catch (SQLException e) {
                throw new IllegalStateException("pg_locks: " + e.getMessage(), e);
            }
        }
        if (store.db != JdbcStores.Db.MARIADB) {
            return 0;
        }
        String name =
                "dl:" + HexFormat.of().formatHex(sha256(table + '\0' + key)).substring(0, 60);
        try (Connection c = store.admin().getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT IS_USED_LOCK(?)")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                rs.getLong(1);
                return rs.wasNull() ? 0 : 1;
            }
        } catch (SQLException e) {
            throw new IllegalStateException("IS_USED_LOCK: " + e.getMessage(), e);
        }
    }

    private static byte[] sha256(String s) {
        ByteBuffer units = ByteBuffer.allocate(s.length() * 2);
        for (int i = 0; i < s.length(); i++) {
            units.putChar(s.charAt(i));
        }
        try {
            return MessageDigest.getInstance("SHA-256").digest(units.array());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
