package io.distlock.jdbc;

import io.distlock.testkit.AllLockContracts;

/** Every contract, mode TABLE on POSTGRESQL. */
class TablePostgresIT extends JdbcFixture implements AllLockContracts {
    @Override
    TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }

    @Override
    JdbcLockClient.Mode mode() {
        return JdbcLockClient.Mode.TABLE;
    }
}
