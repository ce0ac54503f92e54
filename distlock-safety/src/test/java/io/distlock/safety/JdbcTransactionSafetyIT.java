package io.distlock.safety;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * J6, holders' own transactions around session locks, on the machine's MariaDB and PostgreSQL in the two session
 * modes: ADVISORY ({@code GET_LOCK}, {@code pg_try_advisory_lock}) and ROW_LOCK (a row locked in a transaction the
 * client keeps open on its pinned connection).
 */
class JdbcTransactionSafetyIT {
    static JdbcStores.Database mariadbAdvisory;
    static JdbcStores.Database postgresAdvisory;
    static JdbcStores.Database mariadbRowLock;
    static JdbcStores.Database postgresRowLock;

    @BeforeAll
    static void start() {
        mariadbAdvisory = new JdbcStores.Database(JdbcStores.Db.MARIADB, "ADVISORY");
        postgresAdvisory = new JdbcStores.Database(JdbcStores.Db.POSTGRESQL, "ADVISORY");
        mariadbRowLock = new JdbcStores.Database(JdbcStores.Db.MARIADB, "ROW_LOCK");
        postgresRowLock = new JdbcStores.Database(JdbcStores.Db.POSTGRESQL, "ROW_LOCK");
    }

    @AfterAll
    static void stop() {
        mariadbAdvisory.close();
        postgresAdvisory.close();
        mariadbRowLock.close();
        postgresRowLock.close();
    }

    @Test
    @Tag("tier2")
    void j6_transactions_mariadbAdvisory() throws Exception {
        JdbcTransactionScenarios.j6Transactions(mariadbAdvisory, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void j6_transactions_postgresAdvisory() throws Exception {
        JdbcTransactionScenarios.j6Transactions(postgresAdvisory, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void j6_transactions_mariadbRowLock() throws Exception {
        JdbcTransactionScenarios.j6Transactions(mariadbRowLock, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void j6_transactions_postgresRowLock() throws Exception {
        JdbcTransactionScenarios.j6Transactions(postgresRowLock, SafetySeeds.seed());
    }
}
