package io.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLockException;
import io.distlock.LockClient;
import io.distlock.LockHold;
import io.distlock.PermitHold;
import io.distlock.testkit.Eventually;
import io.distlock.testkit.fault.Fault;
import io.distlock.testkit.fault.FaultProxy;
import io.distlock.testkit.server.EtcdServer;
import java.net.URI;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An acquire whose transaction etcd applies but whose answer never reaches the client, and whose clean-up is lost too:
 * the caller is told it failed, and the key its transaction wrote on the client's shared lease, which the client keeps
 * alive for another hold, does not stay behind to keep other clients out.
 *
 * <p>The client talks to etcd through a fault proxy that delays every chunk by 3 s, longer than the client's 2 s
 * request timeout: the acquire times out, its clean-up delete times out behind it, and when the test sees the
 * acquire's key appear in etcd (the transaction was applied) it resets the proxy's connections, which drops the
 * delete still waiting in the proxy (the proxy delays one chunk after the other, so the delete reaches etcd at least
 * 3 s after the acquire). The client holds another lock with the watchdog all along (30 s lease), so its
 * shared lease stays alive.
 */
class EtcdLostReplyIT {
    private static final String NAMESPACE = "lost-reply-it/";
    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    private static final Duration DELAY = Duration.ofSeconds(3);

    @RegisterExtension
    static final EtcdServer etcd = EtcdServer.onFreePort();

    private static EtcdFixture fixture;
    private static ExecutorService caller;

    @BeforeAll
    static void connect() {
        fixture = new EtcdFixture(etcd.endpoints(), NAMESPACE);
        caller = Executors.newSingleThreadExecutor();
    }

    @AfterAll
    static void disconnect() {
        caller.shutdownNow();
        fixture.close();
    }

    @Test
    void lockAcquireWhoseReplyAndCleanUpAreLost_leavesNoKey_anotherClientTakesTheLock() throws Exception {
        String name = "lost-" + UUID.randomUUID();
        lostReply(name, c -> c.lock(name).tryAcquire(Duration.ofSeconds(2)).map(h -> (AutoCloseable) h), other -> {
            Optional<LockHold> h = other.lock(name).tryAcquire(LEASE.dividedBy(2));
            assertThat(h).as("another client's acquire within half a lease").isPresent();
            h.get().close();
        });
    }

    @Test
    void semaphoreAcquireWhoseReplyAndCleanUpAreLost_leavesNoKey_anotherClientTakesThePermit() throws Exception {
        String name = "lost-sem-" + UUID.randomUUID();
        lostReply(
                name,
                c -> c.semaphore(name, 1).tryAcquire(1, Duration.ofSeconds(2)).map(h -> (AutoCloseable) h),
                other -> {
                    Optional<PermitHold> h = other.semaphore(name, 1).tryAcquire(1, LEASE.dividedBy(2));
                    assertThat(h)
                            .as("another client's acquire within half a lease")
                            .isPresent();
                    h.get().close();
                });
    }

    private interface Acquire {
        Optional<AutoCloseable> run(LockClient c) throws Exception;
    }

    private interface Check {
        void run(LockClient other) throws Exception;
    }

    /** A watchdog hold of another name; a few tries, as the first requests of a new client can be slow. */
    private static LockHold keeper(LockClient c) throws InterruptedException {
        for (int i = 1; ; i++) {
            try {
                return c.lock("keeper-" + UUID.randomUUID()).acquire();
            } catch (DistributedLockException e) {
                if (i == 3) {
                    throw e;
                }
            }
        }
    }

    private void lostReply(String name, Acquire acquire, Check other) throws Exception {
        int port = URI.create(etcd.endpoints()).getPort();
        try (FaultProxy proxy = FaultProxy.start(port);
                LockClient c1 = EtcdLockClient.builder()
                        .endpoints("http://" + proxy.address())
                        .namespace(NAMESPACE)
                        .leaseTtl(LEASE)
                        .requestTimeout(TIMEOUT)
                        .build();
                LockClient c2 = EtcdLockClient.builder()
                        .endpoints(etcd.endpoints())
                        .namespace(NAMESPACE)
                        .leaseTtl(LEASE)
                        .build()) {
            // a watchdog hold of another name keeps c1's shared lease alive for as long as the test runs
            LockHold keeper = keeper(c1);
            Future<Optional<AutoCloseable>> attempt;
            try (Fault slow = proxy.delay(DELAY, Duration.ZERO, Duration.ofSeconds(30))) {
                attempt = caller.submit(() -> acquire.run(c1));
                Eventually.within(
                        LEASE.dividedBy(2), "the acquire's transaction applied in etcd", () -> !fixture.keysOf(name)
                                .isEmpty());
            }
            // the clean-up delete sent after the acquire's timeout is still in the proxy: dropped with its connection
            proxy.resetConnections();
            assertThatThrownBy(() -> attempt.get(30, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .cause()
                    .isInstanceOf(DistributedLockException.class);

            other.run(c2);
            Eventually.within(
                    LEASE.dividedBy(2),
                    "no key of " + name + " left: " + fixture.residue(name),
                    () -> fixture.keysOf(name).isEmpty());
            assertThat(keeper.isValid()).as("c1's other hold").isTrue();
            keeper.close();
        }
    }
}
