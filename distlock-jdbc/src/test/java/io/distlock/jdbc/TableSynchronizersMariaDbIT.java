package io.distlock.jdbc;

/** Read-write locks, semaphores and latches in mode TABLE on MariaDB: the cases where databases differ. */
class TableSynchronizersMariaDbIT extends KeySynchronizerCases {
    @Override
    TestDatabase database() {
        return TestDatabase.MARIADB;
    }

    @Override
    JdbcLockClient.Mode mode() {
        return JdbcLockClient.Mode.TABLE;
    }
}
