package io.distlock.jdbc;

import io.distlock.testkit.AllLockContracts;

/** Every contract, mode TABLE on POSTGRESQL, as a user with only the grants docs/backends/jdbc.md lists. */
class GrantsTablePostgresIT extends GrantsFixture implements AllLockContracts {
    @Override
    TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }

    @Override
    JdbcLockClient.Mode mode() {
        return JdbcLockClient.Mode.TABLE;
    }
}
