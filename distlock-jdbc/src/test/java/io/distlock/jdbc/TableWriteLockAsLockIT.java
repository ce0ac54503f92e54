package io.distlock.jdbc;

import io.distlock.LockClient;
import io.distlock.testkit.WriteLockAsLock;
import java.time.Duration;

/**
 * The whole lock contract on write locks of mode TABLE, on in-process H2 (the SQL is the same on every database; the
 * lock contract's database-specific cases run on locks in the Table*IT classes).
 */
class TableWriteLockAsLockIT extends JdbcFixture implements WriteLockAsLock {
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
        return new WriteLockAsLock.Client(createBackendClient(watchdogLease));
    }
}
