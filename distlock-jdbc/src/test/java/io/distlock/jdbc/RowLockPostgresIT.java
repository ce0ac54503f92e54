package io.distlock.jdbc;

import io.distlock.testkit.AllLockContracts;
import io.distlock.testkit.MultiProcessContract;

/**
 * Every contract, also across processes, mode ROW_LOCK on POSTGRESQL, as a user holding only the grants
 * docs/backends/jdbc.md lists for the mode.
 */
class RowLockPostgresIT extends GrantsFixture implements AllLockContracts, MultiProcessContract {
    @Override
    TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }

    @Override
    JdbcLockClient.Mode mode() {
        return JdbcLockClient.Mode.ROW_LOCK;
    }
}
