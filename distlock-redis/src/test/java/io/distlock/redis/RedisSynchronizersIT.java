package io.distlock.redis;

import io.distlock.LockClient;
import io.distlock.testkit.AllSynchronizerContracts;
import io.distlock.testkit.AsyncSynchronizerContract;
import io.distlock.testkit.MultiProcessSynchronizerContract;
import io.distlock.testkit.server.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The read-write lock, semaphore and latch contracts, in one JVM and across processes, on a redis-server this class
 * starts. The whole lock contract on the write lock and on a one-permit semaphore: {@link RedisWriteLockAsLockIT},
 * {@link RedisSemaphoreAsLockIT}.
 */
class RedisSynchronizersIT
        implements AllSynchronizerContracts, MultiProcessSynchronizerContract, AsyncSynchronizerContract {
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

    static LockClient client(Duration watchdogLease) {
        return RedisLockClient.builder()
                .uri(redis.uri())
                .leaseTime(watchdogLease)
                .build();
    }

    static void expire(String name) {
        RedisKeys.expireHold(connection.sync(), layout, name);
        RedisKeys.expireClaimHolds(connection.sync(), layout, name);
    }

    static List<String> keysOf(String name) {
        return RedisKeys.residue(connection.sync(), layout, name);
    }

    @Override
    public LockClient createClient(Duration watchdogLease) {
        return client(watchdogLease);
    }

    @Override
    public void expireHold(String name) {
        expire(name);
    }

    @Override
    public List<String> residue(String name) {
        return keysOf(name);
    }

    @Override
    public Optional<ChildClient> childClient() {
        return Optional.of(new ChildClient(RedisShortLeaseClientFactory.class, redis.uri()));
    }

    @Override
    public Duration childHoldRelease() {
        return RedisShortLeaseClientFactory.LEASE.plusSeconds(2);
    }
}
