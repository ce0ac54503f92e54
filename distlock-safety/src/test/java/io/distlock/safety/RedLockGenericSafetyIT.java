package io.distlock.safety;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The generic proxy-fault scenarios on RedLock ({@code RedLockClient}) on five independent Redis nodes of its own (tier
 * 2): G5 (acquire reply lost), G6 (release reply lost), G7 (degraded network) and G11 (soak). Each client reaches
 * every node through a proxy of its own, and a fault on "the client's proxy" is applied to all five of its proxies.
 */
class RedLockGenericSafetyIT {
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
    void g5_acquireReplyLost() throws Exception {
        Tier1Scenarios.g5AcquireReplyLost(store, SafetySeeds.seed(), "tier2");
    }

    @Test
    @Tag("tier2")
    void g6_releaseReplyLost() throws Exception {
        ReleaseFaultScenarios.g6ReleaseReplyLost(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void g7_degradedNetwork() throws Exception {
        Tier2Scenarios.g7DegradedNetwork(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void g11_soak() throws Exception {
        Tier2Scenarios.g11Soak(store, SafetySeeds.seed());
    }
}
