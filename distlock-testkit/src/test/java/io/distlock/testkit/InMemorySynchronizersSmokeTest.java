package io.distlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import io.distlock.DistributedCountDownLatch;
import io.distlock.DistributedReadWriteLock;
import io.distlock.DistributedSemaphore;
import io.distlock.LockClient;
import io.distlock.LockHold;
import io.distlock.LockInfo;
import io.distlock.LockLostException;
import io.distlock.PermitHold;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The in-memory store's read-write locks, semaphores and latches, one behaviour each, through two clients of one
 * server; the contract suites cover them in depth.
 */
@Timeout(30)
class InMemorySynchronizersSmokeTest {
    private final InMemoryLockServer server = InMemoryLockServer.create();
    private final LockClient a = server.newClient();
    private final LockClient b = server.newClient();

    @AfterEach
    void close() {
        a.close();
        b.close();
        server.close();
    }

    @Test
    void readers_share_writerWaitsForThem_andANewReaderWaitsBehindTheWriter() throws Exception {
        DistributedReadWriteLock ra = a.readWriteLock("doc");
        DistributedReadWriteLock rb = b.readWriteLock("doc");
        LockHold r1 = ra.readLock().acquire();
        Optional<LockHold> r2 = rb.readLock().tryAcquire(Duration.ZERO);
        assertThat(r2).isPresent();
        CompletableFuture<LockHold> writer = CompletableFuture.supplyAsync(() -> {
            try {
                return rb.writeLock().acquire();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        Thread.sleep(200);
        assertThat(writer).isNotDone();
        assertThat(ra.readLock().tryAcquire(Duration.ofMillis(100)))
                .as("reader behind a waiting writer")
                .isEmpty();
        r1.release();
        r2.get().release();
        LockHold w = writer.get(5, TimeUnit.SECONDS);
        assertThat(w.fencingToken()).isGreaterThan(r2.get().fencingToken());
        w.release();
        assertThat(server.residue("doc")).isEmpty();
    }

    @Test
    void threadView_reentersAndDowngrades_butRefusesAnUpgrade() {
        DistributedReadWriteLock rw = a.readWriteLock("doc");
        rw.writeLock().lock();
        rw.writeLock().lock();
        rw.readLock().lock(); // downgrade
        rw.writeLock().unlock();
        rw.writeLock().unlock();
        assertThat(rw.readLock().isHeldByCurrentThread()).isTrue();
        assertThatThrownBy(() -> rw.writeLock().lock())
                .isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("read lock 'doc'");
        rw.readLock().unlock();
        assertThatThrownBy(() -> rw.readLock().unlock()).isInstanceOf(IllegalMonitorStateException.class);
        assertThat(server.residue("doc")).isEmpty();
    }

    @Test
    void semaphore_neverGrantsMoreThanItsSize_andServesTheFirstWaiterFirst() throws Exception {
        DistributedSemaphore sa = a.semaphore("exports", 4);
        DistributedSemaphore sb = b.semaphore("exports", 4);
        PermitHold three = sa.acquire(3);
        assertThat(sa.availablePermits()).isEqualTo(1);
        CompletableFuture<PermitHold> big = CompletableFuture.supplyAsync(() -> {
            try {
                return sb.acquire(4);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        Thread.sleep(200);
        assertThat(sa.tryAcquire(1))
                .as("a small acquire does not pass the waiting acquire(4)")
                .isEmpty();
        three.release();
        PermitHold all = big.get(5, TimeUnit.SECONDS);
        assertThat(all.permits()).isEqualTo(4);
        assertThat(sa.availablePermits()).isZero();
        all.release();
        assertThatThrownBy(() -> b.semaphore("exports", 5).acquire(1))
                .as("the size stays stored when nobody holds or waits")
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("has 4 permits")
                .hasMessageContaining("size of 5");
        assertThatThrownBy(() -> sa.acquire(5)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void semaphore_sizeIsKeptWhileInUse_andAnotherSizeIsRefused() throws Exception {
        PermitHold p = a.semaphore("s", 4).acquire(1);
        assertThatThrownBy(() -> b.semaphore("s", 5).tryAcquire(1))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("4")
                .hasMessageContaining("5");
        p.release();
    }

    @Test
    void permitsOfAClientThatStoppedRenewing_comeBackWithinOneLease() throws Exception {
        LockClient shortLease = server.newClient(Duration.ofMillis(300));
        Optional<PermitHold> p = shortLease.semaphore("s", 1).tryAcquire(1, Duration.ZERO, Duration.ofMillis(300));
        assertThat(p).isPresent();
        assertThat(b.semaphore("s", 1).tryAcquire(1, Duration.ofSeconds(3))).isPresent();
        shortLease.close();
    }

    @Test
    void latch_opensEveryWaiter_andARetriedCountDownDoesNotCountTwice() throws Exception {
        DistributedCountDownLatch la = a.countDownLatch("batch");
        assertThat(la.trySetCount(2)).isTrue();
        assertThat(la.trySetCount(5)).isFalse();
        CompletableFuture<Boolean> waiter = CompletableFuture.supplyAsync(() -> {
            try {
                return b.countDownLatch("batch").await(Duration.ofSeconds(10));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        InMemoryLockStore store = new InMemoryLockStore(server);
        var key = new io.distlock.spi.LockKey("batch");
        assertThat(store.countDown(key, "call-1", Duration.ofHours(1))).isEqualTo(1);
        assertThat(store.countDown(key, "call-1", Duration.ofHours(1)))
                .as("the retry")
                .isEqualTo(1);
        assertThat(waiter).isNotDone();
        la.countDown();
        assertThat(waiter.get(5, TimeUnit.SECONDS)).isTrue();
        assertThat(la.getCount()).isZero();
        assertThat(b.countDownLatch("batch").await(Duration.ofMillis(10))).isTrue();
        assertThat(la.trySetCount(1)).as("reusable at zero").isTrue();
        assertThat(b.countDownLatch("batch").await(Duration.ofMillis(50))).isFalse();
        assertThatThrownBy(() -> a.semaphore("batch", 1).tryAcquire(1))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("count-down latch");
    }

    @Test
    void admin_inspectsListsAndForceReleasesOneHold() throws Exception {
        DistributedSemaphore s = a.semaphore("pool", 3);
        PermitHold two = s.acquire(2);
        PermitHold one = b.semaphore("pool", 3).acquire(1);
        assertThat(b.countDownLatch("pool-latch").trySetCount(4)).isTrue();
        LockInfo info = a.admin().inspect("pool").orElseThrow();
        assertThat(info.kind()).isEqualTo(LockInfo.Kind.SEMAPHORE);
        assertThat(info.holders())
                .extracting(LockInfo.Holder::permits, LockInfo.Holder::fencingToken)
                .containsExactly(tuple(2, two.fencingToken()), tuple(1, one.fencingToken()));
        assertThat(a.admin().list("pool", 10))
                .extracting(LockInfo::name, LockInfo::kind, LockInfo::count)
                .containsExactly(
                        tuple("pool", LockInfo.Kind.SEMAPHORE, 0L),
                        tuple("pool-latch", LockInfo.Kind.COUNT_DOWN_LATCH, 4L));
        String owner = info.holders().get(0).owner();
        assertThat(a.admin().forceRelease("pool", owner)).isPresent();
        assertThat(a.admin().forceRelease("pool", owner))
                .as("nothing of that owner is left")
                .isEmpty();
        assertThat(s.availablePermits()).isEqualTo(2);
        assertThatThrownBy(two::release).isInstanceOf(LockLostException.class);
        one.release();
    }
}
