package io.distlock.jdbc;

/** Read-write locks in mode ROW_LOCK on PostgreSQL: see {@link RowLockReadWriteCases}. */
class RowLockReadWritePostgresIT extends RowLockReadWriteCases {
    @Override
    TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
