package io.distlock.redis;

import io.distlock.LockClient;
import io.distlock.testkit.WriteLockAsLock;
import io.distlock.testkit.server.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The whole lock contract on {@code readWriteLock(name).writeLock()}, on a redis-server this class starts. */
class RedisWriteLockAsLockIT implements WriteLockAsLock {
    @RegisterExtension
    static final RedisServer redis = RedisServer.onFreePort();

    private static final KeyLayout layout = new KeyLayout("distlock:");
    private static RedisClient lettuce;
    private static StatefulRedisConnection<String, String> connection;

    @BeforeAll
    static void connect() {
        lettuce = RedisClient.create(redis.uri());
        connection = lettuce.connect();
    }

    @AfterAll
    static void disconnect() {
        connection.close();
        lettuce.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }

    @Override
    public LockClient createBackendClient(Duration watchdogLease) {
        return RedisLockClient.builder()
                .uri(redis.uri())
                .leaseTime(watchdogLease)
                .build();
    }

    @Override
    public void expireHold(String name) {
        RedisKeys.expireClaimHolds(connection.sync(), layout, name);
    }

    @Override
    public List<String> residue(String name) {
        return RedisKeys.residue(connection.sync(), layout, name);
    }
}
