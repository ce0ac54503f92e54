package io.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedCountDownLatch;
import io.distlock.DistributedLock;
import io.distlock.LockClient;
import io.distlock.PermitHold;
import io.distlock.testkit.AllSynchronizerContracts;
import io.distlock.testkit.AsyncSynchronizerContract;
import io.distlock.testkit.MultiProcessSynchronizerContract;
import io.distlock.testkit.SemaphoreAsLock;
import io.distlock.testkit.WriteLockAsLock;
import io.distlock.testkit.server.EtcdServer;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The read-write lock, semaphore and latch contracts, in one JVM and across processes, and the whole lock contract on
 * the write lock and on a one-permit semaphore, on an etcd this class starts.
 */
class EtcdSynchronizersIT
        implements AllSynchronizerContracts, MultiProcessSynchronizerContract, AsyncSynchronizerContract {
    @RegisterExtension
    static final EtcdServer etcd = EtcdServer.onFreePort();

    private static EtcdFixture fixture;

    @BeforeAll
    static void connect() throws InterruptedException {
        fixture = new EtcdFixture(etcd.endpoints(), "distlock/");
        warmUp();
    }

    /**
     * Takes and releases a write lock and a semaphore permit and counts a latch down once on a client of its own, so
     * that the JVM's first use of each path (class loading, JIT, jetcd's channels and the fresh etcd's first lease and
     * watch) is not paid inside whichever timing-sensitive contract case happens to run first.
     */
    private static void warmUp() throws InterruptedException {
        try (LockClient c = client(Duration.ofSeconds(30))) {
            DistributedLock write = c.readWriteLock("warm-up:rw").writeLock();
            write.lock();
            write.unlock();
            try (PermitHold permit = c.semaphore("warm-up:semaphore", 2).acquire()) {
                assertThat(permit.isValid()).isTrue();
            }
            DistributedCountDownLatch latch = c.countDownLatch("warm-up:latch");
            assertThat(latch.trySetCount(1)).isTrue();
            latch.countDown();
            assertThat(latch.await(Duration.ofSeconds(10))).isTrue();
        }
        assertThat(fixture.residueWithLatch("warm-up:rw")).isEmpty();
        assertThat(fixture.residueWithLatch("warm-up:semaphore")).isEmpty();
        assertThat(fixture.residueWithLatch("warm-up:latch")).isEmpty();
    }

    @AfterAll
    static void disconnect() {
        fixture.close();
    }

    static LockClient client(Duration watchdogLease) {
        return EtcdLockClient.builder()
                .endpoints(etcd.endpoints())
                .leaseTtl(watchdogLease)
                .build();
    }

    @Override
    public LockClient createClient(Duration watchdogLease) {
        return client(watchdogLease);
    }

    @Override
    public void expireHold(String name) {
        fixture.expireHold(name);
    }

    @Override
    public List<String> residue(String name) {
        return fixture.residueWithLatch(name);
    }

    @Override
    public Optional<ChildClient> childClient() {
        return Optional.of(new ChildClient(EtcdChildClientFactory.class, etcd.endpoints()));
    }

    /** The whole lock contract on the write lock. */
    @Nested
    class WriteLock implements WriteLockAsLock {
        @Override
        public LockClient createBackendClient(Duration watchdogLease) {
            return client(watchdogLease);
        }

        @Override
        public void expireHold(String name) {
            fixture.expireHold(name);
        }

        @Override
        public List<String> residue(String name) {
            return fixture.residue(name);
        }
    }

    /** The whole lock contract on a one-permit semaphore. */
    @Nested
    class OnePermitSemaphore implements SemaphoreAsLock {
        @Override
        public LockClient createBackendClient(Duration watchdogLease) {
            return client(watchdogLease);
        }

        @Override
        public void expireHold(String name) {
            fixture.expireHold(name);
        }

        @Override
        public List<String> residue(String name) {
            return fixture.residue(name);
        }
    }
}
