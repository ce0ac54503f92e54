package io.distlock.safety;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Tier-1 scenarios on a Redis Sentinel set (master, 2 replicas, 3 Sentinels). G5 needs a proxy in the client's path,
 * which Sentinel's address discovery bypasses: not run here.
 */
class RedisSentinelSafetyIT implements ClientFaultTests {
    static RedisStores.Sentinel store;

    @BeforeAll
    static void start() {
        store = new RedisStores.Sentinel();
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
    void r4_staleUnlock() throws Exception {
        Tier1Scenarios.r4StaleUnlock(store, SafetySeeds.seed(), "R4", "tier1");
    }

    @Test
    @Tag("tier1")
    void x1_interruptedWaits() throws Exception {
        Tier1Scenarios.x1InterruptedWaits(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void r2_holdDeleted() throws Exception {
        Tier2Scenarios.r2HoldDeleted(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void sf_failoverUnderLoad() throws Exception {
        Tier2StoreScenarios.sentinelFailover(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void k1_clientClockJumps() throws Exception {
        Tier2Scenarios.k1ClientClockJumps(store, SafetySeeds.seed());
    }

    /** G8a: the master stopped for half the lease, too short for the Sentinels to fail over (SF covers that). */
    @Test
    @Tag("tier2")
    void g8_serverPaused_halfTheLease() throws Exception {
        Tier2StoreScenarios.g8ServerPaused(store, SafetySeeds.seed(), RedisStores.LEASE.dividedBy(2), "a");
    }

    @Override
    public Store clientFaultStore() {
        return store;
    }
}
