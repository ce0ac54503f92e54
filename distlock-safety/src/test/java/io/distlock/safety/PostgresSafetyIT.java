package io.distlock.safety;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Tier-1 scenarios on the machine's PostgreSQL server (scripts/services.sh): the lock-table mode through a proxy per
 * client, and J1 (a killed session) on the session-lock mode (advisory locks).
 */
class PostgresSafetyIT implements ClientFaultTests {
    static JdbcStores.Database table;
    static JdbcStores.Database advisory;

    @BeforeAll
    static void start() {
        table = new JdbcStores.Database(JdbcStores.Db.POSTGRESQL, "TABLE");
        advisory = new JdbcStores.Database(JdbcStores.Db.POSTGRESQL, "ADVISORY");
    }

    @AfterAll
    static void stop() {
        table.close();
        advisory.close();
    }

    @Test
    @Tag("tier1")
    void g1_baseline() throws Exception {
        Tier1Scenarios.g1Baseline(table, SafetySeeds.seed());
    }

    @Test
    @Tag("tier1")
    void g3_holderKilled() throws Exception {
        Tier1Scenarios.g3HolderKilled(table, SafetySeeds.seed());
    }

    @Test
    @Tag("tier1")
    void g5_acquireReplyLost() throws Exception {
        Tier1Scenarios.g5AcquireReplyLost(table, SafetySeeds.seed());
    }

    @Test
    @Tag("tier1")
    void x1_interruptedWaits() throws Exception {
        Tier1Scenarios.x1InterruptedWaits(table, SafetySeeds.seed());
    }

    @Test
    @Tag("tier1")
    void g3_holderKilled_sessionLocks() throws Exception {
        Tier1Scenarios.g3HolderKilled(advisory, SafetySeeds.seed());
    }

    @Test
    @Tag("tier1")
    void j1_holdersSessionKilled() throws Exception {
        Tier1Scenarios.j1SessionKilled(advisory, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void g2_holderStopped() throws Exception {
        Tier1Scenarios.r4StaleUnlock(table, SafetySeeds.seed(), "G2", "tier2");
    }

    @Test
    @Tag("tier2")
    void g4_holderBlackholed() throws Exception {
        Tier2Scenarios.g4HolderBlackholed(table, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void g6_releaseReplyLost() throws Exception {
        ReleaseFaultScenarios.g6ReleaseReplyLost(table, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void g6_releaseReplyLost_writeLock() throws Exception {
        ReleaseFaultScenarios.g6ReleaseReplyLost(table, SafetySeeds.seed(), ReleaseFaultScenarios.Primitive.WRITE_LOCK);
    }

    @Test
    @Tag("tier2")
    void g6_releaseReplyLost_permit() throws Exception {
        ReleaseFaultScenarios.g6ReleaseReplyLost(table, SafetySeeds.seed(), ReleaseFaultScenarios.Primitive.PERMIT);
    }

    @Test
    @Tag("tier2")
    void g7_degradedNetwork() throws Exception {
        Tier2Scenarios.g7DegradedNetwork(table, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void k1_clientClockJumps() throws Exception {
        Tier2Scenarios.k1ClientClockJumps(table, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void k1_clientClockJumps_sessionLocks() throws Exception {
        Tier2Scenarios.k1ClientClockJumps(advisory, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void r2_holdDeleted() throws Exception {
        Tier2Scenarios.r2HoldDeleted(table, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void g11_soak() throws Exception {
        Tier2Scenarios.g11Soak(table, SafetySeeds.seed());
    }

    @Override
    public Store clientFaultStore() {
        return table;
    }

    @Test
    @Tag("tier2")
    void g1_baseline_sessionLocks() throws Exception {
        Tier1Scenarios.g1Baseline(advisory, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void x1_interruptedWaits_sessionLocks() throws Exception {
        Tier1Scenarios.x1InterruptedWaits(advisory, SafetySeeds.seed());
    }

    /** The client-fault and scale scenarios on the session-lock mode, PostgreSQL. */
    @org.junit.jupiter.api.Nested
    class SessionLockClientFaults implements ClientFaultTests {
        @Override
        public Store clientFaultStore() {
            return advisory;
        }
    }
}
