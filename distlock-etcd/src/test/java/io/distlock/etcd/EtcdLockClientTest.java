package io.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLock;
import io.distlock.DistributedLockException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The builder's argument checks, and what a client does without a reachable etcd; no server. */
class EtcdLockClientTest {

    @Test
    @SuppressWarnings("NullAway") // null on purpose
    void create_nullOrBlankEndpoints_throws() {
        assertThatThrownBy(() -> EtcdLockClient.create(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("endpoints");
        assertThatThrownBy(() -> EtcdLockClient.create(" "))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("' '");
        assertThatThrownBy(() -> EtcdLockClient.create("http://a:1,,http://b:2"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("http://a:1,,http://b:2");
    }

    @Test
    void endpoints_withoutSchemeOrHost_orOtherScheme_throwNamingTheEndpoint() {
        assertThatThrownBy(() -> EtcdLockClient.builder().endpoints("localhost:2379"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("localhost:2379");
        assertThatThrownBy(() -> EtcdLockClient.builder().endpoints("redis://localhost:2379"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("redis://localhost:2379");
        assertThatThrownBy(() -> EtcdLockClient.builder().endpoints("http://exa mple:1"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("http://exa mple:1");
    }

    @Test
    @SuppressWarnings("NullAway") // null on purpose
    void builder_badOptions_throwNamingTheArgument() {
        EtcdLockClient.Builder b = EtcdLockClient.builder();
        assertThatThrownBy(() -> b.namespace("")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> b.leaseTtl(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaseTtl");
        assertThatThrownBy(() -> b.requestTimeout(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("requestTimeout");
        assertThatThrownBy(() -> b.clientId("a:b"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("a:b");
        assertThatThrownBy(() -> b.user(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> b.asyncExecutor(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("asyncExecutor");
        assertThatThrownBy(() -> b.maxWaiters(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("maxWaiters must be positive: 0");
        assertThatThrownBy(() -> b.latchExpiry(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("latchExpiry");
    }

    @Test
    void build_withoutEndpointsOrClient_throwsIllegalState() {
        assertThatThrownBy(() -> EtcdLockClient.builder().build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("endpoints");
    }

    @Test
    void build_userWithoutPassword_throwsIllegalState() {
        assertThatThrownBy(() -> EtcdLockClient.builder()
                        .endpoints("http://127.0.0.1:2379")
                        .user("locks")
                        .build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("password");
    }

    @Test
    void build_unreadableTlsFile_throwsNamingTheFile() {
        Path missing = Path.of("/nonexistent/ca.pem");
        assertThatThrownBy(() -> EtcdLockClient.builder()
                        .endpoints("https://127.0.0.1:2379")
                        .trustCertificates(missing)
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(missing.toString());
    }

    @Test
    void tryLock_unreachableEtcd_throwsDistributedLockExceptionWithinTheRequestTimeout() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort(); // closed again: nothing listens there
        }
        try (EtcdLockClient client = EtcdLockClient.builder()
                .endpoints("http://127.0.0.1:" + port)
                .requestTimeout(Duration.ofMillis(500))
                .build()) {
            DistributedLock lock = client.lock("unreachable");
            long start = System.nanoTime();
            assertThatThrownBy(lock::tryLock)
                    .isInstanceOf(DistributedLockException.class)
                    .hasMessageContaining("unreachable")
                    .hasRootCauseInstanceOf(java.util.concurrent.TimeoutException.class);
            assertThat(System.nanoTime() - start)
                    .isLessThan(Duration.ofSeconds(5).toNanos());
        }
    }
}
