package io.distlock.safety;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The JDBC backend's ROW_LOCK mode ({@code SELECT ... FOR UPDATE NOWAIT} in a transaction kept open on a pinned
 * connection) on the machine's MariaDB and PostgreSQL servers: the columns {@code mariadb-row-lock} and {@code
 * postgresql-row-lock}. R2 does not apply: the mode refuses {@code forceUnlock} of another client's hold.
 */
class JdbcRowLockSafetyIT {
    static JdbcStores.Database mariadb;
    static JdbcStores.Database postgres;

    @BeforeAll
    static void start() {
        mariadb = new JdbcStores.Database(JdbcStores.Db.MARIADB, "ROW_LOCK");
        postgres = new JdbcStores.Database(JdbcStores.Db.POSTGRESQL, "ROW_LOCK");
    }

    @AfterAll
    static void stop() {
        mariadb.close();
        postgres.close();
    }

    @Test
    @Tag("tier1")
    void g1_baseline_mariadb() throws Exception {
        Tier1Scenarios.g1Baseline(mariadb, SafetySeeds.seed());
    }

    @Test
    @Tag("tier1")
    void g3_holderKilled_mariadb() throws Exception {
        Tier1Scenarios.g3HolderKilled(mariadb, SafetySeeds.seed());
    }

    @Test
    @Tag("tier1")
    void x1_interruptedWaits_mariadb() throws Exception {
        Tier1Scenarios.x1InterruptedWaits(mariadb, SafetySeeds.seed());
    }

    @Test
    @Tag("tier1")
    void g1_baseline_postgres() throws Exception {
        Tier1Scenarios.g1Baseline(postgres, SafetySeeds.seed());
    }

    @Test
    @Tag("tier1")
    void g3_holderKilled_postgres() throws Exception {
        Tier1Scenarios.g3HolderKilled(postgres, SafetySeeds.seed());
    }

    @Test
    @Tag("tier1")
    void x1_interruptedWaits_postgres() throws Exception {
        Tier1Scenarios.x1InterruptedWaits(postgres, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void g4_holderBlackholed_mariadb() throws Exception {
        Tier2Scenarios.g4HolderBlackholed(mariadb, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void g4_holderBlackholed_postgres() throws Exception {
        Tier2Scenarios.g4HolderBlackholed(postgres, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void g6_releaseReplyLost_mariadb() throws Exception {
        ReleaseFaultScenarios.g6ReleaseReplyLost(mariadb, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void g6_releaseReplyLost_mariadb_writeLock() throws Exception {
        ReleaseFaultScenarios.g6ReleaseReplyLost(
                mariadb, SafetySeeds.seed(), ReleaseFaultScenarios.Primitive.WRITE_LOCK);
    }

    @Test
    @Tag("tier2")
    void g6_releaseReplyLost_mariadb_permit() throws Exception {
        ReleaseFaultScenarios.g6ReleaseReplyLost(mariadb, SafetySeeds.seed(), ReleaseFaultScenarios.Primitive.PERMIT);
    }

    @Test
    @Tag("tier2")
    void g6_releaseReplyLost_postgres() throws Exception {
        ReleaseFaultScenarios.g6ReleaseReplyLost(postgres, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void g6_releaseReplyLost_postgres_writeLock() throws Exception {
        ReleaseFaultScenarios.g6ReleaseReplyLost(
                postgres, SafetySeeds.seed(), ReleaseFaultScenarios.Primitive.WRITE_LOCK);
    }

    @Test
    @Tag("tier2")
    void g6_releaseReplyLost_postgres_permit() throws Exception {
        ReleaseFaultScenarios.g6ReleaseReplyLost(postgres, SafetySeeds.seed(), ReleaseFaultScenarios.Primitive.PERMIT);
    }

    @Test
    @Tag("tier2")
    void j1_holdersSessionKilled_mariadb() throws Exception {
        Tier1Scenarios.j1SessionKilled(mariadb, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void j1_holdersSessionKilled_postgres() throws Exception {
        Tier1Scenarios.j1SessionKilled(postgres, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void g5_acquireReplyLost_mariadb() throws Exception {
        Tier1Scenarios.g5AcquireReplyLost(mariadb, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void g7_degradedNetwork_mariadb() throws Exception {
        Tier2Scenarios.g7DegradedNetwork(mariadb, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void k1_clientClockJumps_mariadb() throws Exception {
        Tier2Scenarios.k1ClientClockJumps(mariadb, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void g5_acquireReplyLost_postgres() throws Exception {
        Tier1Scenarios.g5AcquireReplyLost(postgres, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void g7_degradedNetwork_postgres() throws Exception {
        Tier2Scenarios.g7DegradedNetwork(postgres, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void k1_clientClockJumps_postgres() throws Exception {
        Tier2Scenarios.k1ClientClockJumps(postgres, SafetySeeds.seed());
    }

    /** The client-fault and scale scenarios on ROW_LOCK, MariaDB. */
    @org.junit.jupiter.api.Nested
    class MariaDbClientFaults implements ClientFaultTests {
        @Override
        public Store clientFaultStore() {
            return mariadb;
        }
    }

    /** The client-fault and scale scenarios on ROW_LOCK, PostgreSQL. */
    @org.junit.jupiter.api.Nested
    class PostgresClientFaults implements ClientFaultTests {
        @Override
        public Store clientFaultStore() {
            return postgres;
        }
    }

    @Test
    @Tag("tier2")
    void g11_soak_mariadb() throws Exception {
        Tier2Scenarios.g11Soak(mariadb, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void g11_soak_postgres() throws Exception {
        Tier2Scenarios.g11Soak(postgres, SafetySeeds.seed());
    }
}
