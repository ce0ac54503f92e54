package io.distlock.jdbc;

import io.distlock.LockClient;
import io.distlock.testkit.SemaphoreAsLock;
import java.time.Duration;

/**
 * The whole lock contract on one-permit semaphores of mode TABLE, on in-process H2 (the SQL is the same on every database; the
 * lock contract's database-specific cases run on locks in the Table*IT classes).
 */
class TableSemaphoreAsLockIT extends JdbcFixture implements SemaphoreAsLock {
    @Override
    TestDatabase database() {
        return TestDatabase.H2_MEM;
    }

    @Override
    JdbcLockClient.Mode mode() {
        return JdbcLockClient.Mode.TABLE;
    }

    @Override
    public LockClient createBackendClient(Duration watchdogLease) {
        return super.createClient(watchdogLease);
    }

    @Override
    public LockClient createClient(Duration watchdogLease) {
        return new SemaphoreAsLock.Client(createBackendClient(watchdogLease));
    }
}
