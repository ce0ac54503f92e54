package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedLock;
import io.distlock.LockHold;
import io.distlock.MultiLock;
import io.distlock.testkit.fault.Fault;
import io.distlock.testkit.fault.FaultProxy;
import io.distlock.testkit.server.RedisServer;
import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An 8-name multi-lock on one Redis client costs one round trip to acquire and one to release, uncontended: the
 * client talks to its own server through a proxy that holds every chunk 100 ms each way, so a round trip takes at
 * least 200 ms and eight taken one after another at least 1.6 s. The server's {@code INFO commandstats} counts the
 * scripts sent.
 */
@Timeout(60)
class MultiLockRoundTripsIT {
    @RegisterExtension
    static final RedisServer redis = RedisServer.onFreePort();

    static final Duration ONE_WAY = Duration.ofMillis(100);
    /** One round trip (200 ms through the proxy) and slack for a loaded machine, well below two. */
    static final long ONE_ROUND_TRIP_BOUND_MILLIS = 380;

    private static Map<String, Long> commandCalls() {
        Map<String, Long> calls = new HashMap<>();
        for (String line : redis.command("INFO", "commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_")) {
                String name = line.substring(8, line.indexOf(':'));
                String stats = line.substring(line.indexOf(':') + 1);
                calls.put(name, Long.parseLong(stats.substring(6, stats.indexOf(','))));
            }
        }
        return calls;
    }

    private static long scripts() {
        Map<String, Long> calls = commandCalls();
        return calls.getOrDefault("evalsha", 0L) + calls.getOrDefault("eval", 0L);
    }

    private static void resetStats() {
        assertThat(redis.command("CONFIG", "RESETSTAT")).isEqualTo("OK");
    }

    private static MultiLock eightNames(RedisLockClient client, String prefix) {
        List<DistributedLock> locks = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            locks.add(client.lock(prefix + i));
        }
        return MultiLock.of(locks);
    }

    private static RedisLockClient throughProxy(FaultProxy proxy) {
        RedisURI uri = RedisURI.builder()
                .withHost("127.0.0.1")
                .withPort(proxy.port())
                .withTimeout(Duration.ofSeconds(10))
                .build();
        return RedisLockClient.builder().uri(uri).build();
    }

    private static List<String> held(String prefix) {
        String keys = redis.command("KEYS", "*" + prefix + "*:hold");
        return keys.isEmpty() ? List.of() : List.of(keys.split("\n"));
    }

    private static long millisSince(long start) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }

    @Test
    void lockAndUnlock_eightMembers_oneRoundTripEach() {
        try (FaultProxy proxy = FaultProxy.start(redis.port());
                RedisLockClient client = throughProxy(proxy)) {
            MultiLock multi = eightNames(client, "mrt-lock-");
            multi.lock(); // warm-up: connections made, scripts loaded
            multi.unlock();
            resetStats();
            try (Fault slow = proxy.delay(ONE_WAY, Duration.ZERO, Duration.ofMinutes(1))) {
                long start = System.nanoTime();
                multi.lock();
                long lockMillis = millisSince(start);
                assertThat(scripts()).as("acquire scripts").isEqualTo(8);
                start = System.nanoTime();
                multi.unlock();
                long unlockMillis = millisSince(start);
                assertThat(scripts()).as("acquire + release scripts").isEqualTo(16);
                assertThat(lockMillis)
                        .as("lock() of 8 members through a 200 ms round trip")
                        .isGreaterThanOrEqualTo(2 * ONE_WAY.toMillis())
                        .isLessThan(ONE_ROUND_TRIP_BOUND_MILLIS);
                assertThat(unlockMillis)
                        .as("unlock() of 8 members through a 200 ms round trip")
                        .isGreaterThanOrEqualTo(2 * ONE_WAY.toMillis())
                        .isLessThan(ONE_ROUND_TRIP_BOUND_MILLIS);
            }
            assertThat(redis.command("KEYS", "*mrt-lock-*:hold"))
                    .as("nothing left held")
                    .isEmpty();
        }
    }

    @Test
    void acquireAndRelease_eightMembers_oneRoundTripEach() throws Exception {
        try (FaultProxy proxy = FaultProxy.start(redis.port());
                RedisLockClient client = throughProxy(proxy)) {
            MultiLock multi = eightNames(client, "mrt-hold-");
            multi.acquire().release(); // warm-up
            resetStats();
            try (Fault slow = proxy.delay(ONE_WAY, Duration.ZERO, Duration.ofMinutes(1))) {
                long start = System.nanoTime();
                LockHold hold = multi.acquire();
                long acquireMillis = millisSince(start);
                start = System.nanoTime();
                hold.release();
                long releaseMillis = millisSince(start);
                assertThat(scripts()).as("acquire + release scripts").isEqualTo(16);
                assertThat(acquireMillis).as("acquire()").isLessThan(ONE_ROUND_TRIP_BOUND_MILLIS);
                assertThat(releaseMillis).as("release()").isLessThan(ONE_ROUND_TRIP_BOUND_MILLIS);
            }
            assertThat(redis.command("KEYS", "*mrt-hold-*:hold"))
                    .as("nothing left held")
                    .isEmpty();
        }
    }

    @Test
    void oneMemberBusy_laterGrantsReleased_takenAfterItsRelease() throws Exception {
        try (RedisLockClient client = RedisLockClient.create(redis.uri());
                RedisLockClient other = RedisLockClient.create(redis.uri())) {
            MultiLock multi = eightNames(client, "mrt-busy-");
            LockHold busy = other.lock("mrt-busy-3").acquire();
            assertThat(multi.tryLock(300, TimeUnit.MILLISECONDS)).isFalse();
            assertThat(held("mrt-busy-")).as("only the other's hold").hasSize(1);
            Thread releaser = new Thread(() -> {
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                busy.release();
            });
            releaser.start();
            assertThat(multi.tryLock(10, TimeUnit.SECONDS)).isTrue();
            assertThat(held("mrt-busy-")).hasSize(8);
            multi.unlock();
            releaser.join(5000);
            assertThat(held("mrt-busy-")).isEmpty();
        }
    }
}
