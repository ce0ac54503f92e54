package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLock;
import io.distlock.DistributedLockException;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import io.distlock.testkit.server.RedisServer;
import io.lettuce.core.KillArgs;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A server that stops answering (SIGSTOP: connected, silent). A call must fail with a timeout, not wait forever, and
 * the attempt that timed out must leave nothing behind once the server answers again.
 */
class RedisUnansweredIT {
    private static final String PREFIX = "unanswered-it:";

    /** A client whose every command is bounded by a 1 s timeout. */
    private static RedisLockClient client(RedisServer server) {
        return RedisLockClient.builder()
                .uri(server.uri() + "?timeout=1s")
                .keyPrefix(PREFIX)
                .build();
    }

    /** Lettuce's per-command timer or distlock's own bound, whichever ends first, is the cause. */
    private static void assertFailsWithTimeout(ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOf(DistributedLockException.class).satisfies(e -> assertThat(causes(e))
                .as("cause chain of %s", e)
                .anyMatch(c -> c instanceof TimeoutException || c instanceof RedisCommandTimeoutException));
    }

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
                RedisLockClient client = client(server)) {
            DistributedLock lock = client.lock("unanswered");
            lock.lock(); // scripts loaded, connection warm
            lock.unlock();

            server.pause();
            try {
                // Lettuce's per-command timer or distlock's own bounded wait, whichever ends first
                assertFailsWithTimeout(lock::tryLock);
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

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aSilentServer_failsARenewalOfManyBatches_afterOneTimeoutInAll_notOnePerBatch() {
        // the watchdog renews every hold in batches of 1,000 and holds its lock meanwhile, which every unlock of a
        // renewed hold waits for: a silent server must cost it one timeout, however many batches are on their way
        try (RedisServer server = RedisServer.started();
                RedisLockClient client = client(server)) {
            List<HeldClaim> holds = notHeld(3_500); // four batches
            assertThat(client.store().renew(holds, Duration.ofSeconds(30)))
                    .as("none of them is held")
                    .hasSize(3_500);

            server.pause();
            long took;
            try {
                long start = System.nanoTime();
                assertFailsWithTimeout(() -> client.store().renew(holds, Duration.ofSeconds(30)));
                took = System.nanoTime() - start;
            } finally {
                server.resume();
            }
            // one timeout is 1 s; one per batch would be 4 s
            assertThat(Duration.ofNanos(took)).isLessThan(Duration.ofSeconds(3));
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aSilentServer_failsARenewalOfManyBatches_withAFewOfTheFurtherFailuresKept() {
        // a watchdog tick over thousands of batches (a Cluster renews per slot) must not log thousands of traces
        try (RedisServer server = RedisServer.started();
                RedisLockClient client = client(server)) {
            List<HeldClaim> holds = notHeld(6_500); // seven batches
            server.pause();
            try {
                assertThatThrownBy(() -> client.store().renew(holds, Duration.ofSeconds(30)))
                        .isInstanceOf(DistributedLockException.class)
                        .satisfies(e -> assertThat(e.getSuppressed())
                                .as("the first batch's failure keeps 3 of the 6 further ones")
                                .hasSize(3));
            } finally {
                server.resume();
            }
        }
    }

    /** {@code n} holds (names {@code renew-0} on) of an owner that holds none of them: renewals that renew nothing. */
    private static List<HeldClaim> notHeld(int n) {
        List<HeldClaim> holds = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            holds.add(HeldClaim.lock(new LockKey("renew-" + i), new OwnerId("nobody:t1"), 1));
        }
        return holds;
    }

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void anAttemptThatTimedOutWhileDisconnected_isNeverSentAfterTheReconnect() throws Exception {
        RedisClient lettuce = RedisClient.create();
        try (RedisServer server = RedisServer.started();
                RedisLockClient client = client(server);
                StatefulRedisConnection<String, String> admin = lettuce.connect(RedisURI.create(server.uri()))) {
            KeyLayout layout = new KeyLayout(PREFIX);
            String fence = KeyLayout.key(layout.tag("offline"), KeyLayout.FENCE);
            DistributedLock warm = client.lock("warm"); // also loads the scripts, which stay loaded throughout
            warm.lock();
            warm.unlock();

            // the server stays up, but the client's command connection is dropped and cannot come back (a password
            // it does not have), so Lettuce keeps the client's new commands until it reconnects
            admin.sync().configSet("requirepass", "s3cret");
            admin.sync().clientKill(KillArgs.Builder.typeNormal().skipme());
            try {
                assertFailsWithTimeout(() -> client.lock("offline").tryLock());
            } finally {
                admin.sync().configSet("requirepass", "");
            }

            // once another attempt has been answered, everything queued before it has been sent or dropped
            DistributedLock after = client.lock("after");
            boolean answered = false;
            for (int i = 0; i < 60 && !answered; i++) {
                try {
                    answered = after.tryLock();
                } catch (DistributedLockException e) {
                    Thread.sleep(250); // still reconnecting
                }
            }
            assertThat(answered).as("the client reconnected").isTrue();
            after.unlock();
            // the timed-out attempt (and its clean-up) must have been dropped: had it been sent, its fence counter,
            // which no clean-up removes, would be here
            assertThat(admin.sync().exists(fence))
                    .as("fence counter of the timed-out attempt")
                    .isZero();
        } finally {
            lettuce.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }
}
