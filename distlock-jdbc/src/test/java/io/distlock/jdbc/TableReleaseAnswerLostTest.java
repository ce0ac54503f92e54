package io.distlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.distlock.DistributedLockException;
import io.distlock.LockHold;
import io.distlock.LockLostException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

/**
 * A release (mode TABLE) whose commit the database applied but whose answer was lost: the connection fails with a
 * transient error (SQLState 08006) after the commit ran, Db retries the release, and the retry finds no row. The hold
 * was released, not lost, so the release must not throw {@link LockLostException}; it fails with a plain
 * {@link DistributedLockException} (outcome unknown), and the lock is free. An embedded in-memory H2 database with
 * one injected fault; no server.
 */
class TableReleaseAnswerLostTest {
    private final AtomicBoolean loseNextCommitAnswer = new AtomicBoolean();
    private final AtomicInteger lostAnswers = new AtomicInteger();

    private DataSource dataSource() {
        JdbcDataSource h2 = new JdbcDataSource();
        h2.setURL("jdbc:h2:mem:releaseanswerlost;DB_CLOSE_DELAY=-1");
        return (DataSource)
                Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {DataSource.class}, (p, m, args) -> {
                    Object result = invoke(m, h2, args);
                    return m.getName().equals("getConnection") ? faulty((Connection) result) : result;
                });
    }

    private Connection faulty(Connection real) {
        return (Connection)
                Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class}, (p, m, args) -> {
                    Object result = invoke(m, real, args);
                    if (m.getName().equals("commit") && loseNextCommitAnswer.compareAndSet(true, false)) {
                        lostAnswers.incrementAndGet();
                        throw new SQLException("connection reset after the commit was sent", "08006");
                    }
                    return result;
                });
    }

    private static Object invoke(Method m, Object target, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    @Test
    void releaseCommitted_answerLost_isNotReportedLost() throws Exception {
        try (JdbcLockClient client = JdbcLockClient.builder()
                .dataSource(dataSource())
                .tableName("release_answer_lost")
                .mode(JdbcLockClient.Mode.TABLE)
                .leaseTime(Duration.ofSeconds(30))
                .createSchemaIfMissing()
                .clientId("c1")
                .build()) {
            LockHold hold = client.lock("k").tryAcquire(Duration.ofSeconds(5)).orElseThrow();
            loseNextCommitAnswer.set(true);

            Throwable failure = catchThrowable(hold::release);

            assertThat(lostAnswers).as("the commit's answer was lost once").hasValue(1);
            assertThat(failure)
                    .as("a release the database applied is not a lost hold")
                    .isInstanceOf(DistributedLockException.class)
                    .isNotInstanceOf(LockLostException.class)
                    .hasMessageContaining("unknown");
            Optional<LockHold> next = client.lock("k").tryAcquire(Duration.ZERO);
            assertThat(next)
                    .as("the lock is free: the first attempt released it")
                    .isPresent();
            next.get().release();
        }
    }

    @Test
    void releaseOfAnExpiredHold_stillReportsLost() throws Exception {
        try (JdbcLockClient client = JdbcLockClient.builder()
                .dataSource(dataSource())
                .tableName("release_answer_lost_expired")
                .mode(JdbcLockClient.Mode.TABLE)
                .leaseTime(Duration.ofMillis(300))
                .createSchemaIfMissing()
                .clientId("c1")
                .build()) {
            LockHold hold = client.lock("k")
                    .tryAcquire(Duration.ofSeconds(5), Duration.ofMillis(300))
                    .orElseThrow();
            Thread.sleep(600);

            assertThat(catchThrowable(hold::release)).isInstanceOf(LockLostException.class);
        }
    }
}
