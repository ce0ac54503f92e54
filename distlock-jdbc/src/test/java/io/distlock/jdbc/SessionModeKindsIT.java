package io.distlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedCountDownLatch;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The session modes (ROW_LOCK, ADVISORY) on PostgreSQL and MariaDB: read-write locks and semaphores are refused at
 * once with an UnsupportedOperationException that names the mode and the one that serves them, and count-down
 * latches work as in mode TABLE (same tables and statements, so one pass of the latch's steps here).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SessionModeKindsIT {
    private final List<TestDatabase.Env> envs = new ArrayList<>();

    @AfterAll
    void stop() {
        envs.forEach(TestDatabase.Env::close);
    }

    static List<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        for (TestDatabase db : List.of(TestDatabase.POSTGRESQL, TestDatabase.MARIADB)) {
            for (JdbcLockClient.Mode mode : List.of(JdbcLockClient.Mode.ROW_LOCK, JdbcLockClient.Mode.ADVISORY)) {
                out.add(Arguments.of(db, mode));
            }
        }
        return out;
    }

    private JdbcLockClient client(TestDatabase db, JdbcLockClient.Mode mode) {
        TestDatabase.Env env = db.start(SessionModeKindsIT.class);
        envs.add(env);
        return JdbcLockClient.builder()
                .dataSource(env.pool)
                .tableName(env.table)
                .mode(mode)
                .createSchemaIfMissing()
                .build();
    }

    @ParameterizedTest
    @MethodSource("cases")
    void readWriteLocksAndSemaphores_refusedNamingTheModeThatServesThem(TestDatabase db, JdbcLockClient.Mode mode) {
        try (JdbcLockClient client = client(db, mode)) {
            assertThatThrownBy(() -> client.readWriteLock("rw"))
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("read-write locks")
                    .hasMessageContaining("mode " + mode)
                    .hasMessageContaining("Mode.TABLE");
            assertThatThrownBy(() -> client.semaphore("s", 2))
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("semaphores")
                    .hasMessageContaining("mode " + mode)
                    .hasMessageContaining("Mode.TABLE");
            assertThat(client.lock("l").tryLock()).as("locks still work").isTrue();
            client.lock("l").unlock();
        }
    }

    @ParameterizedTest
    @MethodSource("cases")
    void latches_work(TestDatabase db, JdbcLockClient.Mode mode) throws Exception {
        try (JdbcLockClient a = client(db, mode)) {
            DistributedCountDownLatch latch = a.countDownLatch("latch");
            assertThat(latch.trySetCount(2)).isTrue();
            assertThat(latch.trySetCount(5)).isFalse();
            latch.countDown();
            assertThat(latch.getCount()).isEqualTo(1);
            assertThat(latch.await(Duration.ofMillis(50))).isFalse();
            Thread opener = new Thread(latch::countDown);
            opener.start();
            assertThat(latch.await(Duration.ofSeconds(10))).isTrue();
            opener.join();
            assertThat(latch.getCount()).isZero();
        }
    }
}
