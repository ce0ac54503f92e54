package io.distlock.redis;

import io.distlock.LockClient;
import io.distlock.jdbc.JdbcLockClient;
import io.distlock.testkit.MultiLockAsLock;
import io.distlock.testkit.server.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The whole lock contract on multi-locks over two different real backends: a Redis member (a redis-server this class
 * starts) and a PostgreSQL member (the JDBC lock table on the local server, a table of its own).
 */
class MultiLockAcrossBackendsIT implements MultiLockAsLock {
    @RegisterExtension
    static final RedisServer redis = RedisServer.onFreePort();

    private static final KeyLayout layout = new KeyLayout("distlock:");
    private static final String table =
            "multilock_" + UUID.randomUUID().toString().substring(0, 8);
    private static final PGSimpleDataSource postgres = new PGSimpleDataSource();
    private static RedisClient lettuce;
    private static StatefulRedisConnection<String, String> connection;
    private static JdbcLockClient jdbcAdmin;

    @BeforeAll
    static void connect() {
        lettuce = RedisClient.create(redis.uri());
        connection = lettuce.connect();
        postgres.setUrl("jdbc:postgresql://127.0.0.1:5432/test?ApplicationName=multilock-it");
        postgres.setUser("postgres");
        jdbcAdmin = JdbcLockClient.builder()
                .dataSource(postgres)
                .tableName(table)
                .createSchemaIfMissing()
                .build();
    }

    @AfterAll
    static void disconnect() throws Exception {
        jdbcAdmin.close();
        try (var c = postgres.getConnection();
                var st = c.createStatement()) {
            for (String t : List.of("_lock", "_queue", "_row")) {
                st.execute("DROP TABLE IF EXISTS " + table + t);
            }
            st.execute("DROP SEQUENCE IF EXISTS " + table + "_fence");
        }
        connection.close();
        lettuce.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }

    @Override
    public List<LockClient> createMemberClients(Duration watchdogLease) {
        return List.of(
                RedisLockClient.builder()
                        .uri(redis.uri())
                        .leaseTime(watchdogLease)
                        .build(),
                JdbcLockClient.builder()
                        .dataSource(postgres)
                        .tableName(table)
                        .leaseTime(watchdogLease)
                        .build());
    }

    @Override
    public void expireHold(String name) {
        RedisKeys.expireHold(connection.sync(), layout, MultiLockAsLock.memberName(name, 0));
        var unused = jdbcAdmin.admin().forceUnlock(MultiLockAsLock.memberName(name, 1));
    }

    @Override
    public List<String> residue(String name) {
        List<String> all =
                new ArrayList<>(RedisKeys.residue(connection.sync(), layout, MultiLockAsLock.memberName(name, 0)));
        jdbcAdmin.admin().inspect(MultiLockAsLock.memberName(name, 1)).ifPresent(info -> all.add("postgres: " + info));
        return all;
    }
}
