package io.distlock.jdbc;

import io.distlock.LockClient;
import io.distlock.testkit.WriteLockAsLock;
import java.time.Duration;

/**
 * The whole lock contract on write locks of mode ROW_LOCK on MariaDB (the name's row locked FOR UPDATE NOWAIT, ordered
 * by the queue table), as a user holding only the grants docs/backends/jdbc.md lists for the mode.
 */
class RowLockWriteLockAsLockMariaDbIT extends GrantsFixture implements WriteLockAsLock {
    @Override
    TestDatabase database() {
        return TestDatabase.MARIADB;
    }

    @Override
    JdbcLockClient.Mode mode() {
        return JdbcLockClient.Mode.ROW_LOCK;
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
