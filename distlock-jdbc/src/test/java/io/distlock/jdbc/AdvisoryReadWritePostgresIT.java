package io.distlock.jdbc;

/** Read-write locks in mode ADVISORY on PostgreSQL: see {@link SessionReadWriteCases}. */
class AdvisoryReadWritePostgresIT extends SessionReadWriteCases {
    @Override
    TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }

    @Override
    JdbcLockClient.Mode mode() {
        return JdbcLockClient.Mode.ADVISORY;
    }

    @Override
    boolean inspectSeesEveryHolder() {
        return true;
    }
}
