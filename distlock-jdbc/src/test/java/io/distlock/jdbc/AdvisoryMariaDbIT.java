package io.distlock.jdbc;

import io.distlock.testkit.AllLockContracts;
import io.distlock.testkit.MultiProcessContract;

/** Every contract, also across processes, mode ADVISORY on MARIADB. */
class AdvisoryMariaDbIT extends JdbcFixture implements AllLockContracts, MultiProcessContract {
    @Override
    TestDatabase database() {
        return TestDatabase.MARIADB;
    }

    @Override
    JdbcLockClient.Mode mode() {
        return JdbcLockClient.Mode.ADVISORY;
    }
}
