package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockClient;
import io.distlock.testkit.AllLockContracts;
import io.distlock.testkit.Handover;
import io.distlock.testkit.server.RedisCluster;
import io.distlock.testkit.server.TestCertificates;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The whole contract suite on a 3-master Cluster as an ACL user with exactly the rules docs/backends/redis.md lists,
 * over TLS only (TLS seeds, TLS ports told by the Cluster, a private authority the Lettuce client trusts).
 */
class RedisAclTlsClusterIT implements AllLockContracts {
    private static final TestCertificates certs = TestCertificates.create();

    @RegisterExtension
    static final RedisCluster cluster = RedisCluster.withMasters(3)
            .withTls(certs)
            .withUser(DocumentedAcl.USER, DocumentedAcl.PASSWORD, DocumentedAcl.cluster());

    private static final KeyLayout layout = new KeyLayout("distlock:");
    private static ClusterAdmin admin;
    private static RedisClusterClient tlsClient;

    @BeforeAll
    static void connect() {
        admin = ClusterAdmin.connect(cluster);
        tlsClient = RedisClusterClient.create(cluster.tlsUris(DocumentedAcl.userInfo()).stream()
                .map(RedisURI::create)
                .toList());
        tlsClient.setOptions(ClusterClientOptions.builder()
                .sslOptions(SslOptions.builder()
                        .jdkSslProvider()
                        .trustManager(certs.caCert().toFile())
                        .build())
                .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                        .enableAllAdaptiveRefreshTriggers()
                        .build())
                .build());
    }

    @AfterAll
    static void disconnect() {
        if (tlsClient != null) {
            tlsClient.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
        if (admin != null) {
            admin.close();
        }
    }

    @Override
    public LockClient createClient(Duration watchdogLease) {
        return RedisLockClient.builder()
                .clusterClient(tlsClient)
                .leaseTime(watchdogLease)
                .build();
    }

    @Override
    public void expireHold(String name) {
        RedisKeys.expireHold(admin.sync(), layout, name);
    }

    @Override
    public List<String> residue(String name) {
        return RedisKeys.residue(admin.sync(), layout, name);
    }

    @Test
    void tlsClient_seesOnlyTlsPorts_andTheUserIsConfinedToThePrefix() throws Exception {
        try (LockClient a = createClient(defaultLease());
                LockClient b = createClient(defaultLease())) {
            Handover.holdThenHandOver(a.lock("acl-tls"), b.lock("acl-tls"));
        }
        List<Integer> tlsPorts = cluster.tlsUris(null).stream()
                .map(u -> RedisURI.create(u).getPort())
                .toList();
        // the Cluster told the TLS connection its nodes' TLS ports; Lettuce reaches them with the seeds' TLS settings
        assertThat(tlsClient.getPartitions())
                .extracting(node -> node.getUri().getPort())
                .containsExactlyInAnyOrderElementsOf(tlsPorts);
        try (StatefulRedisClusterConnection<String, String> asUser = tlsClient.connect()) {
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
}
