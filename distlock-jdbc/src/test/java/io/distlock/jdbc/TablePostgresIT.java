package io.distlock.jdbc;

import io.distlock.testkit.AllLockContracts;
import io.distlock.testkit.AsyncContract;
import io.distlock.testkit.MultiProcessContract;

/**
 * Every contract, also across processes, mode TABLE on POSTGRESQL, as a user holding only the grants
 * docs/backends/jdbc.md lists for the mode.
 */
class TablePostgresIT extends GrantsFixture implements AllLockContracts, MultiProcessContract, AsyncContract {
    @Override
    TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }

    @Override
    JdbcLockClient.Mode mode() {
        return JdbcLockClient.Mode.TABLE;
    }
}
