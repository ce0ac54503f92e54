package io.distlock.safety;

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
}
