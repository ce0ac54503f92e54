package io.distlock.safety;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** C3 (slot migration under load) on a Redis Cluster of 3 masters and 3 replicas of its own. */
class RedisClusterMigrationSafetyIT {
    static RedisStores.Cluster store;

    @BeforeAll
    static void start() {
        store = new RedisStores.Cluster();
    }

    @AfterAll
    static void stop() {
        store.close();
    }

    @Test
    @Tag("tier2")
    void c3_slotMigrationUnderLoad() throws Exception {
        ClusterMigrationScenarios.c3SlotMigration(store, SafetySeeds.seed());
    }
}
