package io.distlock.jdbc;

/** Read-write locks in mode ROW_LOCK on PostgreSQL: see {@link SessionReadWriteCases}. */
class RowLockReadWritePostgresIT extends SessionReadWriteCases {
    @Override
    TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }

    @Override
    JdbcLockClient.Mode mode() {
        return JdbcLockClient.Mode.ROW_LOCK;
    }
}
