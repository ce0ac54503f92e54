package io.distlock.safety;

import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Tier-1 scenarios on a ZooKeeper ensemble of 3 server processes; G5 is Z4 here. */
class ZooKeeperSafetyIT implements ClientFaultTests {
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
    @Tag("tier1")
    void g1_baseline() throws Exception {
        Tier1Scenarios.g1Baseline(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier1")
    void g3_holderKilled() throws Exception {
        Tier1Scenarios.g3HolderKilled(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier1")
    void z4_createAppliedReplyLost() throws Exception {
        Tier1Scenarios.g5AcquireReplyLost(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier1")
    void x1_interruptedWaits() throws Exception {
        Tier1Scenarios.x1InterruptedWaits(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void g2_holderStopped() throws Exception {
        Tier1Scenarios.r4StaleUnlock(store, SafetySeeds.seed(), "G2", "tier2");
    }

    @Test
    @Tag("tier2")
    void g4_holderBlackholed() throws Exception {
        Tier2Scenarios.g4HolderBlackholed(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void g6_releaseReplyLost() throws Exception {
        ReleaseFaultScenarios.g6ReleaseReplyLost(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void g7_degradedNetwork() throws Exception {
        Tier2Scenarios.g7DegradedNetwork(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void k1_clientClockJumps() throws Exception {
        Tier2Scenarios.k1ClientClockJumps(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void g8a_leaderPausedHalfExpiry() throws Exception {
        Tier2StoreScenarios.g8ServerPaused(
                store, SafetySeeds.seed(), store.expiry().dividedBy(2), "a");
    }

    @Test
    @Tag("tier2")
    void g8_leaderPaused() throws Exception {
        Tier2StoreScenarios.g8ServerPaused(
                store, SafetySeeds.seed(), store.expiry().multipliedBy(2), "b");
    }

    @Test
    @Tag("tier2")
    void z1_holdersSessionExpires() throws Exception {
        Tier2StoreScenarios.z1SessionExpired(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void z2_leaderKilled() throws Exception {
        Tier2StoreScenarios.leaderKilled(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void z5_containerDeleted() throws Exception {
        ContainerReapScenarios.z5ContainerDeleted(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void z6a_ensembleDownShorterThanSession() throws Exception {
        EnsembleRestartScenarios.z6EnsembleDown(store, SafetySeeds.seed(), Duration.ZERO, "a");
    }

    @Test
    @Tag("tier2")
    void z6b_ensembleDownLongerThanSession() throws Exception {
        EnsembleRestartScenarios.z6EnsembleDown(
                store, SafetySeeds.seed(), ConsensusStores.ZooKeeper.SESSION.multipliedBy(2), "b");
    }

    @Test
    @Tag("tier2")
    void g9_majorityRestarted() throws Exception {
        EnsembleRestartScenarios.g9ZooKeeperMajority(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void z6_ensembleDownHolderKilled() throws Exception {
        HolderDeadRestartScenarios.zooKeeper(
                store, SafetySeeds.seed(), ConsensusStores.ZooKeeper.SESSION.multipliedBy(2));
    }

    @Test
    @Tag("tier2")
    void g9_majorityDownPastSession() throws Exception {
        EnsembleRestartScenarios.g9ZooKeeperMajority(
                store, SafetySeeds.seed(), ConsensusStores.ZooKeeper.SESSION.multipliedBy(2), "majority-long");
    }

    @Test
    @Tag("tier2")
    void g9_followerDataWiped() throws Exception {
        EnsembleRestartScenarios.zooKeeperFollowerWiped(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void r2_holdDeleted() throws Exception {
        Tier2Scenarios.r2HoldDeleted(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void g11_soak() throws Exception {
        Tier2Scenarios.g11Soak(store, SafetySeeds.seed());
    }

    @Override
    public Store clientFaultStore() {
        return store;
    }
}
