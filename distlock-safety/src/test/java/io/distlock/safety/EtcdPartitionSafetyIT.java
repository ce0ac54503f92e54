package io.distlock.safety;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Partitions between servers on a Etcd cluster of 3 whose members each run in a network namespace of their own
 * (tier 2; skipped unless this JVM runs as root with {@code ip netns}).
 */
class EtcdPartitionSafetyIT {
    static PartitionStores.Etcd store;

    @BeforeAll
    static void start() {
        NetNamespaces.assumeAvailable();
        store = new PartitionStores.Etcd();
    }

    @AfterAll
    static void stop() {
        if (store != null) {
            store.close();
        }
    }

    @Test
    @Tag("tier2")
    void holdersServerCutOff() throws Exception {
        PartitionScenarios.memberCutOff(store, SafetySeeds.seed(), false);
    }

    @Test
    @Tag("tier2")
    void leaderCutOff() throws Exception {
        PartitionScenarios.memberCutOff(store, SafetySeeds.seed(), true);
    }
}
