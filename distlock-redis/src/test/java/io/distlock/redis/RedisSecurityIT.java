package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLockException;
import io.distlock.testkit.Handover;
import io.distlock.testkit.server.RedisServer;
import io.distlock.testkit.server.TestCertificates;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.SslOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Password, ACL user and TLS, against a redis-server started with {@code requirepass}, an ACL user that may use every
 * key and channel, and a TLS port with a throw-away certificate authority. Waiting is part of each check, so the
 * pub/sub connection authenticates (and speaks TLS) too.
 */
class RedisSecurityIT {
    private static final String PASSWORD = "s3cret-pw";
    private static final String USER = "locker";
    private static final String USER_PASSWORD = "l0cker-pw";

    private static TestCertificates certs;
    private static RedisServer server;
    private static int tlsPort;

    @BeforeAll
    static void start() {
        certs = TestCertificates.create();
        tlsPort = RedisServer.freeLoopbackPort();
        server = RedisServer.started(
                "--requirepass",
                PASSWORD,
                "--user",
                USER,
                "on",
                ">" + USER_PASSWORD,
                "~*",
                "&*",
                "+@all",
                "--tls-port",
                Integer.toString(tlsPort),
                "--tls-cert-file",
                certs.serverCert().toString(),
                "--tls-key-file",
                certs.serverKey().toString(),
                "--tls-ca-cert-file",
                certs.caCert().toString(),
                "--tls-auth-clients",
                "no");
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static String plain(String userInfo) {
        return "redis://" + userInfo + "@127.0.0.1:" + server.port();
    }

    @Test
    void password_inTheUri_locksAndWaits() throws Exception {
        try (RedisLockClient a = RedisLockClient.create(plain(":" + PASSWORD));
                RedisLockClient b = RedisLockClient.create(plain(":" + PASSWORD))) {
            Handover.holdThenHandOver(a.lock("secure-password"), b.lock("secure-password"));
        }
    }

    @Test
    void aclUser_inTheUri_locksAndWaits() throws Exception {
        try (RedisLockClient a = RedisLockClient.create(plain(USER + ":" + USER_PASSWORD));
                RedisLockClient b = RedisLockClient.create(plain(USER + ":" + USER_PASSWORD))) {
            Handover.holdThenHandOver(a.lock("secure-acl"), b.lock("secure-acl"));
        }
    }

    @Test
    void wrongPassword_failsClearly_withoutShowingIt() {
        assertThatThrownBy(() -> RedisLockClient.create(plain(USER + ":not-the-password")))
                .isInstanceOf(DistributedLockException.class)
                .hasCauseInstanceOf(io.lettuce.core.RedisException.class)
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("not-the-password"));
    }

    @Test
    void noPassword_failsClearly() {
        assertThatThrownBy(() -> RedisLockClient.create("redis://127.0.0.1:" + server.port()))
                .isInstanceOf(DistributedLockException.class)
                .rootCause()
                .hasMessageStartingWith("NOAUTH");
    }

    @Test
    void tls_withTheAuthorityTrusted_locksAndWaits_andContendsWithPlainClients() throws Exception {
        RedisClient tlsClient = RedisClient.create();
        tlsClient.setOptions(ClientOptions.builder()
                .sslOptions(SslOptions.builder()
                        .jdkSslProvider()
                        .trustManager(certs.caCert().toFile())
                        .build())
                .build());
        String tlsUri = "rediss://:" + PASSWORD + "@127.0.0.1:" + tlsPort;
        try (RedisLockClient a = RedisLockClient.builder()
                        .redisClient(tlsClient)
                        .uri(tlsUri)
                        .build();
                RedisLockClient b = RedisLockClient.create(plain(":" + PASSWORD))) {
            Handover.holdThenHandOver(a.lock("secure-tls"), b.lock("secure-tls"));
            Handover.holdThenHandOver(b.lock("secure-tls-2"), a.lock("secure-tls-2"));
        } finally {
            tlsClient.shutdown();
        }
    }

    @Test
    void tls_withAnUntrustedCertificate_failsClearly() {
        assertThatThrownBy(() -> RedisLockClient.create("rediss://:" + PASSWORD + "@127.0.0.1:" + tlsPort))
                .isInstanceOf(DistributedLockException.class)
                .hasRootCauseInstanceOf(java.security.cert.CertPathBuilderException.class);
    }
}
