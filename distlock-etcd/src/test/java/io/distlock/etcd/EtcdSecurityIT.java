package io.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLockException;
import io.distlock.testkit.Handover;
import io.distlock.testkit.server.EtcdServer;
import io.distlock.testkit.server.TestCertificates;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Authentication and TLS against real etcd servers started for this class: one with users and roles enabled (a user
 * whose role may read and write only the {@code distlock/} prefix) that serves clients over plain HTTP and TLS, and
 * one that requires TLS client certificates. Waiting is part of each check, so the watch streams authenticate (and
 * speak TLS) too.
 */
class EtcdSecurityIT {
    private static final String ROOT = "root:root-pw";
    private static final String USER = "locks";
    private static final String PASSWORD = "locks-pw";

    private static TestCertificates certs;
    private static EtcdServer auth;
    private static EtcdServer clientCerts;

    @BeforeAll
    static void start() {
        certs = TestCertificates.create();
        auth = EtcdServer.withTls(certs).start();
        auth.etcdctl("user", "add", ROOT, "--interactive=false");
        auth.etcdctl("user", "grant-role", "root", "root");
        auth.etcdctl("role", "add", "lockers");
        auth.etcdctl("role", "grant-permission", "lockers", "--prefix=true", "readwrite", "distlock/");
        auth.etcdctl("user", "add", USER + ":" + PASSWORD, "--interactive=false");
        auth.etcdctl("user", "grant-role", USER, "lockers");
        auth.etcdctl("auth", "enable");
        clientCerts = EtcdServer.withClientCertificates(certs).start();
    }

    @AfterAll
    static void stop() {
        auth.close();
        clientCerts.close();
    }

    @Test
    void user_withReadWriteOnTheNamespace_locksAndWaits() throws Exception {
        try (EtcdLockClient a = userClient(auth.endpoints()).build();
                EtcdLockClient b = userClient(auth.endpoints()).build()) {
            Handover.holdThenHandOver(a.lock("secure-user"), b.lock("secure-user"));
        }
        assertThat(auth.etcdctl("--user", ROOT, "get", "--prefix", "distlock/", "--keys-only"))
                .as("keys left behind")
                .isBlank();
    }

    @Test
    void wrongPassword_failsClearly_withoutShowingIt() {
        assertThatThrownBy(() -> {
                    try (EtcdLockClient c = EtcdLockClient.builder()
                            .endpoints(auth.endpoints())
                            .user(USER)
                            .password("not-the-password")
                            .build()) {
                        var unused = c.lock("secure-wrong-password").tryLock();
                    }
                })
                .isInstanceOf(DistributedLockException.class)
                .satisfies(e -> assertThat(e).hasStackTraceContaining("authentication failed"))
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("not-the-password"));
    }

    @Test
    void namespaceOutsideTheUsersPermission_failsClearly() {
        assertThatThrownBy(() -> {
                    try (EtcdLockClient c =
                            userClient(auth.endpoints()).namespace("elsewhere/").build()) {
                        var unused = c.lock("secure-denied").tryLock();
                    }
                })
                .isInstanceOf(DistributedLockException.class)
                .satisfies(e -> assertThat(e).hasStackTraceContaining("permission denied"));
    }

    @Test
    void tls_withTheAuthorityTrusted_locksAndWaits_andContendsWithPlainClients() throws Exception {
        try (EtcdLockClient tls = userClient(auth.tlsEndpoints())
                        .trustCertificates(certs.caCert())
                        .build();
                EtcdLockClient plain = userClient(auth.endpoints()).build()) {
            Handover.holdThenHandOver(tls.lock("secure-tls"), plain.lock("secure-tls"));
            Handover.holdThenHandOver(plain.lock("secure-tls-2"), tls.lock("secure-tls-2"));
        }
    }

    @Test
    void tls_withAnUntrustedCertificate_failsClearly() {
        assertThatThrownBy(() -> {
                    try (EtcdLockClient c = userClient(auth.tlsEndpoints())
                            .requestTimeout(java.time.Duration.ofSeconds(2))
                            .build()) {
                        var unused = c.lock("secure-untrusted").tryLock();
                    }
                })
                // jetcd retries a failed handshake as "unavailable" until the request times out: the cause is lost
                .isInstanceOf(DistributedLockException.class)
                .satisfies(e -> assertThat(e).hasStackTraceContaining("did not answer"));
    }

    @Test
    void clientCertificate_whenTheServerRequiresOne_locksAndWaits() throws Exception {
        try (EtcdLockClient a = certClient().build();
                EtcdLockClient b = certClient().build()) {
            Handover.holdThenHandOver(a.lock("secure-client-cert"), b.lock("secure-client-cert"));
        }
    }

    @Test
    void noClientCertificate_whenTheServerRequiresOne_failsClearly() {
        assertThatThrownBy(() -> {
                    try (EtcdLockClient c = EtcdLockClient.builder()
                            .endpoints(clientCerts.tlsEndpoints())
                            .trustCertificates(certs.caCert())
                            .requestTimeout(java.time.Duration.ofSeconds(2))
                            .build()) {
                        var unused = c.lock("secure-no-client-cert").tryLock();
                    }
                })
                .isInstanceOf(DistributedLockException.class);
    }

    private static EtcdLockClient.Builder userClient(String endpoints) {
        return EtcdLockClient.builder().endpoints(endpoints).user(USER).password(PASSWORD);
    }

    private static EtcdLockClient.Builder certClient() {
        return EtcdLockClient.builder()
                .endpoints(clientCerts.tlsEndpoints())
                .trustCertificates(certs.caCert())
                .clientCertificate(certs.clientCert(), certs.clientKey());
    }
}
