package io.distlock.jdbc;

import io.distlock.testkit.AllLockContracts;

/** Every contract, mode ROW_LOCK on POSTGRESQL. */
class RowLockPostgresIT extends JdbcFixture implements AllLockContracts {
    @Override
    TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }

    @Override
    JdbcLockClient.Mode mode() {
        return JdbcLockClient.Mode.ROW_LOCK;
    }
}
