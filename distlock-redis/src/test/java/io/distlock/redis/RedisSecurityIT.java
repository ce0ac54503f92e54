package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLock;
import io.distlock.DistributedLockException;
import io.distlock.testkit.server.RedisServer;
import io.distlock.testkit.server.TestCertificates;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.SslOptions;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
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
            holdThenHandOver(a.lock("secure-password"), b.lock("secure-password"));
        }
    }

    @Test
    void aclUser_inTheUri_locksAndWaits() throws Exception {
        try (RedisLockClient a = RedisLockClient.create(plain(USER + ":" + USER_PASSWORD));
                RedisLockClient b = RedisLockClient.create(plain(USER + ":" + USER_PASSWORD))) {
            holdThenHandOver(a.lock("secure-acl"), b.lock("secure-acl"));
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
            holdThenHandOver(a.lock("secure-tls"), b.lock("secure-tls"));
            holdThenHandOver(b.lock("secure-tls-2"), a.lock("secure-tls-2"));
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

    /** {@code holder} takes the lock, {@code waiter} waits for it and gets it within seconds of the release. */
    private static void holdThenHandOver(DistributedLock holder, DistributedLock waiter) throws Exception {
        holder.lock();
        long first = holder.fencingToken();
        AtomicLong acquiredAt = new AtomicLong();
        AtomicLong token = new AtomicLong();
        Thread waiting = new Thread(() -> {
            try {
                if (waiter.tryLock(10, TimeUnit.SECONDS)) {
                    acquiredAt.set(System.nanoTime());
                    token.set(waiter.fencingToken());
                    waiter.unlock();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        waiting.start();
        Thread.sleep(300);
        assertThat(acquiredAt).as("acquired while held").hasValue(0);
        long releasedAt = System.nanoTime();
        holder.unlock();
        waiting.join(15_000);
        assertThat(acquiredAt.get()).as("the waiter acquired").isNotZero();
        assertThat(token.get()).isGreaterThan(first);
        // woken by the release (pub/sub over this connection), not by the 30 s lease running out
        assertThat(TimeUnit.NANOSECONDS.toMillis(acquiredAt.get() - releasedAt)).isLessThan(5000);
    }
}
