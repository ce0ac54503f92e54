package io.distlock.jdbc;

import io.distlock.testkit.AllLockContracts;

/** Every contract, mode TABLE on MARIADB. */
class TableMariaDbIT extends JdbcFixture implements AllLockContracts {
    @Override
    TestDatabase database() {
        return TestDatabase.MARIADB;
    }

    @Override
    JdbcLockClient.Mode mode() {
        return JdbcLockClient.Mode.TABLE;
    }
}
