package io.distlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedLock;
import io.distlock.LockClient;
import io.distlock.LockHold;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Contract 3: the owner may re-acquire; each acquire needs one release; holds are not re-entrant. */
public interface ReentrancyContract extends BackendUnderTest {

    @Test
    default void lock_twice_needsTwoUnlocks() {
        String name = uniqueName();
        DistributedLock lock = newClient().lock(name);
        DistributedLock other = newClient().lock(name);
        lock.lock();
        lock.lock();
        assertThat(lock.getHoldCount()).isEqualTo(2);
        lock.unlock();
        assertThat(lock.getHoldCount()).isEqualTo(1);
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        assertThat(other.tryLock()).isFalse();
        lock.unlock();
        assertThat(lock.getHoldCount()).isZero();
        assertThat(other.tryLock()).isTrue();
        other.unlock();
    }

    @Test
    default void reentry_keepsFencingToken_acrossLockObjects() {
        String name = uniqueName();
        LockClient client = newClient();
        DistributedLock first = client.lock(name);
        DistributedLock second = client.lock(name);
        first.lock();
        long token = first.fencingToken();
        assertThat(second.tryLock()).isTrue();
        assertThat(second.fencingToken()).isEqualTo(token);
        assertThat(second.getHoldCount()).isEqualTo(2);
        second.unlock();
        first.unlock();
        assertThat(first.isHeldByCurrentThread()).isFalse();
    }

    /** Seed 002: a watchdog keyed by lock name and stopped by the first unlock leaves the outer hold unrenewed. */
    @Test
    default void reentrantHold_afterInnerUnlock_isStillRenewed() {
        String name = uniqueName();
        Duration lease = Duration.ofMillis(900);
        DistributedLock lock = newClient(lease).lock(name);
        DistributedLock other = newClient().lock(name);
        lock.lock();
        lock.lock();
        lock.unlock();
        Timing.sleep(lease.multipliedBy(3));
        assertThat(lock.isHeldByCurrentThread())
                .as("outer hold still valid after 3 leases")
                .isTrue();
        assertThat(other.tryLock())
                .as("another client while the outer hold lasts")
                .isFalse();
        lock.unlock();
        assertThat(other.tryLock()).isTrue();
        other.unlock();
    }

    @Test
    default void lockHolds_areNotReentrant() throws Exception {
        String name = uniqueName();
        DistributedLock lock = newClient().lock(name);
        try (LockHold hold = lock.acquire()) {
            assertThat(lock.tryAcquire(Duration.ZERO))
                    .as("second hold, same thread")
                    .isEmpty();
            assertThat(hold.isValid()).isTrue();
        }
        assertThat(residue(name)).isEmpty();
    }
}
