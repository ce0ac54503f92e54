package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLock;
import io.distlock.DistributedLockException;
import io.distlock.testkit.server.RedisServer;
import io.lettuce.core.RedisCommandTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A server that stops answering (SIGSTOP: connected, silent). A call must fail with a timeout, not wait forever, and
 * the attempt that timed out must leave nothing behind once the server answers again.
 */
class RedisUnansweredIT {
    private static final String PREFIX = "unanswered-it:";

    private static List<Throwable> causes(Throwable e) {
        List<Throwable> chain = new ArrayList<>();
        for (Throwable t = e; t != null && !chain.contains(t); t = t.getCause()) {
            chain.add(t);
        }
        return chain;
    }

    @Test
    // a call that never returns fails the test instead of hanging the build: distlock's wait is not interruptible, so
    // the timeout must not wait for the test's own thread to give up
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aSilentServer_failsTheCallWithATimeout_andTheTimedOutAttemptLeavesNothingBehind() {
        try (RedisServer server = RedisServer.started();
                RedisLockClient client = RedisLockClient.builder()
                        .uri(server.uri() + "?timeout=1s")
                        .keyPrefix(PREFIX)
                        .build()) {
            DistributedLock lock = client.lock("unanswered");
            lock.lock(); // scripts loaded, connection warm
            lock.unlock();

            server.pause();
            try {
                // Lettuce's per-command timer or distlock's own bounded wait, whichever ends first
                assertThatThrownBy(lock::tryLock)
                        .isInstanceOf(DistributedLockException.class)
                        .satisfies(e -> assertThat(causes(e))
                                .as("cause chain of %s", e)
                                .anyMatch(c ->
                                        c instanceof TimeoutException || c instanceof RedisCommandTimeoutException));
            } finally {
                server.resume();
            }
            // the timed-out attempt reached the server's socket, and the server runs it once it runs again, which may
            // grant it; the clean-up the client sent after it (on the same connection, so run after it) takes that
            // grant
            // back, and a new attempt queues behind both
            assertThat(lock.tryLock())
                    .as("free again after the server answered")
                    .isTrue();
            lock.unlock();
            assertThat(server.command("EXISTS", RedisKeys.holdKey(new KeyLayout(PREFIX), "unanswered")))
                    .isEqualTo("0");
        }
    }
}
