package io.distlock.jdbc;

import io.distlock.testkit.AllLockContracts;
import io.distlock.testkit.MultiProcessContract;

/** Every contract, also across processes, mode TABLE on POSTGRESQL. */
class TablePostgresIT extends JdbcFixture implements AllLockContracts, MultiProcessContract {
    @Override
    TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }

    @Override
    JdbcLockClient.Mode mode() {
        return JdbcLockClient.Mode.TABLE;
    }
}
