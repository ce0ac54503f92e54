package io.distlock.redis;

import io.distlock.LockClient;
import io.distlock.testkit.MultiLockAsLock;
import io.distlock.testkit.server.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The whole lock contract on multi-locks over three members of one Redis client, which takes and releases them
 * together (pipelined): the batched path under every contract test.
 */
class MultiLockOneClientIT implements MultiLockAsLock {
    private static final int MEMBERS = 3;

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
    public List<LockClient> createMemberClients(Duration watchdogLease) {
        LockClient client = RedisLockClient.builder()
                .uri(redis.uri())
                .leaseTime(watchdogLease)
                .build();
        return List.of(client, client, client);
    }

    @Override
    public void expireHold(String name) {
        for (int i = 0; i < MEMBERS; i++) {
            RedisKeys.expireHold(connection.sync(), layout, MultiLockAsLock.memberName(name, i));
        }
    }

    @Override
    public List<String> residue(String name) {
        List<String> all = new ArrayList<>();
        for (int i = 0; i < MEMBERS; i++) {
            all.addAll(RedisKeys.residue(connection.sync(), layout, MultiLockAsLock.memberName(name, i)));
        }
        return all;
    }
}
