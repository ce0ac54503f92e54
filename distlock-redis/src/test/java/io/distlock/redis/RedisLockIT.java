package io.distlock.redis;

import io.distlock.LockClient;
import io.distlock.testkit.AllLockContracts;
import io.distlock.testkit.AsyncContract;
import io.distlock.testkit.ForwardingLockClient;
import io.distlock.testkit.MultiProcessContract;
import io.distlock.testkit.fault.FaultProxy;
import io.distlock.testkit.server.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The whole contract suite, in one JVM and across processes, on a redis-server this class starts. */
class RedisLockIT implements AllLockContracts, MultiProcessContract, AsyncContract {
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
    public LockClient createClient(Duration watchdogLease) {
        return RedisLockClient.builder()
                .uri(redis.uri())
                .leaseTime(watchdogLease)
                .build();
    }

    @Override
    public void expireHold(String name) {
        RedisKeys.expireHold(connection.sync(), layout, name);
    }

    @Override
    public List<String> residue(String name) {
        return RedisKeys.residue(connection.sync(), layout, name);
    }

    @Override
    public Optional<ChildClient> childClient() {
        return Optional.of(new ChildClient(RedisClientFactory.class, redis.uri()));
    }

    /** A client through a proxy that then swallows every byte: each command times out after 2 s. */
    @Override
    public Optional<LockClient> createUnreachableClient() {
        FaultProxy proxy = FaultProxy.start(redis.port());
        RedisURI uri = RedisURI.builder()
                .withHost("127.0.0.1")
                .withPort(proxy.port())
                .withTimeout(Duration.ofSeconds(2))
                .build();
        LockClient client = RedisLockClient.builder().uri(uri).build();
        var unused = proxy.blackhole(Duration.ofMinutes(5));
        return Optional.of(new ForwardingLockClient(client) {
            @Override
            public void close() {
                super.close();
                proxy.close();
            }
        });
    }
}
