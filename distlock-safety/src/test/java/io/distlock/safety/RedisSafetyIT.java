package io.distlock.safety;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.testkit.history.Property;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Tier-1 scenarios on a standalone Redis, and the broken-client demonstration on it. */
@Tag("tier1")
class RedisSafetyIT {
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
    void r4_staleUnlock() throws Exception {
        Tier1Scenarios.r4StaleUnlock(store, SafetySeeds.seed(), "R4", "tier1");
    }

    @Test
    void x1_interruptedWaits() throws Exception {
        Tier1Scenarios.x1InterruptedWaits(store, SafetySeeds.seed());
    }

    /** The suite can fail: the checker catches a client that grants busy locks, and the scenario fails. */
    @Test
    void brokenClient_isCaught() {
        AssertionError failure = (AssertionError) org.assertj.core.api.Assertions.catchThrowable(
                () -> StoreScenarios.brokenStore(store, SafetySeeds.seed()));
        assertThat(failure).isNotNull();
        assertThat(failure.getMessage())
                .contains("properties failed")
                .contains("S1")
                .contains("timeline of S1");
        assertThatThrownBy(() -> {
                    throw failure;
                })
                .hasMessageContaining(Property.S2.name());
    }
}
