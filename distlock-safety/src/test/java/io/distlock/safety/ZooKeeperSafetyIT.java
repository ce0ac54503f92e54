package io.distlock.safety;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Tier-1 scenarios on a ZooKeeper ensemble of 3 server processes; G5 is Z4 here. */
@Tag("tier1")
class ZooKeeperSafetyIT {
    static ConsensusStores.ZooKeeper store;

    @BeforeAll
    static void start() {
        store = new ConsensusStores.ZooKeeper();
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
    void z4_createAppliedReplyLost() throws Exception {
        Tier1Scenarios.g5AcquireReplyLost(store, SafetySeeds.seed());
    }

    @Test
    void x1_interruptedWaits() throws Exception {
        Tier1Scenarios.x1InterruptedWaits(store, SafetySeeds.seed());
    }
}
