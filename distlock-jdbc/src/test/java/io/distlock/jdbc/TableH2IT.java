package io.distlock.jdbc;

import io.distlock.testkit.AllLockContracts;

/** Every contract, mode TABLE on H2_MEM. */
class TableH2IT extends JdbcFixture implements AllLockContracts {
    @Override
    TestDatabase database() {
        return TestDatabase.H2_MEM;
    }

    @Override
    JdbcLockClient.Mode mode() {
        return JdbcLockClient.Mode.TABLE;
    }
}
