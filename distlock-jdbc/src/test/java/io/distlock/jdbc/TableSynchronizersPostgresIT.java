package io.distlock.jdbc;

import io.distlock.testkit.AllSynchronizerContracts;
import io.distlock.testkit.AsyncSynchronizerContract;
import io.distlock.testkit.MultiProcessSynchronizerContract;

/**
 * Read-write locks, semaphores and count-down latches in mode TABLE on PostgreSQL: every contract, also across
 * processes. The SQL is the same on every database but for the clock and the sequence, so the other databases run
 * the cases where those and the database's locking differ ({@link KeySynchronizerCases}).
 */
class TableSynchronizersPostgresIT extends GrantsFixture
        implements AllSynchronizerContracts, MultiProcessSynchronizerContract, AsyncSynchronizerContract, LatchCallIds {
    @Override
    TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }

    @Override
    JdbcLockClient.Mode mode() {
        return JdbcLockClient.Mode.TABLE;
    }
}
