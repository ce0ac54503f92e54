package io.distlock.jdbc;

import io.distlock.testkit.AllLockContracts;
import io.distlock.testkit.MultiProcessContract;

/** Every contract, also across processes, mode ADVISORY on POSTGRESQL. */
class AdvisoryPostgresIT extends JdbcFixture implements AllLockContracts, MultiProcessContract {
    @Override
    TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }

    @Override
    JdbcLockClient.Mode mode() {
        return JdbcLockClient.Mode.ADVISORY;
    }
}
