package io.distlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.distlock.DistributedLockException;
import io.distlock.LockHold;
import io.distlock.LockLostException;
import java.time.Duration;
import java.util.Optional;
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
    private final LostCommitAnswers answers = new LostCommitAnswers(h2());

    private static DataSource h2() {
        JdbcDataSource h2 = new JdbcDataSource();
        h2.setURL("jdbc:h2:mem:releaseanswerlost;DB_CLOSE_DELAY=-1");
        return h2;
    }

    @Test
    void releaseCommitted_answerLost_isNotReportedLost() throws Exception {
        try (JdbcLockClient client = JdbcLockClient.builder()
                .dataSource(answers.dataSource)
                .tableName("release_answer_lost")
                .mode(JdbcLockClient.Mode.TABLE)
                .leaseTime(Duration.ofSeconds(30))
                .createSchemaIfMissing()
                .clientId("c1")
                .build()) {
            LockHold hold = client.lock("k").tryAcquire(Duration.ofSeconds(5)).orElseThrow();
            answers.loseNext();

            Throwable failure = catchThrowable(hold::release);

            assertThat(answers.lost()).as("the commit's answer was lost once").isEqualTo(1);
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
                .dataSource(answers.dataSource)
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
