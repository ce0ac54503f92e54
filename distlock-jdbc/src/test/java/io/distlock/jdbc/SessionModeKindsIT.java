package io.distlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedCountDownLatch;
import io.distlock.DistributedReadWriteLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The session modes (ROW_LOCK, ADVISORY) on PostgreSQL and MariaDB: semaphores are refused at once in both, and
 * read-write locks only in ADVISORY on MariaDB (GET_LOCK has no shared mode; the contracts of the others run in {@link
 * AdvisoryReadWritePostgresIT} and {@link SessionReadWriteCases}), with an UnsupportedOperationException that names the
 * mode, the database, why, and the mode that serves them; count-down latches work as in mode TABLE (same tables and statements, so one pass of the
 * latch's steps here).
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

    private static boolean keepsReadWriteLocks(TestDatabase db, JdbcLockClient.Mode mode) {
        return db == TestDatabase.POSTGRESQL || mode == JdbcLockClient.Mode.ROW_LOCK;
    }

    @ParameterizedTest
    @MethodSource("cases")
    void semaphores_refusedNamingTheModeThatServesThem(TestDatabase db, JdbcLockClient.Mode mode) {
        try (JdbcLockClient client = client(db, mode)) {
            assertThatThrownBy(() -> client.semaphore("s", 2))
                    .isExactlyInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("semaphores are not available in mode " + mode)
                    .hasMessageContaining("every permit would pin a connection")
                    .hasMessageContaining("Mode.TABLE");
            assertThat(client.lock("l").tryLock()).as("locks still work").isTrue();
            client.lock("l").unlock();
        }
    }

    @ParameterizedTest
    @MethodSource("cases")
    void readWriteLocks_keptButByMariaDbAdvisory_refusedThere_namingWhyAndTheModes(
            TestDatabase db, JdbcLockClient.Mode mode) {
        try (JdbcLockClient client = client(db, mode)) {
            if (keepsReadWriteLocks(db, mode)) {
                DistributedReadWriteLock rw = client.readWriteLock("rw");
                assertThat(rw.readLock().tryLock()).as("a read hold").isTrue();
                rw.readLock().unlock();
                assertThat(rw.writeLock().tryLock()).as("a write hold").isTrue();
                rw.writeLock().unlock();
                return;
            }
            assertThatThrownBy(() -> client.readWriteLock("rw"))
                    .isExactlyInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("read-write locks are not available in mode " + mode + " on ")
                    .hasMessageContaining("GET_LOCK on mariadb has no shared mode")
                    .hasMessageContaining("mode ADVISORY keeps them on PostgreSQL only")
                    .hasMessageContaining("mode ROW_LOCK on PostgreSQL and MariaDB")
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
