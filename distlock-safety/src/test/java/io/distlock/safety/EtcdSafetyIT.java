package io.distlock.safety;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Tier-1 scenarios on an etcd cluster of 3 members, with E2 (a waiter's lease expires while it waits). */
@Tag("tier1")
class EtcdSafetyIT {
    static ConsensusStores.Etcd store;

    @BeforeAll
    static void start() {
        store = new ConsensusStores.Etcd();
    }

    @AfterAll
    static void stop() {
        store.close();
    }

    @Test
    void g1_baseline() throws Exception {
        Tier1Scenarios.g1Baseline(store, SafetySeeds.seed());
    }

    @Test
    void g3_holderKilled() throws Exception {
        Tier1Scenarios.g3HolderKilled(store, SafetySeeds.seed());
    }

    @Test
    void g5_acquireReplyLost() throws Exception {
        Tier1Scenarios.g5AcquireReplyLost(store, SafetySeeds.seed());
    }

    @Test
    void x1_interruptedWaits() throws Exception {
        Tier1Scenarios.x1InterruptedWaits(store, SafetySeeds.seed());
    }

    @Test
    void e2_waitersLeaseExpires() throws Exception {
        StoreScenarios.e2GrantAfterLeaseExpiry(store, SafetySeeds.seed());
    }
}
