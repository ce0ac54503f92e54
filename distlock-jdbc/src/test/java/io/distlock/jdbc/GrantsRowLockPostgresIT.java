package io.distlock.jdbc;

import io.distlock.testkit.AllLockContracts;

/** Every contract, mode ROW_LOCK on POSTGRESQL, as a user with only the grants docs/backends/jdbc.md lists. */
class GrantsRowLockPostgresIT extends GrantsFixture implements AllLockContracts {
    @Override
    TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }

    @Override
    JdbcLockClient.Mode mode() {
        return JdbcLockClient.Mode.ROW_LOCK;
    }
}
