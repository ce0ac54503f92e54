package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.PermitHold;
import io.distlock.testkit.Timing;
import io.distlock.testkit.server.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What a release of a semaphore's permit costs when several waiters wait: the release's wake-up names the waiter it
 * lets pass, and only that waiter tries again (one script), however many waiters there are; a release with a waiter of
 * its own client in the queue hands the permit to it in the release's script. The server's own command counters (on a
 * redis-server this class starts, with nothing else talking to it) count the scripts.
 */
class RedisClaimWakeUpsIT {
    @RegisterExtension
    static final RedisServer redis = RedisServer.onFreePort();

    private static final KeyLayout layout = new KeyLayout("distlock:");
    private static final Pattern EVALSHA_CALLS = Pattern.compile("cmdstat_evalsha:calls=(\\d+)");
    private static RedisClient lettuce;
    private static StatefulRedisConnection<String, String> connection;

    @BeforeAll
    static void connect() {
        lettuce = RedisClient.create(redis.uri());
        connection = lettuce.connect();
    }

    @AfterAll
    static void disconnect() {
        connection.close();
        lettuce.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }

    @Test
    void permitRelease_fourWaitersOfOtherClients_eachReleaseCostsTheReleaseAndOneAttempt() throws Exception {
        assertThat(scriptsForFourHandOvers(4))
                .as("4 releases, each its own script and the one attempt of the waiter it let pass")
                .isEqualTo(8);
    }

    @Test
    void permitRelease_fourWaitersOfTheReleasingClient_eachReleaseHandsThePermitOverInOneScript() throws Exception {
        assertThat(scriptsForFourHandOvers(1))
                .as("4 releases, each one script that grants the next waiter, and no attempt after it")
                .isEqualTo(4);
    }

    /**
     * The scripts of four hand-overs of a semaphore's one permit among four waiters, spread over {@code clients}
     * clients: with one client every release has a local waiter (a hand-off); with four, none has (a release, then the
     * attempt of the waiter its wake-up names). The first holder is in the waiters' client when there is one, and in a
     * client of its own otherwise.
     */
    private static long scriptsForFourHandOvers(int clients) throws Exception {
        String name = "wake-ups-" + System.nanoTime();
        List<RedisLockClient> opened = new ArrayList<>();
        try {
            for (int i = 0; i < (clients == 1 ? 1 : clients + 1); i++) {
                // long leases and waiter timeouts: no renewal and no waiter's periodic re-check falls into the count
                opened.add(RedisLockClient.builder()
                        .uri(redis.uri())
                        .leaseTime(Duration.ofMinutes(5))
                        .waiterTimeout(Duration.ofMinutes(1))
                        .build());
            }
            PermitHold holder = opened.get(0).semaphore(name, 1).acquire(1);
            List<CompletableFuture<PermitHold>> waiting = new ArrayList<>();
            String queue = KeyLayout.key(layout.tag(name), KeyLayout.CLAIM_QUEUE);
            for (int i = 0; i < 4; i++) {
                RedisLockClient c = clients == 1 ? opened.get(0) : opened.get(1 + i);
                waiting.add(c.semaphore(name, 1).acquireAsync(1));
                // one at a time, so the client knows its waiters in the queue's order (a hand-off goes to the first
                // it knows; to another, it would cost the head's attempt besides)
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (connection.sync().zcard(queue) < i + 1 && System.nanoTime() < until) {
                    Timing.sleep(Duration.ofMillis(5));
                }
                Timing.sleep(Duration.ofMillis(50)); // its answer is back
            }
            assertThat(connection.sync().zcard(queue))
                    .as("all four wait in the queue")
                    .isEqualTo(4);
            Timing.sleep(Duration.ofMillis(200)); // each waiter's re-check after subscribing has landed

            connection.sync().configResetstat();
            PermitHold current = holder;
            for (int released = 0; released < 4; released++) {
                current.release();
                current = next(waiting);
            }
            Timing.sleep(Duration.ofMillis(300)); // any extra attempt a release set off lands in the count
            long scripts = evalshaCalls();
            current.release();
            assertThat(waiting).allMatch(CompletableFuture::isDone);
            return scripts;
        } finally {
            for (RedisLockClient c : opened) {
                c.close();
            }
        }
    }

    /** The one waiting future that completed and was not taken before, taken. */
    private static PermitHold next(List<CompletableFuture<PermitHold>> waiting) throws Exception {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < until) {
            for (CompletableFuture<PermitHold> f : waiting) {
                if (f.isDone()) {
                    PermitHold h = f.get();
                    if (h.isValid()) {
                        return h;
                    }
                }
            }
            Timing.sleep(Duration.ofMillis(2));
        }
        throw new AssertionError("no waiter got the released permit within 10 s");
    }

    private static long evalshaCalls() {
        Matcher m = EVALSHA_CALLS.matcher(connection.sync().info("commandstats"));
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }
}
