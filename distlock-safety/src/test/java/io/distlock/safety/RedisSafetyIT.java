package io.distlock.safety;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Tier-1 scenarios on a standalone Redis, and the broken-client demonstration on it. */
class RedisSafetyIT implements ClientFaultTests {
    static RedisStores.Standalone store;

    @BeforeAll
    static void start() {
        store = new RedisStores.Standalone();
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
    void r4_staleUnlock() throws Exception {
        Tier1Scenarios.r4StaleUnlock(store, SafetySeeds.seed(), "R4", "tier1");
    }

    @Test
    @Tag("tier1")
    void x1_interruptedWaits() throws Exception {
        Tier1Scenarios.x1InterruptedWaits(store, SafetySeeds.seed());
    }

    /** The suite can fail: the checker catches a client that grants busy locks, and the scenario fails. */
    @Test
    @Tag("tier1")
    void brokenClient_isCaught() {
        Throwable failure = catchThrowable(() -> StoreScenarios.brokenStore(store, SafetySeeds.seed()));
        assertThat(failure)
                .isInstanceOf(AssertionError.class)
                // S4 (a stale request reaching the resource after a newer holder's) depends on timing: it may join
                .hasMessageMatching("(?s).*properties failed: \\[S1, S2, LIN(, S4)?\\].*")
                .hasMessageContaining("got the lock while")
                .hasMessageMatching(
                        "(?s).*S2 token order: FAIL \\d+ out-of-order tokens, [1-9]\\d* tokens issued twice.*")
                .hasMessageContaining("timeline of");
    }

    @Test
    @Tag("tier2")
    void g4_holderBlackholed() throws Exception {
        Tier2Scenarios.g4HolderBlackholed(store, SafetySeeds.seed());
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
    void g8_serverPaused_halfTheLease() throws Exception {
        Tier2StoreScenarios.g8ServerPaused(store, SafetySeeds.seed(), RedisStores.LEASE.dividedBy(2), "a");
    }

    @Test
    @Tag("tier2")
    void g8_serverPaused_twiceTheLease() throws Exception {
        Tier2StoreScenarios.g8ServerPaused(store, SafetySeeds.seed(), RedisStores.LEASE.multipliedBy(2), "b");
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
    void r5_debugSleep_halfTheLease() throws Exception {
        ServerStallScenarios.r5ServerStalled(SafetySeeds.seed(), "sleep", RedisStores.LEASE.dividedBy(2), "a");
    }

    @Test
    @Tag("tier2")
    void r5_debugSleep_twiceTheLease() throws Exception {
        ServerStallScenarios.r5ServerStalled(SafetySeeds.seed(), "sleep", RedisStores.LEASE.multipliedBy(2), "b");
    }

    @Test
    @Tag("tier2")
    void r5_clientPauseAll_halfTheLease() throws Exception {
        ServerStallScenarios.r5ServerStalled(SafetySeeds.seed(), "pause-all", RedisStores.LEASE.dividedBy(2), "a");
    }

    @Test
    @Tag("tier2")
    void r5_clientPauseAll_twiceTheLease() throws Exception {
        ServerStallScenarios.r5ServerStalled(SafetySeeds.seed(), "pause-all", RedisStores.LEASE.multipliedBy(2), "b");
    }

    @Test
    @Tag("tier2")
    void r5_clientPauseWrite_halfTheLease() throws Exception {
        ServerStallScenarios.r5ServerStalled(SafetySeeds.seed(), "pause-write", RedisStores.LEASE.dividedBy(2), "a");
    }

    @Test
    @Tag("tier2")
    void r5_clientPauseWrite_twiceTheLease() throws Exception {
        ServerStallScenarios.r5ServerStalled(SafetySeeds.seed(), "pause-write", RedisStores.LEASE.multipliedBy(2), "b");
    }

    @Test
    @Tag("tier2")
    void g9_restart_noPersistence_immediately() throws Exception {
        Tier2StoreScenarios.g9RedisRestart(SafetySeeds.seed(), "-nopersist", Duration.ZERO, false);
    }

    @Test
    @Tag("tier2")
    void g9_restart_everysec_immediately() throws Exception {
        Tier2StoreScenarios.g9RedisRestart(
                SafetySeeds.seed(),
                "-everysec",
                Duration.ZERO,
                false,
                "--appendonly",
                "yes",
                "--appendfsync",
                "everysec");
    }

    @Test
    @Tag("tier2")
    void g9_restart_fsyncAlways_immediately() throws Exception {
        Tier2StoreScenarios.g9RedisRestart(
                SafetySeeds.seed(), "-always", Duration.ZERO, true, "--appendonly", "yes", "--appendfsync", "always");
    }

    @Test
    @Tag("tier2")
    void g9_restart_noPersistence_delayedPastTheLease() throws Exception {
        Tier2StoreScenarios.g9RedisRestart(SafetySeeds.seed(), "-delayed", RedisStores.LEASE.plusSeconds(1), true);
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
