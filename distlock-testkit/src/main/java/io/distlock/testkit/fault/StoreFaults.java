package io.distlock.testkit.fault;

import io.distlock.LockAdmin;
import io.distlock.testkit.server.EtcdServer;
import io.distlock.testkit.server.RedisSentinelSet;
import io.distlock.testkit.server.RedisServer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * Faults done to the store itself: an operator (or an eviction, a clock jump, a failover) removing holds behind the
 * clients' backs. Most are one-shot: the hold is gone, there is nothing to undo, and the library must notice.
 */
public final class StoreFaults {
    private static final Pattern LEASE = Pattern.compile("\"lease\":(\\d+)");

    private StoreFaults() {}

    /** Removes the current hold of lock {@code name}, whoever owns it ({@link LockAdmin#forceUnlock}); any backend. */
    public static Fault deleteHold(LockAdmin admin, String name, FaultLog log) {
        Objects.requireNonNull(admin, "admin");
        Objects.requireNonNull(name, "name");
        return Fault.oneShot(
                "delete-hold",
                name,
                () -> {
                    var unused = admin.forceUnlock(name);
                },
                log);
    }

    /** Deletes every key matching {@code pattern} ({@code SCAN MATCH} + {@code DEL}) on the Redis at {@code port}. */
    public static Fault redisDeleteKeys(int port, String pattern, FaultLog log) {
        return Fault.oneShot("redis-del " + pattern, "redis:" + port, () -> eachKey(port, pattern, "DEL"), log);
    }

    /**
     * Makes every key matching {@code pattern} expire now ({@code PEXPIRE key 1}): what a server whose clock jumped
     * forward does to the holds it keeps.
     */
    public static Fault redisExpireKeys(int port, String pattern, FaultLog log) {
        return Fault.oneShot(
                "redis-expire " + pattern, "redis:" + port, () -> eachKey(port, pattern, "PEXPIRE", "1"), log);
    }

    /**
     * Stalls the Redis at {@code port} for {@code duration} ({@code CLIENT PAUSE ... ALL}): connections stay open and
     * no command is answered. Redis lifts the pause by itself; healing early sends {@code CLIENT UNPAUSE}.
     */
    public static Fault redisClientPause(int port, Duration duration, FaultLog log) {
        return Fault.start(
                "redis-client-pause",
                "redis:" + port,
                duration,
                () -> expectOk(RedisServer.command(port, "CLIENT", "PAUSE", Long.toString(duration.toMillis()), "ALL")),
                () -> RedisServer.command(port, "CLIENT", "UNPAUSE"),
                log);
    }

    /** Forces a Sentinel failover and waits (at most {@code timeout}) until the new master serves with its replicas. */
    public static Fault redisSentinelFailover(RedisSentinelSet set, Duration timeout, FaultLog log) {
        Objects.requireNonNull(set, "set");
        return Fault.oneShot("sentinel-failover", "sentinel:" + set.masterPort(), () -> set.failover(timeout), log);
    }

    /**
     * Promotes the Cluster replica at {@code replicaPort} ({@code CLUSTER FAILOVER}, with {@code FORCE} when {@code
     * force}: without waiting for the master to agree, so writes it had not replicated are lost).
     */
    public static Fault redisClusterFailover(int replicaPort, boolean force, FaultLog log) {
        return Fault.oneShot(
                force ? "cluster-failover-force" : "cluster-failover",
                "redis:" + replicaPort,
                () -> expectOk(
                        force
                                ? RedisServer.command(replicaPort, "CLUSTER", "FAILOVER", "FORCE")
                                : RedisServer.command(replicaPort, "CLUSTER", "FAILOVER")),
                log);
    }

    /**
     * Revokes every etcd lease attached to a key under {@code prefix} (as {@code etcdctl lease revoke} would): the
     * keys vanish, and holders must find out at their next keep-alive.
     *
     * @param endpoints the etcd client URLs, comma-separated
     */
    public static Fault etcdRevokeLeases(String endpoints, String prefix, FaultLog log) {
        Objects.requireNonNull(endpoints, "endpoints");
        Objects.requireNonNull(prefix, "prefix");
        AtomicInteger revoked = new AtomicInteger();
        return Fault.oneShot(
                "etcd-revoke-leases",
                "etcd:" + prefix,
                () -> {
                    // a key written between the listing and the revocations may be on a lease not listed: list again
                    // until no key of the prefix has a lease this fault has not revoked (a few rounds at most)
                    List<String> done = new ArrayList<>();
                    for (int round = 0; round < 5; round++) {
                        String json = EtcdServer.etcdctlAt(endpoints, "get", "--prefix", prefix, "-w", "json");
                        Matcher m = LEASE.matcher(json);
                        List<String> leases = new ArrayList<>();
                        while (m.find()) {
                            String lease = Long.toHexString(Long.parseLong(m.group(1)));
                            if (!lease.equals("0") && !leases.contains(lease) && !done.contains(lease)) {
                                leases.add(lease);
                            }
                        }
                        if (leases.isEmpty()) {
                            break;
                        }
                        for (String lease : leases) {
                            EtcdServer.etcdctlAt(endpoints, "lease", "revoke", lease);
                            revoked.incrementAndGet();
                            done.add(lease);
                        }
                    }
                },
                log);
    }

    /**
     * Expires the ZooKeeper sessions of the clients that reach the ensemble through {@code proxies}, the way a server
     * does: nothing reaches it from them for longer than the session timeout, so it expires the sessions and deletes
     * their ephemeral nodes. The proxies are blackholed for {@code sessionTimeout} plus {@code margin}, then heal.
     */
    public static Fault zooKeeperExpireSessions(
            List<FaultProxy> proxies, Duration sessionTimeout, Duration margin, FaultLog log) {
        Objects.requireNonNull(proxies, "proxies");
        Duration d = sessionTimeout.plus(margin);
        List<Fault> holes = new ArrayList<>();
        return Fault.start(
                "zk-expire-sessions",
                "zookeeper",
                d,
                () -> proxies.forEach(p -> holes.add(p.blackhole(d.plusSeconds(60)))),
                () -> holes.forEach(Fault::heal),
                log);
    }

    /**
     * Kills the database sessions of {@code user} on MariaDB/MySQL ({@code KILL CONNECTION}) or PostgreSQL ({@code
     * pg_terminate_backend}; there {@code user} may also be the sessions' {@code application_name}), through {@code
     * admin}, a data source with the rights to do so; the admin's own session is spared. Session-bound locks (advisory locks, {@code GET_LOCK}, row locks of an open transaction) are freed at
     * once.
     */
    public static Fault killDatabaseSessions(DataSource admin, String user, FaultLog log) {
        Objects.requireNonNull(admin, "admin");
        Objects.requireNonNull(user, "user");
        return Fault.oneShot("kill-sessions", "db-user:" + user, () -> killSessions(admin, user), log);
    }

    private static void killSessions(DataSource admin, String user) {
        try (Connection c = admin.getConnection()) {
            String product = c.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT);
            if (product.contains("postgres")) {
                try (PreparedStatement st = c.prepareStatement("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                        + " WHERE (usename = ? OR application_name = ?) AND pid <> pg_backend_pid()")) {
                    st.setString(1, user);
                    st.setString(2, user);
                    try (ResultSet rs = st.executeQuery()) {
                        while (rs.next()) {
                            // one row per terminated session
                        }
                    }
                }
                return;
            }
            List<Long> ids = new ArrayList<>();
            try (PreparedStatement st = c.prepareStatement(
                    "SELECT ID FROM information_schema.PROCESSLIST" + " WHERE USER = ? AND ID <> CONNECTION_ID()")) {
                st.setString(1, user);
                try (ResultSet rs = st.executeQuery()) {
                    while (rs.next()) {
                        ids.add(rs.getLong(1));
                    }
                }
            }
            try (Statement st = c.createStatement()) {
                for (long id : ids) {
                    try {
                        st.execute("KILL CONNECTION " + id);
                    } catch (SQLException e) {
                        // already gone
                    }
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException("cannot kill the sessions of " + user + ": " + e.getMessage(), e);
        }
    }

    private static void eachKey(int port, String pattern, String... command) {
        String cursor = "0";
        do {
            String[] reply = RedisServer.command(port, "SCAN", cursor, "MATCH", pattern, "COUNT", "1000")
                    .split("\n");
            cursor = reply[0];
            for (int i = 1; i < reply.length; i++) {
                if (reply[i].isEmpty()) {
                    continue;
                }
                String[] args = new String[command.length + 1];
                args[0] = command[0];
                args[1] = reply[i];
                System.arraycopy(command, 1, args, 2, command.length - 1);
                RedisServer.command(port, args);
            }
        } while (!cursor.equals("0"));
    }

    private static void expectOk(String reply) {
        if (reply.startsWith("-")) {
            throw new IllegalStateException("Redis refused: " + reply);
        }
    }
}
