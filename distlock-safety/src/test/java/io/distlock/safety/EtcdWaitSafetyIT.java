package io.distlock.safety;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Tier-2 etcd scenarios about waiting and lease lengths, on a cluster of 3 members: E5 and E7. */
class EtcdWaitSafetyIT {
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
    @Tag("tier2")
    void e5_compactionWhileWaiting() throws Exception {
        EtcdWaitScenarios.e5CompactionWhileWaiting(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void e7_shortLeases() throws Exception {
        EtcdWaitScenarios.e7ShortLeases(store, SafetySeeds.seed());
    }

    /** E5 and E7 on clients that grant busy locks: the checker must fail them on S1. */
    @Test
    @Tag("tier2")
    void e5_e7_brokenClientsAreCaught() {
        AssertionError e5 = assertThrows(
                AssertionError.class,
                () -> EtcdWaitScenarios.e5CompactionWhileWaiting(store, SafetySeeds.seed(), true));
        assertThat(e5.getMessage()).contains("S1");
        AssertionError e7 = assertThrows(
                AssertionError.class, () -> EtcdWaitScenarios.e7ShortLeases(store, SafetySeeds.seed(), true));
        assertThat(e7.getMessage()).contains("S1");
    }
}
