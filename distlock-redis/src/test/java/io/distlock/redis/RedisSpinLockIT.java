package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedLock;
import io.distlock.LockClient;
import io.distlock.testkit.AllLockContracts;
import io.distlock.testkit.server.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The contract suite with {@link RedisLockClient.WaitStrategy#SPIN}: no pub/sub, waiters poll with back-off. */
class RedisSpinLockIT implements AllLockContracts {
    @RegisterExtension
    static final RedisServer redis = RedisServer.onFreePort();

    private static final KeyLayout layout = new KeyLayout("spin:");
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
                .keyPrefix("spin:")
                .leaseTime(watchdogLease)
                .waitStrategy(RedisLockClient.WaitStrategy.SPIN)
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

    @Test
    void spin_neverPublishesNorSubscribes() throws Exception {
        String name = uniqueName();
        LockClient a = newClient();
        LockClient b = newClient();
        DistributedLock held = a.lock(name);
        held.lock();
        Thread waiter = new Thread(() -> {
            try {
                if (b.lock(name).tryLock(5, TimeUnit.SECONDS)) {
                    b.lock(name).unlock();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        waiter.start();
        Thread.sleep(200);
        String channel = "spin:wake:" + b.clientId();
        assertThat(connection.sync().pubsubChannels("*")).isEmpty();
        assertThat(((RedisLockClient) b).store().connections().subscriptions().subscribed(channel))
                .isFalse();
        held.unlock();
        waiter.join(5000);
        assertThat(waiter.isAlive()).isFalse();
    }
}
