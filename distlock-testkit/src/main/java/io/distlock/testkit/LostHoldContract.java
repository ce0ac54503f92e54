package io.distlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLock;
import io.distlock.LockClient;
import io.distlock.LockHold;
import io.distlock.LockLostException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Contract 6: a hold found gone is marked lost at once, listeners are told, and the release says so. */
public interface LostHoldContract extends BackendUnderTest {

    @Test
    default void holdRemovedBehindItsBack_isReportedLost() {
        String name = uniqueName();
        DistributedLock lock = newClient(Duration.ofMillis(900)).lock(name);
        RecordingLockListener listener = new RecordingLockListener();
        lock.addListener(listener);
        lock.lock();
        long token = lock.fencingToken();
        expireHold(name);
        Eventually.within(
                Timing.seconds(3), "listener told lost", () -> listener.lost().contains(token));
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        assertThat(lock.getHoldCount()).isZero();
        assertThatThrownBy(lock::unlock).isInstanceOf(LockLostException.class).hasMessageContaining(name);
        assertThatThrownBy(lock::unlock)
                .as("the loss is reported once; then the thread simply holds nothing")
                .isExactlyInstanceOf(IllegalMonitorStateException.class);
    }

    @Test
    default void lockHold_removedBehindItsBack_isInvalid_closeThrowsLockLost() throws Exception {
        String name = uniqueName();
        DistributedLock lock = newClient(Duration.ofMillis(900)).lock(name);
        LockHold hold = lock.acquire();
        expireHold(name);
        Eventually.within(Timing.seconds(3), "hold invalid", () -> !hold.isValid());
        assertThatThrownBy(hold::close).isInstanceOf(LockLostException.class);
        hold.close();
    }

    @Test
    default void lostHold_letsAnotherThreadOfTheClientAcquire() throws Exception {
        String name = uniqueName();
        LockClient client = newClient(Duration.ofMillis(900));
        DistributedLock lock = client.lock(name);
        lock.lock();
        expireHold(name);
        boolean[] got = new boolean[1];
        Thread t = new Thread(() -> {
            DistributedLock l = client.lock(name);
            try {
                got[0] = l.tryLock(Timing.seconds(4).toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
                if (got[0]) {
                    l.unlock();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        t.start();
        t.join();
        assertThat(got[0]).isTrue();
        assertThatThrownBy(lock::unlock).isInstanceOf(LockLostException.class);
    }
}
