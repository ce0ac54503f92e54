package io.distlock.jdbc;

import io.distlock.testkit.AllSynchronizerContracts;
import io.distlock.testkit.AsyncSynchronizerContract;

/** Read-write locks, semaphores and latches in mode TABLE on in-process H2: every single-process contract. */
class TableSynchronizersH2IT extends JdbcFixture
        implements AllSynchronizerContracts, AsyncSynchronizerContract, LatchCallIds {
    @Override
    TestDatabase database() {
        return TestDatabase.H2_MEM;
    }

    @Override
    JdbcLockClient.Mode mode() {
        return JdbcLockClient.Mode.TABLE;
    }
}
