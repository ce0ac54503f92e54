package io.distlock.jdbc;

import io.distlock.testkit.MultiProcessSynchronizerContract;

/**
 * Read-write locks, semaphores and latches in mode TABLE on an H2 TCP server, shared with child JVMs: every
 * multi-process case ({@link TableSynchronizersH2IT} runs the single-process contracts on the same SQL in-process).
 */
class TableSynchronizersH2ServerIT extends JdbcFixture implements MultiProcessSynchronizerContract {
    @Override
    TestDatabase database() {
        return TestDatabase.H2_SERVER;
    }

    @Override
    JdbcLockClient.Mode mode() {
        return JdbcLockClient.Mode.TABLE;
    }
}
