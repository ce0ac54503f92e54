package io.distlock.jdbc;

import io.distlock.testkit.AllLockContracts;

/** Every contract, mode ROW_LOCK on MARIADB. */
class RowLockMariaDbIT extends JdbcFixture implements AllLockContracts {
    @Override
    TestDatabase database() {
        return TestDatabase.MARIADB;
    }

    @Override
    JdbcLockClient.Mode mode() {
        return JdbcLockClient.Mode.ROW_LOCK;
    }
}
