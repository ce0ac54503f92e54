package io.distlock.safety;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Tier-1 scenarios on the machine's MariaDB server (scripts/services.sh): the lock-table mode through a proxy per
 * client, and J1 (a killed session) on the session-lock mode (advisory locks).
 */
@Tag("tier1")
class MariaDbSafetyIT {
    static JdbcStores.Database table;
    static JdbcStores.Database advisory;

    @BeforeAll
    static void start() {
        table = new JdbcStores.Database(JdbcStores.Db.MARIADB, "TABLE");
        advisory = new JdbcStores.Database(JdbcStores.Db.MARIADB, "ADVISORY");
    }

    @AfterAll
    static void stop() {
        table.close();
        advisory.close();
    }

    @Test
    void g1_baseline() throws Exception {
        Tier1Scenarios.g1Baseline(table, SafetySeeds.seed());
    }

    @Test
    void g3_holderKilled() throws Exception {
        Tier1Scenarios.g3HolderKilled(table, SafetySeeds.seed());
    }

    @Test
    void g5_acquireReplyLost() throws Exception {
        Tier1Scenarios.g5AcquireReplyLost(table, SafetySeeds.seed());
    }

    @Test
    void x1_interruptedWaits() throws Exception {
        Tier1Scenarios.x1InterruptedWaits(table, SafetySeeds.seed());
    }

    @Test
    void g3_holderKilled_sessionLocks() throws Exception {
        Tier1Scenarios.g3HolderKilled(advisory, SafetySeeds.seed());
    }

    @Test
    void j1_holdersSessionKilled() throws Exception {
        Tier1Scenarios.j1SessionKilled(advisory, SafetySeeds.seed());
    }
}
