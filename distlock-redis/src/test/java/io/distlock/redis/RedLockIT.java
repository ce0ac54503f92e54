package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockClient;
import io.distlock.LockHold;
import io.distlock.testkit.BadInputContract;
import io.distlock.testkit.FencingContract;
import io.distlock.testkit.LeaseContract;
import io.distlock.testkit.LostHoldContract;
import io.distlock.testkit.MutualExclusionContract;
import io.distlock.testkit.OwnerCheckContract;
import io.distlock.testkit.ReentrancyContract;
import io.distlock.testkit.TimeoutContract;
import io.distlock.testkit.WaitingContract;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The lock contract on RedLock over 5 redis-server processes: every contract of {@link
 * io.distlock.testkit.AllLockContracts} but fairness, since RedLock has no fair locks; the tests of fair locks are
 * replaced by the check that {@code fairLock} is refused.
 */
class RedLockIT
        implements MutualExclusionContract,
                ReentrancyContract,
                OwnerCheckContract,
                LeaseContract,
                LostHoldContract,
                FencingContract,
                WaitingContract,
                TimeoutContract,
                BadInputContract {
    static final RedLockNodes nodes = new RedLockNodes(5);

    @AfterAll
    static void stop() {
        nodes.close();
    }

    @Override
    public LockClient createClient(Duration watchdogLease) {
        return nodes.client(watchdogLease);
    }

    @Override
    public void expireHold(String name) {
        nodes.expireHold(name);
    }

    @Override
    public List<String> residue(String name) {
        return nodes.residue(name);
    }

    private void fairLock_isRefused() {
        assertThatThrownBy(() -> newClient().fairLock(uniqueName()))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("fair");
    }

    @Test
    @Override
    public void counter_fairLocks_noLostIncrements() {
        fairLock_isRefused();
    }

    @Test
    @Override
    public void fairTryLock_timesOut_leavesNoQueueEntry() {
        fairLock_isRefused();
    }

    @Test
    @Override
    public void fairLockInterruptibly_interrupted_throws_leavesNothing() {
        fairLock_isRefused();
    }

    @Test
    @Override
    public void tryAcquire_timesOut_leavesNothing() throws Exception {
        String name = uniqueName();
        LockHold hold = newClient().lock(name).acquire();
        assertThat(newClient().lock(name).tryAcquire(Duration.ofMillis(200))).isEmpty();
        hold.release();
        assertThat(residue(name)).isEmpty();
        fairLock_isRefused();
    }
}
