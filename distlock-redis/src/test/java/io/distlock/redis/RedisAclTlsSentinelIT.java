package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLock;
import io.distlock.LockClient;
import io.distlock.testkit.AllLockContracts;
import io.distlock.testkit.Handover;
import io.distlock.testkit.Timing;
import io.distlock.testkit.server.RedisSentinelSet;
import io.distlock.testkit.server.TestCertificates;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The whole contract suite through a Sentinel set (1 master, 1 replica, 3 Sentinels) as an ACL user with exactly the
 * rules docs/backends/redis.md lists, over TLS only (TLS Sentinel ports, a TLS master address from the Sentinels,
 * TLS replication), plus a failover the client follows.
 */
class RedisAclTlsSentinelIT implements AllLockContracts {
    private static final TestCertificates certs = TestCertificates.create();

    @RegisterExtension
    static final RedisSentinelSet sentinels = RedisSentinelSet.of(1, 3)
            .withTls(certs)
            .withUser(DocumentedAcl.USER, DocumentedAcl.PASSWORD, DocumentedAcl.standalone());

    private static final KeyLayout layout = new KeyLayout("distlock:");
    private static RedisClient tlsClient;
    private static RedisClient plain;
    private static @Nullable StatefulRedisConnection<String, String> admin;
    private static int adminPort;

    @BeforeAll
    static void connect() {
        tlsClient = RedisClient.create();
        tlsClient.setOptions(ClientOptions.builder()
                .sslOptions(SslOptions.builder()
                        .jdkSslProvider()
                        .trustManager(certs.caCert().toFile())
                        .build())
                .build());
        plain = RedisClient.create();
    }

    @AfterAll
    static void disconnect() {
        StatefulRedisConnection<String, String> current = admin;
        if (current != null) {
            current.close();
        }
        if (plain != null) {
            plain.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
        if (tlsClient != null) {
            tlsClient.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    @BeforeEach
    void replicasInSync() {
        sentinels.awaitReplicasInSync(); // the failover test's old master may still be re-syncing
    }

    /** A plain connection as the default user to the current master, for the fixture's look behind the client. */
    private static StatefulRedisConnection<String, String> admin() {
        int master = sentinels.masterPort();
        StatefulRedisConnection<String, String> current = admin;
        if (current == null || adminPort != master) {
            if (current != null) {
                current.close();
            }
            current = plain.connect(RedisURI.create("redis://127.0.0.1:" + master));
            admin = current;
            adminPort = master;
        }
        return current;
    }

    private static String uri() {
        return sentinels.tlsSentinelUri(DocumentedAcl.userInfo());
    }

    @Override
    public LockClient createClient(Duration watchdogLease) {
        return RedisLockClient.builder()
                .redisClient(tlsClient)
                .uri(uri())
                .leaseTime(watchdogLease)
                .build();
    }

    @Override
    public void expireHold(String name) {
        RedisKeys.expireHold(admin().sync(), layout, name);
    }

    @Override
    public List<String> residue(String name) {
        return RedisKeys.residue(admin().sync(), layout, name);
    }

    @Test
    void theUserIsConfinedToThePrefix() {
        try (StatefulRedisConnection<String, String> asUser = tlsClient.connect(RedisURI.create(uri()))) {
            assertThat(asUser.sync().set("distlock:acl-probe", "x")).isEqualTo("OK");
            assertThatThrownBy(() -> asUser.sync().set("outside", "x"))
                    .isInstanceOf(RedisCommandExecutionException.class)
                    .hasMessageStartingWith("NOPERM");
            assertThatThrownBy(() -> asUser.sync().append("distlock:acl-probe", "y"))
                    .as("a command the rules leave out")
                    .isInstanceOf(RedisCommandExecutionException.class)
                    .hasMessageStartingWith("NOPERM");
            asUser.sync().del("distlock:acl-probe");
        }
    }

    @Test
    void failover_theClientFollowsTheNewMaster_overTlsAsTheUser() throws Exception {
        try (LockClient a = createClient(Duration.ofSeconds(2));
                LockClient b = createClient(Duration.ofSeconds(2))) {
            Handover.holdThenHandOver(a.lock("acl-tls-failover"), b.lock("acl-tls-failover"));
            int old = sentinels.masterPort();
            int now = sentinels.failover(Timing.seconds(60));
            assertThat(now).isNotEqualTo(old);
            DistributedLock after = a.lock("acl-tls-after-failover");
            long deadline = System.nanoTime() + Timing.seconds(30).toNanos();
            boolean locked = false;
            while (!locked && System.nanoTime() - deadline < 0) {
                try {
                    locked = after.tryLock(1, TimeUnit.SECONDS);
                } catch (RuntimeException e) {
                    Thread.sleep(200); // reconnecting to the new master
                }
            }
            assertThat(locked).as("locked after the failover").isTrue();
            assertThat(admin().sync().exists(RedisKeys.holdKey(layout, "acl-tls-after-failover")))
                    .as("the hold is on the new master")
                    .isEqualTo(1L);
            assertThat(b.lock("acl-tls-after-failover").tryLock()).isFalse();
            after.unlock();
        }
    }
}
