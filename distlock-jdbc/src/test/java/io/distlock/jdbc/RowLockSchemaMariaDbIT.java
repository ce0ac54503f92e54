package io.distlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.distlock.LockHold;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * On MariaDB, a ROW_LOCK hold keeps open the transaction that took its token from the fencing sequence, and with it a
 * metadata lock on the sequence: a client built with {@code createSchemaIfMissing()} meanwhile must not wait for it
 * ({@code CREATE SEQUENCE IF NOT EXISTS} on an existing sequence waits for an exclusive metadata lock, up to {@code
 * lock_wait_timeout}, a day by default). Found by the safety suite's X1 on mariadb-row-lock, which hung there.
 */
class RowLockSchemaMariaDbIT {
    @Test
    void aClientIsBuiltWhileAnotherHoldsARowLock() throws Exception {
        try (TestDatabase.Env env = TestDatabase.MARIADB.start(RowLockSchemaMariaDbIT.class);
                JdbcLockClient holder = builder(env).build()) {
            LockHold hold = holder.lock("a").tryAcquire(Duration.ofSeconds(5)).orElseThrow();
            try {
                JdbcLockClient second = assertTimeoutPreemptively(
                        Duration.ofSeconds(20), () -> builder(env).build(), "building a client waited for the hold");
                try (second) {
                    assertThat(second.lock("a").tryAcquire(Duration.ZERO)).isEmpty();
                }
            } finally {
                hold.release();
            }
        }
    }

    private static JdbcLockClient.Builder builder(TestDatabase.Env env) {
        return JdbcLockClient.builder()
                .dataSource(env.pool)
                .tableName(env.table)
                .mode(JdbcLockClient.Mode.ROW_LOCK)
                .createSchemaIfMissing();
    }
}
