package io.distlock.safety;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * J3 (the pool retires the lock's connections during holds) on the machine's MariaDB and PostgreSQL servers, in each
 * mode: ADVISORY and ROW_LOCK pin a connection for the whole hold, TABLE borrows one per statement.
 */
class JdbcPoolSafetyIT {
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({
        "MARIADB, ADVISORY",
        "MARIADB, ROW_LOCK",
        "MARIADB, TABLE",
        "POSTGRESQL, ADVISORY",
        "POSTGRESQL, ROW_LOCK",
        "POSTGRESQL, TABLE"
    })
    @Tag("tier2")
    void j3_poolEvictions(JdbcStores.Db db, String mode) throws Exception {
        try (JdbcStores.Database store = new JdbcStores.Database(db, mode)) {
            JdbcPoolScenarios.j3PoolEvictions(store, SafetySeeds.seed());
        }
    }

    /** J3 on clients that grant busy locks (MariaDB, ADVISORY): the checker must fail it on S1. */
    @Test
    @Tag("tier2")
    void j3_brokenClientsAreCaught() throws Exception {
        try (JdbcStores.Database store = new JdbcStores.Database(JdbcStores.Db.MARIADB, "ADVISORY")) {
            AssertionError e = assertThrows(
                    AssertionError.class, () -> JdbcPoolScenarios.j3PoolEvictions(store, SafetySeeds.seed(), true));
            assertThat(e.getMessage()).contains("S1");
        }
    }
}
