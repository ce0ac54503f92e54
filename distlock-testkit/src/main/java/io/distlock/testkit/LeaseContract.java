package io.distlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLock;
import io.distlock.LockClient;
import io.distlock.LockHold;
import io.distlock.LockInfo;
import io.distlock.LockLostException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Contract 5: every hold has a lease; the watchdog renews only its own holds, only while they last. */
public interface LeaseContract extends BackendUnderTest {

    @Test
    default void watchdog_keepsHoldPastItsLease() {
        String name = uniqueName();
        Duration lease = Timing.millis(1500);
        DistributedLock lock = newClient(lease).lock(name);
        lock.lock();
        try {
            Timing.sleep(lease.multipliedBy(2));
            assertThat(lock.isHeldByCurrentThread()).isTrue();
            assertThat(newClient().lock(name).tryLock()).isFalse();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Seed 000: a renewal that doubles the expiry makes the lease grow without bound. Where the store reports the
     * lease left ({@link LockInfo#remainingLease()}), it never exceeds one lease while the watchdog renews. Where it
     * never reports one (the hold lasts as long as a session: ZooKeeper, JDBC's row-lock and advisory modes), the property
     * is checked on what the store does instead: a child JVM holds the lock with its watchdog renewing, is killed, and
     * the hold ends within {@link #deadOwnerRelease()}.
     */
    @Test
    default void watchdog_neverExtendsBeyondOneLease() throws Exception {
        String name = uniqueName();
        Duration lease = Duration.ofMillis(1200);
        LockClient client = newClient(lease);
        DistributedLock lock = client.lock(name);
        lock.lock();
        boolean reportsLeases = false;
        try {
            long end = System.nanoTime() + lease.multipliedBy(3).toNanos();
            while (System.nanoTime() - end < 0) {
                Optional<LockInfo> info = client.admin().inspect(name);
                assertThat(info).isPresent();
                Duration left = info.orElseThrow().remainingLease();
                assertThat(left).as("remaining lease").isLessThanOrEqualTo(lease.plusMillis(50));
                reportsLeases |= !left.isZero();
                Timing.sleep(Duration.ofMillis(100));
            }
        } finally {
            lock.unlock();
        }
        if (!reportsLeases) {
            heldByKilledProcess_endsWithinTheStoresBound(name);
        }
    }

    private void heldByKilledProcess_endsWithinTheStoresBound(String name) throws Exception {
        ChildClient child = childClient()
                .orElseThrow(() -> new AssertionError("the store reports no lease, and without childClient() the"
                        + " fixture cannot show that a hold ends with its owner; give it a childClient()"));
        DistributedLock other = newClient().lock(name);
        try (ChildProcess p = ChildProcess.start("hold", child.factory().getName(), child.argument(), name)) {
            p.awaitLine("HELD", Timing.seconds(30));
            Timing.sleep(Duration.ofSeconds(2)); // the child's watchdog renews (or checks) its hold meanwhile
            assertThat(other.tryLock()).as("the child's hold").isFalse();
            p.kill();
        }
        assertThat(other.tryLock(Timing.scaled(deadOwnerRelease()).toMillis(), TimeUnit.MILLISECONDS))
                .as("the killed child's hold ended within %s", deadOwnerRelease())
                .isTrue();
        other.unlock();
    }

    @Test
    default void fixedLease_endsWithoutRenewal_andUnlockThrowsLockLost() throws Exception {
        String name = uniqueName();
        DistributedLock lock = newClient().lock(name);
        DistributedLock other = newClient().lock(name);
        lock.lock(500, TimeUnit.MILLISECONDS);
        long started = System.nanoTime();
        assertThat(other.tryLock(Timing.seconds(5).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        assertThat(System.nanoTime() - started)
                .as("waited for the lease")
                .isGreaterThan(TimeUnit.MILLISECONDS.toNanos(300));
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        assertThatThrownBy(lock::unlock).isInstanceOf(LockLostException.class);
        other.unlock();
    }

    @Test
    default void fixedLease_lockHold_turnsInvalid_listenerToldLost() throws Exception {
        String name = uniqueName();
        DistributedLock lock = newClient().lock(name);
        RecordingLockListener listener = new RecordingLockListener();
        lock.addListener(listener);
        LockHold hold = lock.tryAcquire(Duration.ZERO, Duration.ofMillis(400)).orElseThrow();
        assertThat(listener.acquired()).containsExactly(hold.fencingToken());
        Eventually.within(Timing.seconds(3), "hold turns invalid", () -> !hold.isValid());
        Eventually.within(
                Timing.seconds(3), "listener told lost", () -> listener.lost().contains(hold.fencingToken()));
        assertThatThrownBy(hold::close).isInstanceOf(LockLostException.class);
    }

    /**
     * Seed 004: a renewal without an owner check extends whoever holds the key now. Where the store reports leases,
     * the new hold keeps its own; on every store, the new hold outlasts the old client's renewals and stays the new
     * owner's.
     */
    @Test
    default void renewal_neverExtendsAnotherOwnersHold() throws Exception {
        String name = uniqueName();
        Duration shortLease = Duration.ofMillis(900);
        LockClient oldClient = newClient(shortLease);
        DistributedLock old = oldClient.lock(name);
        RecordingLockListener listener = new RecordingLockListener();
        old.addListener(listener);
        LockClient nextClient = newClient();
        old.lock();
        expireHold(name);
        LockHold next = nextClient
                .lock(name)
                .tryAcquire(Duration.ZERO, Duration.ofSeconds(20))
                .orElseThrow();
        Eventually.within(
                Timing.seconds(4), "old owner told lost", () -> !listener.lost().isEmpty());
        assertThat(old.isHeldByCurrentThread()).isFalse();
        // two more of the old client's lease periods: whatever its watchdog does to the name, the new hold stands
        Timing.sleep(shortLease.multipliedBy(2));
        assertThat(next.isValid()).isTrue();
        assertThat(newClient().lock(name).tryLock())
                .as("a third client while the new hold lasts")
                .isFalse();
        LockInfo info = nextClient.admin().inspect(name).orElseThrow();
        assertThat(info.owner()).as("the hold's owner in the store").startsWith(nextClient.clientId());
        if (!info.remainingLease().isZero()) {
            assertThat(info.remainingLease()).as("the new hold's own lease").isGreaterThan(Duration.ofSeconds(10));
        }
        assertThatThrownBy(old::unlock).isInstanceOf(LockLostException.class);
        next.release();
    }

    /** Seed 000: a renewal not cancelled by the release keeps extending the owner's next hold. */
    @Test
    default void renewal_afterRelease_neverExtendsTheNextHold() throws Exception {
        String name = uniqueName();
        DistributedLock lock = newClient(Duration.ofMillis(600)).lock(name);
        DistributedLock other = newClient().lock(name);
        lock.lock();
        Timing.sleep(Duration.ofMillis(300));
        lock.unlock();
        lock.lock(1, TimeUnit.SECONDS);
        assertThat(other.tryLock(Timing.seconds(4).toMillis(), TimeUnit.MILLISECONDS))
                .as("the fixed 1 s lease ended")
                .isTrue();
        other.unlock();
        assertThatThrownBy(lock::unlock).isInstanceOf(LockLostException.class);
    }

    @Test
    default void close_releasesHolds() throws Exception {
        String name = uniqueName();
        String second = uniqueName();
        LockClient client = createClient(defaultLease());
        client.lock(name).lock();
        LockHold hold = client.lock(second).acquire();
        client.close();
        assertThat(hold.isValid()).isFalse();
        assertThat(newClient().lock(name).tryLock()).isTrue();
        assertThat(newClient().lock(second).tryLock()).isTrue();
    }
}
