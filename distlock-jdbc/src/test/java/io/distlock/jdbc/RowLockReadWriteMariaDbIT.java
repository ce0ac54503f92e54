package io.distlock.jdbc;

/** Read-write locks in mode ROW_LOCK on MariaDB: see {@link RowLockReadWriteCases}. */
class RowLockReadWriteMariaDbIT extends RowLockReadWriteCases {
    @Override
    TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
