package io.distlock.safety;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * RedLock ({@code RedLockClient}) on five independent Redis nodes of its own (tier 2): L2r (a node's clock jumps), L4r
 * (split vote of five client JVMs), L3r (a client JVM stopped mid-acquire), L1r with a delayed restart, and G3 (the
 * holder's JVM killed).
 */
class RedLockMoreSafetyIT implements ClientFaultTests {
    static RedLockStore store;

    @BeforeAll
    static void start() {
        store = new RedLockStore(5);
    }

    @AfterAll
    static void stop() {
        if (store != null) {
            store.close();
        }
    }

    @Test
    @Tag("tier2")
    void l2r_clockJump() throws Exception {
        RedLockMoreScenarios.l2rClockJump(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void l4r_splitVote() throws Exception {
        RedLockMoreScenarios.l4rSplitVote(store, SafetySeeds.seed(), 20);
    }

    @Test
    @Tag("tier2")
    void l3r_stoppedMidAcquire() throws Exception {
        RedLockMoreScenarios.l3rStoppedMidAcquire(store, SafetySeeds.seed(), 10);
    }

    @Test
    @Tag("tier2")
    void l1r_delayedRestart() throws Exception {
        RedLockMoreScenarios.l1rDelayedRestart(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void g3_holderKilled() throws Exception {
        Tier1Scenarios.g3HolderKilled(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void g1_baseline() throws Exception {
        Tier1Scenarios.g1Baseline(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void x1_interruptedWaits() throws Exception {
        Tier1Scenarios.x1InterruptedWaits(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void r4_staleUnlock() throws Exception {
        Tier1Scenarios.r4StaleUnlock(store, SafetySeeds.seed(), "R4", "tier2");
    }

    @Test
    @Tag("tier2")
    void k1_clientClockJumps() throws Exception {
        Tier2Scenarios.k1ClientClockJumps(store, SafetySeeds.seed());
    }

    @Override
    public Store clientFaultStore() {
        return store;
    }
}
