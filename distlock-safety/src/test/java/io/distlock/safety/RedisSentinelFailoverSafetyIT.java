package io.distlock.safety;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * S1 on a Sentinel set of its own per test (master, 2 replicas, 3 Sentinels): the lock granted on a master whose
 * replication was cut, the master killed, a replica promoted; without and with replica acknowledgements. Each test
 * kills a master per round, so it gets a fresh set rather than sharing one with other scenarios.
 */
class RedisSentinelFailoverSafetyIT {
    private static final int ROUNDS = 4;

    private RedisStores.Sentinel store;

    @BeforeEach
    void start() {
        store = new RedisStores.Sentinel();
    }

    @AfterEach
    void stop() {
        if (store != null) {
            store.close();
        }
    }

    @Test
    @Tag("tier2")
    void s1_unreplicatedLockLost() throws Exception {
        SentinelFailoverScenarios.s1UnreplicatedLock(store, SafetySeeds.seed(), false, ROUNDS);
    }

    @Test
    @Tag("tier2")
    void s1_unreplicatedLockRefusedWithReplicaAcks() throws Exception {
        SentinelFailoverScenarios.s1UnreplicatedLock(store, SafetySeeds.seed(), true, ROUNDS);
    }
}
