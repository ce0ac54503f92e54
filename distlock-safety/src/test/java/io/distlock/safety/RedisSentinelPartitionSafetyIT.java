package io.distlock.safety;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * S2, the Sentinel split-brain, on a Sentinel set whose servers and client JVMs each run in a network namespace of
 * their own (tier 2; skipped unless this JVM runs as root with {@code ip netns}): without and with {@code
 * min-replicas-to-write 1}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedisSentinelPartitionSafetyIT {
    private PartitionStores.Sentinel store;

    @BeforeAll
    void start() {
        NetNamespaces.assumeAvailable();
        store = new PartitionStores.Sentinel();
    }

    @AfterAll
    void stop() {
        if (store != null) {
            store.close();
        }
    }

    @Test
    @Tag("tier2")
    void s2_splitBrain() throws Exception {
        SplitBrainScenarios.sentinelSplitBrain(store, SafetySeeds.seed(), false);
    }

    @Test
    @Tag("tier2")
    void s2_splitBrainMinReplicas() throws Exception {
        SplitBrainScenarios.sentinelSplitBrain(store, SafetySeeds.seed(), true);
    }
}
