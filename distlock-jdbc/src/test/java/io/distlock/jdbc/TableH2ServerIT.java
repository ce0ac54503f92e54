package io.distlock.jdbc;

import io.distlock.testkit.AllLockContracts;

/** Every contract, mode TABLE on H2_SERVER. */
class TableH2ServerIT extends JdbcFixture implements AllLockContracts {
    @Override
    TestDatabase database() {
        return TestDatabase.H2_SERVER;
    }

    @Override
    JdbcLockClient.Mode mode() {
        return JdbcLockClient.Mode.TABLE;
    }
}
