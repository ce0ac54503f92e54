package io.distlock.safety;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** RedLock ({@code RedLockClient}) on five independent Redis nodes of its own: partial partitions and L1r (tier 2). */
class RedLockSafetyIT {
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
    void holderCutOffFromMinority() throws Exception {
        RedLockScenarios.holderCutOffFromNodes(store, SafetySeeds.seed(), 2);
    }

    @Test
    @Tag("tier2")
    void holderCutOffFromMajority() throws Exception {
        RedLockScenarios.holderCutOffFromNodes(store, SafetySeeds.seed(), 3);
    }

    @Test
    @Tag("tier2")
    void l1r_restartWithoutData() throws Exception {
        RedLockScenarios.l1rRestartWithoutData(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void l1r_restart_appendfsyncAlways() throws Exception {
        try (RedLockStore persisted = new RedLockStore(5, "--appendonly", "yes", "--appendfsync", "always")) {
            RedLockScenarios.l1rRestartWithData(persisted, SafetySeeds.seed());
        }
    }
}
