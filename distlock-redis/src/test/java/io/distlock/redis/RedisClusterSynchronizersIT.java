package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedCountDownLatch;
import io.distlock.LockClient;
import io.distlock.LockHold;
import io.distlock.PermitHold;
import io.distlock.testkit.AllSynchronizerContracts;
import io.distlock.testkit.server.RedisCluster;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The read-write lock, semaphore and latch contracts' key cases on a 3-master Redis Cluster (sharded pub/sub); the
 * whole suites run on standalone Redis in {@link RedisSynchronizersIT}, and this class runs what the Cluster changes:
 * the scripts' keys in one slot, wake-ups on shard channels, renewal per slot.
 */
class RedisClusterSynchronizersIT {
    @RegisterExtension
    static final RedisCluster cluster = RedisCluster.withMasters(3);

    private static final KeyLayout layout = new KeyLayout("distlock:");
    private static ClusterAdmin admin;

    private final Contracts contracts = new Contracts();

    @BeforeAll
    static void connect() {
        admin = ClusterAdmin.connect(cluster);
    }

    @AfterAll
    static void disconnect() {
        admin.close();
    }

    @AfterEach
    void closeClients() {
        contracts.closeTrackedClients();
    }

    /** The suites, on this Cluster; their tests are run one by one below. */
    static final class Contracts implements AllSynchronizerContracts {
        @Override
        public LockClient createClient(Duration watchdogLease) {
            return RedisLockClient.builder()
                    .cluster(cluster.uris().toArray(String[]::new))
                    .leaseTime(watchdogLease)
                    .build();
        }

        @Override
        public void expireHold(String name) {
            RedisKeys.expireHold(admin.sync(), layout, name);
            RedisKeys.expireClaimHolds(admin.sync(), layout, name);
        }

        @Override
        public List<String> residue(String name) {
            return RedisKeys.residue(admin.sync(), layout, name);
        }
    }

    @Test
    void readers_holdAtOnce() throws Exception {
        contracts.readLock_readersOfSeveralClientsAndThreads_holdAtOnce();
    }

    @Test
    void waitingWriter_blocksLaterReaders() throws Exception {
        contracts.waitingWriter_blocksReadersThatArriveAfterIt();
    }

    @Test
    void writeRelease_letsEveryWaitingReaderIn() throws Exception {
        contracts.writeRelease_letsEveryWaitingReaderIn();
    }

    @Test
    void readHold_withEndedLease_isGone() throws Exception {
        contracts.readHold_withEndedLease_isGone_whileAnotherReaderRenews();
    }

    @Test
    void writeTokens_exceedEveryTokenBefore() throws Exception {
        contracts.writeTokens_exceedEveryTokenBefore_readTokensFromTheSameCounter();
    }

    @Test
    void writerTimesOut_leavesNothing() throws Exception {
        contracts.writerTimesOut_leavesNothing_readersGetInAtOnce();
    }

    @Test
    void permits_upToTheSize_acrossClients() {
        contracts.tryAcquire_upToTheSize_acrossClients_thenNoMore();
    }

    @Test
    void release_wakesAsManyWaitersAsItFrees() throws Exception {
        contracts.release_wakesAsManyWaitersAsTheFreedPermitsServe();
    }

    @Test
    void permitHold_removedBehindItsBack_isToldLost() throws Exception {
        contracts.holdRemovedBehindItsBack_isToldLost_releaseThrowsLockLost_permitsFree();
    }

    @Test
    void watchdog_keepsPermits() {
        contracts.watchdog_keepsPermitsPastTheirLease();
    }

    @Test
    void latch_zeroWakesEveryWaiterOfEveryClient() throws Exception {
        contracts.reachingZero_wakesEveryWaiterOfEveryClient_promptly();
    }

    @Test
    void latch_countDownsCountOnce() throws Exception {
        contracts.countDowns_ofManyThreadsAndClients_eachCountOnce();
    }

    @Test
    void kinds_refuseEachOther() {
        contracts.nameInUseAsAnotherKind_isRefused_andNothingIsCorrupted();
    }

    @Test
    void keysOfOneName_shareOneSlot_evenForHostileNames() throws Exception {
        LockClient a = contracts.newClient();
        LockClient b = contracts.newClient();
        for (String name : List.of("a{b}c", "}{", "{x}", "new\nline ✓", "y".repeat(1_000))) {
            LockHold read = a.readWriteLock("rw" + name).readLock().acquire();
            assertThat(b.readWriteLock("rw" + name).writeLock().tryLock()).isFalse();
            PermitHold permits = a.semaphore("sem" + name, 3).acquire(2);
            DistributedCountDownLatch latch = a.countDownLatch("latch" + name);
            assertThat(latch.trySetCount(2)).isTrue();
            latch.countDown();
            for (String n : List.of("rw" + name, "sem" + name, "latch" + name)) {
                List<String> keys = RedisKeys.scan(admin.sync(), layout.namePattern(n));
                assertThat(keys).as("keys of %s", n).isNotEmpty();
                Set<Long> slots = new HashSet<>();
                for (String key : keys) {
                    slots.add(admin.sync().clusterKeyslot(key));
                }
                assertThat(slots).as("slots of %s", keys).hasSize(1);
            }
            read.release();
            permits.release();
            latch.countDown();
            assertThat(latch.getCount()).isZero();
        }
    }
}
