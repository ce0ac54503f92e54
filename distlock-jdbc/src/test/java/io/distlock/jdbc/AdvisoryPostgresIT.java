package io.distlock.jdbc;

import io.distlock.testkit.AllLockContracts;

/** Every contract, mode ADVISORY on POSTGRESQL. */
class AdvisoryPostgresIT extends JdbcFixture implements AllLockContracts {
    @Override
    TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }

    @Override
    JdbcLockClient.Mode mode() {
        return JdbcLockClient.Mode.ADVISORY;
    }
}
