package io.distlock.jdbc;

import io.distlock.testkit.AllLockContracts;
import io.distlock.testkit.MultiProcessContract;

/**
 * Every contract, also across processes, mode ADVISORY on MARIADB, as a user holding only the grants
 * docs/backends/jdbc.md lists for the mode.
 */
class AdvisoryMariaDbIT extends GrantsFixture implements AllLockContracts, MultiProcessContract {
    @Override
    TestDatabase database() {
        return TestDatabase.MARIADB;
    }

    @Override
    JdbcLockClient.Mode mode() {
        return JdbcLockClient.Mode.ADVISORY;
    }
}
