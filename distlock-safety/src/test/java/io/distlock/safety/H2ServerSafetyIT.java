package io.distlock.safety;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Tier-1 scenarios on an H2 TCP server (lock-table mode; H2 has no session locks), a proxy per client. */
@Tag("tier1")
class H2ServerSafetyIT {
    static JdbcStores.Database store;

    @BeforeAll
    static void start() {
        store = new JdbcStores.Database(JdbcStores.Db.H2, "TABLE");
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
    void x1_interruptedWaits() throws Exception {
        Tier1Scenarios.x1InterruptedWaits(store, SafetySeeds.seed());
    }
}
