package io.distlock.safety;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.SQLExceptionOverride;
import io.distlock.LockClient;
import io.distlock.etcd.EtcdLockClient;
import io.distlock.jdbc.JdbcLockClient;
import io.distlock.redis.RedisLockClient;
import io.distlock.testkit.ForwardingLockClient;
import io.distlock.zookeeper.ZooKeeperLockClient;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.StringJoiner;

/**
 * Lock clients described by a one-line spec, so that the parent test and the worker JVMs it starts make the same
 * client: {@code kind=redis|uri=redis://127.0.0.1:6380|lease=2000|id=c1|prefix=s1:}. Kinds: {@code redis}, {@code
 * redis-cluster} (uri is a comma-separated list; {@code replicas} and {@code replicaTimeout} in ms turn on {@code
 * replicaAcks} for {@code redis}), {@code zookeeper} (uri is the connect string, {@code session} in
 * ms), {@code etcd} (uri is the endpoints), {@code redlock} (uri is the nodes' URIs, {@code timeout} the node timeout
 * in ms), {@code jdbc} (uri is the JDBC URL, with {@code user}, {@code password},
 * {@code mode}, {@code table}, and optionally {@code commitHook}: see {@link CommitHooks}). {@code broken=true} wraps the client in {@link BrokenLockClient}.
 */
final class Clients {
    private Clients() {}

    /** A spec from alternating keys and values. */
    static String spec(String... keysAndValues) {
        StringJoiner j = new StringJoiner("|");
        for (int i = 0; i + 1 < keysAndValues.length; i += 2) {
            if (keysAndValues[i + 1].contains("|")) {
                throw new IllegalArgumentException("a spec value may not contain '|': " + keysAndValues[i + 1]);
            }
            j.add(keysAndValues[i] + "=" + keysAndValues[i + 1]);
        }
        return j.toString();
    }

    static Map<String, String> parse(String spec) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String part : spec.split("\\|", -1)) {
            int eq = part.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("not key=value in spec: " + part);
            }
            m.put(part.substring(0, eq), part.substring(eq + 1));
        }
        return m;
    }

    /** The same spec with {@code key} set to {@code value}. */
    static String with(String spec, String key, String value) {
        Map<String, String> m = parse(spec);
        m.put(key, value);
        StringJoiner j = new StringJoiner("|");
        m.forEach((k, v) -> j.add(k + "=" + v));
        return j.toString();
    }

    static LockClient create(String spec) {
        Map<String, String> m = parse(spec);
        LockClient client = build(m);
        return "true".equals(m.get("broken")) ? new BrokenLockClient(client) : client;
    }

    private static String get(Map<String, String> m, String key) {
        String v = m.get(key);
        if (v == null) {
            throw new IllegalArgumentException("spec lacks " + key + ": " + m);
        }
        return v;
    }

    private static Duration millis(Map<String, String> m, String key) {
        return Duration.ofMillis(Long.parseLong(get(m, key)));
    }

    private static LockClient build(Map<String, String> m) {
        String id = get(m, "id");
        switch (get(m, "kind")) {
            case "redis":
                RedisLockClient.Builder redis = RedisLockClient.builder()
                        .uri(get(m, "uri"))
                        .keyPrefix(get(m, "prefix"))
                        .leaseTime(millis(m, "lease"))
                        .clientId(id);
                if (m.containsKey("replicas")) {
                    redis.replicaAcks(Integer.parseInt(get(m, "replicas")), millis(m, "replicaTimeout"));
                }
                return redis.build();
            case "redis-cluster":
                return RedisLockClient.builder()
                        .cluster(get(m, "uri").split(","))
                        .keyPrefix(get(m, "prefix"))
                        .leaseTime(millis(m, "lease"))
                        .clientId(id)
                        .build();
            case "redlock":
                return io.distlock.redis.RedLockClient.builder()
                        .nodes(get(m, "uri").split(","))
                        .keyPrefix(get(m, "prefix"))
                        .leaseTime(millis(m, "lease"))
                        .nodeTimeout(millis(m, "timeout"))
                        .clientId(id)
                        .build();
            case "zookeeper":
                return ZooKeeperLockClient.builder()
                        .connectString(get(m, "uri"))
                        .rootPath(get(m, "prefix"))
                        .sessionTimeout(millis(m, "session"))
                        .connectionTimeout(Duration.ofSeconds(10))
                        .clientId(id)
                        .build();
            case "etcd":
                return EtcdLockClient.builder()
                        .endpoints(get(m, "uri"))
                        .namespace(get(m, "prefix"))
                        .leaseTtl(millis(m, "lease"))
                        .requestTimeout(millis(m, "timeout"))
                        .clientId(id)
                        .build();
            case "jdbc":
                return jdbc(m, id);
            default:
                throw new IllegalArgumentException("unknown kind in spec: " + m);
        }
    }

    /**
     * Makes Hikari evict an H2 TCP connection that broke. H2's client reports a lost connection as "connection is
     * broken" (90067) and every later use of it as "database is already closed" (90121) or "database has been closed"
     * (90098), none with an SQLState of class 08, so Hikari's own check keeps the dead connection in the pool and hands
     * it out again until it has been idle for half a second (its alive-bypass window); a client that keeps using the
     * pool gets dead connections for as long as it is busy.
     */
    private static final SQLExceptionOverride H2_BROKEN_CONNECTIONS = new SQLExceptionOverride() {
        @java.lang.Override
        public SQLExceptionOverride.Override adjudicate(SQLException e) {
            int code = e.getErrorCode();
            return code == 90067 || code == 90098 || code == 90121
                    ? SQLExceptionOverride.Override.MUST_EVICT
                    : SQLExceptionOverride.Override.CONTINUE_EVICT;
        }
    };

    private static LockClient jdbc(Map<String, String> m, String id) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(get(m, "uri"));
        config.setUsername(get(m, "user"));
        config.setPassword(m.getOrDefault("password", ""));
        config.setMaximumPoolSize(12);
        config.setMinimumIdle(0);
        config.setConnectionTimeout(5_000);
        config.setValidationTimeout(2_000);
        config.setPoolName("safety-" + id);
        if (get(m, "uri").startsWith("jdbc:h2:")) {
            config.setExceptionOverride(H2_BROKEN_CONNECTIONS);
        }
        HikariDataSource pool = new HikariDataSource(config);
        try {
            String hook = m.get("commitHook");
            JdbcLockClient client = JdbcLockClient.builder()
                    .dataSource(hook == null ? pool : CommitHooks.wrap(pool, hook))
                    .tableName(get(m, "table"))
                    .mode(JdbcLockClient.Mode.valueOf(get(m, "mode")))
                    .leaseTime(millis(m, "lease"))
                    .createSchemaIfMissing()
                    .clientId(id)
                    .build();
            return new ForwardingLockClient(client) {
                @Override
                public void close() {
                    try {
                        super.close();
                    } finally {
                        pool.close();
                    }
                }
            };
        } catch (RuntimeException e) {
            pool.close();
            throw e;
        }
    }
}
