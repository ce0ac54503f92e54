package io.distlock.jdbc;

import io.distlock.testkit.AllLockContracts;

/** Every contract, mode ADVISORY on MARIADB, as a user with only the grants docs/backends/jdbc.md lists. */
class GrantsAdvisoryMariaDbIT extends GrantsFixture implements AllLockContracts {
    @Override
    TestDatabase database() {
        return TestDatabase.MARIADB;
    }

    @Override
    JdbcLockClient.Mode mode() {
        return JdbcLockClient.Mode.ADVISORY;
    }
}
