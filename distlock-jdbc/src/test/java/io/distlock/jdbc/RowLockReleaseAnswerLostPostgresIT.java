package io.distlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.distlock.DistributedLockException;
import io.distlock.LockHold;
import io.distlock.LockLostException;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Mode ROW_LOCK on PostgreSQL: a release deletes the hold's row and commits the transaction that is the hold. When
 * that commit fails once sent ({@link LostCommitAnswers}), it may have been applied, so the release must not answer
 * "lost" ({@link LockLostException}, which says the hold ended before the release): it fails with a plain {@link
 * DistributedLockException}, outcome unknown, and the lock is free (the commit released it; had it not, the session
 * would end with the connection the client drops).
 */
class RowLockReleaseAnswerLostPostgresIT {
    static TestDatabase.Env env;

    @BeforeAll
    static void start() {
        env = TestDatabase.POSTGRESQL.start(RowLockReleaseAnswerLostPostgresIT.class);
    }

    @AfterAll
    static void stop() {
        env.close();
    }

    @Test
    void releaseCommitted_answerLost_isNotReportedLost() throws Exception {
        LostCommitAnswers answers = new LostCommitAnswers(env.pool);
        try (JdbcLockClient client = JdbcLockClient.builder()
                .dataSource(answers.dataSource)
                .tableName(env.table)
                .mode(JdbcLockClient.Mode.ROW_LOCK)
                .createSchemaIfMissing()
                .build()) {
            LockHold hold = client.lock("k").tryAcquire(Duration.ofSeconds(5)).orElseThrow();
            answers.loseNext();

            Throwable failure = catchThrowable(hold::release);

            assertThat(answers.lost()).as("the commit's answer was lost once").isEqualTo(1);
            assertThat(failure)
                    .as("a release whose commit may have been applied is not a lost hold")
                    .isInstanceOf(DistributedLockException.class)
                    .isNotInstanceOf(LockLostException.class)
                    .hasMessageContaining("unknown");
            Optional<LockHold> next = client.lock("k").tryAcquire(Duration.ofSeconds(5));
            assertThat(next).as("the lock is free").isPresent();
            next.get().release();
        }
    }
}
