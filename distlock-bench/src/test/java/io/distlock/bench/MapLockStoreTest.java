package io.distlock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedLock;
import io.distlock.internal.EngineConfig;
import io.distlock.internal.LockEngine;
import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.Lease;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The bench's in-memory store, called directly and under the engine. */
@Timeout(60)
class MapLockStoreTest {
    private static final LockKey KEY = new LockKey("k");
    private static final OwnerId A = new OwnerId("a");
    private static final OwnerId B = new OwnerId("b");
    private static final Lease LEASE = Lease.renewed(Duration.ofSeconds(30));

    private final MapLockStore store = new MapLockStore();

    @Test
    void tryAcquire_heldByOther_isBusy_andReleaseByOther_changesNothing() {
        Attempt first = store.tryAcquire(Claim.lock(KEY, A, LEASE, 0), false);

        assertThat(first).isInstanceOf(Attempt.Acquired.class);
        assertThat(store.tryAcquire(Claim.lock(KEY, B, LEASE, 0), false)).isInstanceOf(Attempt.Busy.class);
        assertThat(store.release(HeldClaim.lock(KEY, B, 0))).isFalse();
        assertThat(store.release(HeldClaim.lock(KEY, A, 0))).isTrue();
        assertThat(store.release(HeldClaim.lock(KEY, A, 0))).isFalse();
    }

    @Test
    void tryAcquire_tokensGrow() {
        long t1 = ((Attempt.Acquired) store.tryAcquire(Claim.lock(KEY, A, LEASE, 0), false)).fencingToken();
        assertThat(store.release(HeldClaim.lock(KEY, A, 0))).isTrue();
        long t2 = ((Attempt.Acquired) store.tryAcquire(Claim.lock(KEY, B, LEASE, 0), false)).fencingToken();

        assertThat(t2).isGreaterThan(t1);
    }

    @Test
    void expiredHold_isFree_andCannotBeRenewed() throws InterruptedException {
        assertThat(store.tryAcquire(Claim.lock(KEY, A, Lease.fixed(Duration.ofMillis(1)), 0), false))
                .isInstanceOf(Attempt.Acquired.class);
        Thread.sleep(20);

        HeldClaim held = HeldClaim.lock(KEY, A, 1);
        assertThat(store.renew(List.of(held), Duration.ofSeconds(1))).containsExactly(held);
        assertThat(store.tryAcquire(Claim.lock(KEY, B, LEASE, 0), false)).isInstanceOf(Attempt.Acquired.class);
    }

    @Test
    void release_wakesTheSubscribers() {
        AtomicInteger woken = new AtomicInteger();
        var unused = store.tryAcquire(Claim.lock(KEY, A, LEASE, 0), false);
        try (var s = store.subscribe(KEY, woken::incrementAndGet)) {
            assertThat(store.release(HeldClaim.lock(KEY, A, 0))).isTrue();
        }
        assertThat(woken).hasValue(1);
    }

    @Test
    void underTheEngine_excludesAndFences() throws InterruptedException {
        try (LockEngine engine = LockEngine.create(store, EngineConfig.defaults())) {
            DistributedLock lock = engine.lock("n");
            lock.lock();
            long token = lock.fencingToken();
            AtomicReference<Object> otherGot = new AtomicReference<>("not run");
            Thread other = new Thread(() -> {
                try {
                    otherGot.set(engine.lock("n").tryLock(50, TimeUnit.MILLISECONDS));
                } catch (InterruptedException e) {
                    otherGot.set(e);
                }
            });
            other.start();
            other.join();
            assertThat(otherGot).hasValue(false);
            lock.unlock();
            lock.lock();
            assertThat(lock.fencingToken()).isGreaterThan(token);
            lock.unlock();
            assertThat(store.inspect(new LockKey("n"))).isEmpty();
        }
    }
}
