package io.distlock.safety;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.distlock.testkit.Timing;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * J4 (G9 on the databases): a MariaDB and a PostgreSQL server of the suite's own (see {@link DatabaseServer}), each
 * killed with SIGKILL (J4) or stopped cleanly (J4-stop) under load and started again with its data, in the
 * lock-table mode and under session locks.
 * Tier 2; the servers and their directories are deleted at the end.
 */
@Tag("tier2")
class DatabaseRestartSafetyIT {
    static DatabaseServer mariadb;
    static DatabaseServer postgres;

    @BeforeAll
    static void start() {
        assumeTrue(DatabaseServer.available(JdbcStores.Db.MARIADB), "mariadbd is not installed");
        assumeTrue(DatabaseServer.available(JdbcStores.Db.POSTGRESQL), "postgres is not installed");
        mariadb = DatabaseServer.start(JdbcStores.Db.MARIADB, Map.of(), Timing.seconds(120));
        postgres = DatabaseServer.start(JdbcStores.Db.POSTGRESQL, Map.of(), Timing.seconds(120));
        System.out.println("SERVERS " + mariadb + "; " + postgres);
    }

    @AfterAll
    static void stop() {
        if (mariadb != null) {
            mariadb.close();
        }
        if (postgres != null) {
            postgres.close();
        }
    }

    private static void restart(DatabaseServer server, String mode) throws Exception {
        restart(server, mode, false);
    }

    private static void restart(DatabaseServer server, String mode, boolean graceful) throws Exception {
        try (JdbcStores.Database store = new JdbcStores.Database(server.db, mode, server.port)) {
            ServerFaultScenarios.j4DatabaseRestart(store, server, SafetySeeds.seed(), Duration.ofSeconds(1), graceful);
        }
    }

    @Test
    void j4_mariadb_table() throws Exception {
        restart(mariadb, "TABLE");
    }

    @Test
    void j4_mariadb_sessionLocks() throws Exception {
        restart(mariadb, "ADVISORY");
    }

    @Test
    void j4_postgresql_table() throws Exception {
        restart(postgres, "TABLE");
    }

    @Test
    void j4_postgresql_sessionLocks() throws Exception {
        restart(postgres, "ADVISORY");
    }

    @Test
    void j4stop_mariadb_table() throws Exception {
        restart(mariadb, "TABLE", true);
    }

    @Test
    void j4stop_mariadb_sessionLocks() throws Exception {
        restart(mariadb, "ADVISORY", true);
    }

    @Test
    void j4stop_postgresql_table() throws Exception {
        restart(postgres, "TABLE", true);
    }

    @Test
    void j4stop_postgresql_sessionLocks() throws Exception {
        restart(postgres, "ADVISORY", true);
    }

    @Test
    void j4_mariadb_rowLock() throws Exception {
        restart(mariadb, "ROW_LOCK", false);
    }

    @Test
    void j4_postgresql_rowLock() throws Exception {
        restart(postgres, "ROW_LOCK", false);
    }

    @Test
    void j4stop_mariadb_rowLock() throws Exception {
        restart(mariadb, "ROW_LOCK", true);
    }

    @Test
    void j4stop_postgresql_rowLock() throws Exception {
        restart(postgres, "ROW_LOCK", true);
    }
}
