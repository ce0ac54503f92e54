package io.distlock.safety;

import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Tier-1 scenarios on an etcd cluster of 3 members, with E2 (a waiter's lease expires while it waits). */
class EtcdSafetyIT implements ClientFaultTests {
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
    void g5_acquireReplyLost() throws Exception {
        Tier1Scenarios.g5AcquireReplyLost(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier1")
    void x1_interruptedWaits() throws Exception {
        Tier1Scenarios.x1InterruptedWaits(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier1")
    void e2_waitersLeaseExpires() throws Exception {
        StoreScenarios.e2GrantAfterLeaseExpiry(store, SafetySeeds.seed());
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
    void g6_releaseReplyLost_writeLock() throws Exception {
        ReleaseFaultScenarios.g6ReleaseReplyLost(store, SafetySeeds.seed(), ReleaseFaultScenarios.Primitive.WRITE_LOCK);
    }

    @Test
    @Tag("tier2")
    void g6_releaseReplyLost_permit() throws Exception {
        ReleaseFaultScenarios.g6ReleaseReplyLost(store, SafetySeeds.seed(), ReleaseFaultScenarios.Primitive.PERMIT);
    }

    @Test
    @Tag("tier2")
    void g7_degradedNetwork() throws Exception {
        Tier2Scenarios.g7DegradedNetwork(store, SafetySeeds.seed());
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
    void e3_leaderKilled() throws Exception {
        Tier2StoreScenarios.leaderKilled(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void e4_leaseRevoked() throws Exception {
        Tier2StoreScenarios.e4LeaseRevoked(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void g9_clusterRestarted() throws Exception {
        EnsembleRestartScenarios.g9EtcdRestart(store, SafetySeeds.seed(), true, Duration.ofSeconds(1), "cluster");
    }

    @Test
    @Tag("tier2")
    void g9_clusterDownPastLease() throws Exception {
        EnsembleRestartScenarios.g9EtcdRestart(
                store, SafetySeeds.seed(), true, store.expiry().multipliedBy(2), "cluster-long");
    }

    @Test
    @Tag("tier2")
    void g9_majorityRestarted() throws Exception {
        EnsembleRestartScenarios.g9EtcdRestart(store, SafetySeeds.seed(), false, Duration.ofSeconds(1), "majority");
    }

    @Test
    @Tag("tier2")
    void g9_clusterDownHolderKilled() throws Exception {
        HolderDeadRestartScenarios.etcd(
                store, SafetySeeds.seed(), store.expiry().multipliedBy(2));
    }

    @Test
    @Tag("tier2")
    void g9_majorityDownPastLease() throws Exception {
        EnsembleRestartScenarios.g9EtcdRestart(
                store, SafetySeeds.seed(), false, store.expiry().multipliedBy(3), "majority-long");
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
