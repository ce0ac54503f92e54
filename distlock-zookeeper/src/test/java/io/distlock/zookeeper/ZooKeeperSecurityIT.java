package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLock;
import io.distlock.DistributedLockException;
import io.distlock.LockHold;
import io.distlock.testkit.Handover;
import io.distlock.testkit.server.TestCertificates;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Digest authentication with creator-only ACLs, and TLS: another identity (another digest user, or none) can neither
 * delete, change, read nor queue under a hold of the lock clients' user; TLS clients lock and hand over through a
 * TLS-only server that requires client certificates, and clients without a trusted certificate cannot connect.
 */
class ZooKeeperSecurityIT {
    private static final String USER = "locker";
    private static final String PASSWORD = "l0cker-pw";

    private static TestingServer server;

    @BeforeAll
    static void start() throws Exception {
        server = ZooKeeperTestServers.startServer();
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    private static ZooKeeperLockClient.Builder secured(String rootPath) {
        return ZooKeeperLockClient.builder()
                .connectString(server.getConnectString())
                .rootPath(rootPath)
                .sessionTimeout(ZooKeeperTestServers.SESSION_TIMEOUT)
                .connectionTimeout(Duration.ofSeconds(5))
                .digest(USER, PASSWORD);
    }

    /** A raw Curator client authenticated as {@code user} (none when null), for acting behind the lock clients. */
    private static CuratorFramework curatorAs(@Nullable String user, String password) throws InterruptedException {
        CuratorFrameworkFactory.Builder b = CuratorFrameworkFactory.builder()
                .connectString(server.getConnectString())
                .sessionTimeoutMs((int) ZooKeeperTestServers.SESSION_TIMEOUT.toMillis())
                .connectionTimeoutMs(5_000)
                .retryPolicy(new RetryOneTime(100));
        if (user != null) {
            b.authorization("digest", (user + ":" + password).getBytes(StandardCharsets.UTF_8));
        }
        CuratorFramework c = b.build();
        c.start();
        if (!c.blockUntilConnected(10, TimeUnit.SECONDS)) {
            c.close();
            throw new IllegalStateException("could not connect to " + server.getConnectString());
        }
        return c;
    }

    @Test
    void digest_nodesAreCreatorOnly_anotherIdentityCannotDeleteChangeReadOrQueue() throws Exception {
        String root = "/acl-hold";
        String lockPath = root + "/locks/" + ZkNames.lockNode("guarded");
        try (ZooKeeperLockClient owner = secured(root).build();
                CuratorFramework same = curatorAs(USER, PASSWORD);
                CuratorFramework intruder = curatorAs("intruder", "intruder-pw");
                CuratorFramework anonymous = curatorAs(null, "")) {
            DistributedLock lock = owner.lock("guarded");
            LockHold hold = lock.acquire();
            List<String> entries = same.getChildren().forPath(lockPath);
            assertThat(entries).hasSize(1);
            String entry = lockPath + "/" + entries.get(0);
            List<ACL> creatorOnly = List.of(new ACL(
                    ZooDefs.Perms.ALL,
                    new Id("digest", DigestAuthenticationProvider.generateDigest(USER + ":" + PASSWORD))));
            for (String path : List.of(root, root + "/locks", lockPath, entry)) {
                assertThat(same.getACL().forPath(path)).as("ACL of %s", path).isEqualTo(creatorOnly);
            }
            for (CuratorFramework other : List.of(intruder, anonymous)) {
                assertThatThrownBy(() -> other.delete().forPath(entry))
                        .as("delete the hold")
                        .isInstanceOf(KeeperException.NoAuthException.class);
                assertThatThrownBy(() -> other.setData().forPath(entry, "stolen".getBytes(StandardCharsets.UTF_8)))
                        .as("change the hold")
                        .isInstanceOf(KeeperException.NoAuthException.class);
                assertThatThrownBy(() -> other.setACL()
                                .withACL(ZooDefs.Ids.OPEN_ACL_UNSAFE)
                                .forPath(entry))
                        .as("open the hold")
                        .isInstanceOf(KeeperException.NoAuthException.class);
                assertThatThrownBy(() -> other.getData().forPath(entry))
                        .as("read the owner id")
                        .isInstanceOf(KeeperException.NoAuthException.class);
                assertThatThrownBy(() -> other.create()
                                .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                                .forPath(lockPath + "/x-"))
                        .as("queue under the lock")
                        .isInstanceOf(KeeperException.NoAuthException.class);
                assertThatThrownBy(() -> other.delete().forPath(lockPath))
                        .as("delete the lock node")
                        .isInstanceOf(KeeperException.NoAuthException.class);
            }
            assertThat(hold.isValid()).isTrue();
            assertThat(same.getChildren().forPath(lockPath)).containsExactly(entries.get(0));
            assertThat(owner.admin().inspect("guarded"))
                    .hasValueSatisfying(info -> assertThat(info.fencingToken()).isEqualTo(hold.fencingToken()));
            hold.release();
        }
    }

    @Test
    void digest_otherCredentials_failFastWithNoAuth_theSameUserSharesTheLocks() throws Exception {
        String root = "/acl-share";
        try (ZooKeeperLockClient a = secured(root).build();
                ZooKeeperLockClient b = secured(root).build()) {
            Handover.holdThenHandOver(a.lock("shared"), b.lock("shared"));
            assertThatThrownBy(() -> ZooKeeperLockClient.builder()
                            .connectString(server.getConnectString())
                            .rootPath(root)
                            .digest(USER, "wrong-pw")
                            .build())
                    .isInstanceOf(DistributedLockException.class)
                    .hasRootCauseInstanceOf(KeeperException.NoAuthException.class);
            assertThatThrownBy(() -> ZooKeeperLockClient.builder()
                            .connectString(server.getConnectString())
                            .rootPath(root)
                            .build())
                    .isInstanceOf(DistributedLockException.class)
                    .hasRootCauseInstanceOf(KeeperException.NoAuthException.class);
        }
    }

    @Test
    void digest_badArguments_areRejectedAtOnce() {
        assertThatThrownBy(() -> ZooKeeperLockClient.builder().digest("a:b", "pw"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("user")
                .hasMessageContaining("a:b");
        assertThatThrownBy(() -> ZooKeeperLockClient.builder().digest("a", ""))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("password");
    }

    @Test
    void tls_withAClientCertificate_locksAndHandsOver_untrustedOrCertificateless_cannotConnect() throws Exception {
        TestCertificates certs = TestCertificates.create();
        TestCertificates strangers = TestCertificates.create();
        try (TlsZooKeeperServer tls = TlsZooKeeperServer.start(certs, true)) {
            ZooKeeperLockClient.Builder builder = ZooKeeperLockClient.builder()
                    .connectString(tls.connectString())
                    .sessionTimeout(ZooKeeperTestServers.SESSION_TIMEOUT)
                    .connectionTimeout(Duration.ofSeconds(5))
                    .tls(certs.caCert(), "")
                    .tlsClientCertificate(TlsZooKeeperServer.clientKeyStore(certs), "");
            try (ZooKeeperLockClient a = builder.build();
                    ZooKeeperLockClient b = builder.build()) {
                Handover.holdThenHandOver(a.lock("tls"), b.lock("tls"));
            }
            ZooKeeperLockClient.Builder quick = ZooKeeperLockClient.builder()
                    .connectString(tls.connectString())
                    .connectionTimeout(Duration.ofSeconds(2));
            assertThatThrownBy(() -> quick.tls(certs.caCert(), "").build())
                    .as("no client certificate")
                    .isInstanceOf(DistributedLockException.class)
                    .hasMessageContaining("could not connect");
            assertThatThrownBy(() -> quick.tls(strangers.caCert(), "")
                            .tlsClientCertificate(TlsZooKeeperServer.clientKeyStore(certs), "")
                            .build())
                    .as("the server's certificate not trusted")
                    .isInstanceOf(DistributedLockException.class)
                    .hasMessageContaining("could not connect");
            assertThatThrownBy(() -> ZooKeeperLockClient.builder()
                            .connectString(tls.connectString())
                            .connectionTimeout(Duration.ofSeconds(2))
                            .build())
                    .as("plain text to the TLS port")
                    .isInstanceOf(DistributedLockException.class)
                    .hasMessageContaining("could not connect");
        }
    }

    @Test
    void tlsClientCertificate_withoutTls_isRejected() {
        assertThatThrownBy(() -> ZooKeeperLockClient.builder()
                        .connectString(server.getConnectString())
                        .tlsClientCertificate(java.nio.file.Path.of("client.pem"), "")
                        .build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("tls");
    }
}
