package io.distlock.jdbc;

import io.distlock.testkit.AllLockContracts;
import io.distlock.testkit.MultiProcessContract;

/** Every contract, also across processes, mode TABLE on H2_SERVER. */
class TableH2ServerIT extends JdbcFixture implements AllLockContracts, MultiProcessContract {
    @Override
    TestDatabase database() {
        return TestDatabase.H2_SERVER;
    }

    @Override
    JdbcLockClient.Mode mode() {
        return JdbcLockClient.Mode.TABLE;
    }
}
