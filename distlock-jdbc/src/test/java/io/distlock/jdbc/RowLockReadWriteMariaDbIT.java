package io.distlock.jdbc;

/** Read-write locks in mode ROW_LOCK on MariaDB: see {@link SessionReadWriteCases}. */
class RowLockReadWriteMariaDbIT extends SessionReadWriteCases {
    @Override
    TestDatabase database() {
        return TestDatabase.MARIADB;
    }

    @Override
    JdbcLockClient.Mode mode() {
        return JdbcLockClient.Mode.ROW_LOCK;
    }
}
