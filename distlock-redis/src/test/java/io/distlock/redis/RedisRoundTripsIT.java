package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedLock;
import io.distlock.LockHold;
import io.distlock.testkit.server.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * How many scripts (each one EVALSHA, one round trip) the common operations cost, read from the server's {@code INFO
 * commandstats} on a server of its own: the design targets of the benchmark, checked as tests.
 */
class RedisRoundTripsIT {
    @RegisterExtension
    static final RedisServer redis = RedisServer.onFreePort();

    /** Calls per command since the last reset, from INFO commandstats. */
    private static Map<String, Long> commandCalls() {
        Map<String, Long> calls = new HashMap<>();
        for (String line : redis.command("INFO", "commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_")) {
                String name = line.substring(8, line.indexOf(':'));
                String stats = line.substring(line.indexOf(':') + 1);
                long n = Long.parseLong(stats.substring(6, stats.indexOf(',')));
                calls.put(name, n);
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

    @Test
    void uncontendedAcquireAndRelease_oneScriptEach_reentryNone() {
        try (RedisLockClient client = RedisLockClient.create(redis.uri())) {
            DistributedLock lock = client.lock("rt-uncontended");
            lock.lock(); // warm-up: loads the scripts
            lock.unlock();
            resetStats();
            lock.lock();
            assertThat(scripts()).as("acquire").isEqualTo(1);
            lock.lock();
            lock.lock();
            assertThat(scripts()).as("re-entrant acquires").isEqualTo(1);
            lock.unlock();
            lock.unlock();
            assertThat(scripts()).as("inner releases").isEqualTo(1);
            lock.unlock();
            assertThat(scripts()).as("acquire + release").isEqualTo(2);
            Map<String, Long> calls = commandCalls();
            // seed 002 built a script object per call: here no call loads or sends a script's source
            assertThat(calls).doesNotContainKeys("subscribe", "ssubscribe", "ping", "eval", "script|load");
            assertThat(calls.get("exists"))
                    .as("one EXISTS, inside the release script")
                    .isEqualTo(1L);
        }
    }

    /**
     * The acquire script reserved tokens for local successions: the waiting thread takes the hold over with the next
     * one and no request at all; the store keeps the hold under the acquiring thread's owner id until the last local
     * holder releases it.
     */
    @Test
    void handOff_toWaitingThreadOfSameClient_noRequest_freshToken() throws Exception {
        try (RedisLockClient client = RedisLockClient.create(redis.uri())) {
            DistributedLock lock = client.lock("rt-handoff");
            lock.lock();
            long first = lock.fencingToken();
            CountDownLatch acquired = new CountDownLatch(1);
            CountDownLatch done = new CountDownLatch(1);
            AtomicLong second = new AtomicLong();
            Thread waiter = new Thread(() -> {
                lock.lock();
                second.set(lock.fencingToken());
                acquired.countDown();
                try {
                    done.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                lock.unlock();
            });
            waiter.start();
            Thread.sleep(300); // the waiter is parked in the client's queue
            resetStats();
            lock.unlock();
            long unlocked = System.nanoTime();
            assertThat(acquired.await(5, TimeUnit.SECONDS)).isTrue();
            long handOffMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - unlocked);
            Map<String, Long> calls = commandCalls();
            assertThat(calls)
                    .as("release handed over to the waiting thread in %d ms", handOffMillis)
                    .containsOnlyKeys("config|resetstat");
            assertThat(second.get()).isEqualTo(first + 1);
            done.countDown();
            waiter.join(5000);
            assertThat(scripts()).as("the successor's release").isEqualTo(1);
            assertThat(redis.command("KEYS", "*rt-handoff*:hold"))
                    .as("released under the owner the store knows")
                    .isEmpty();
        }
    }

    /** Seeds 002 and 004 polled every 50 ms / 600 ms while waiting; a waiter here sleeps until told. */
    @Test
    void waiting_forTwoSeconds_doesNotPoll_oneSubscriptionPerClient() throws Exception {
        try (RedisLockClient holderClient = RedisLockClient.create(redis.uri());
                RedisLockClient waiterClient = RedisLockClient.create(redis.uri())) {
            DistributedLock held = holderClient.lock("rt-wait");
            held.lock();
            resetStats();
            List<Thread> waiters = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                Thread t = new Thread(() -> {
                    DistributedLock lock = waiterClient.lock("rt-wait");
                    try {
                        if (lock.tryLock(10, TimeUnit.SECONDS)) {
                            lock.unlock();
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                waiters.add(t);
                t.start();
            }
            Thread.sleep(2000);
            Map<String, Long> calls = commandCalls();
            // one barging attempt per thread, plus one re-check after subscribing by the thread talking to Redis
            assertThat(scripts())
                    .as("scripts while 4 threads waited 2 s: %s", calls)
                    .isLessThanOrEqualTo(5);
            assertThat(calls.get("subscribe"))
                    .as("one subscription for all waiters of a client")
                    .isEqualTo(1L);
            assertThat(redis.command("PUBSUB", "NUMSUB", "distlock:wake:" + waiterClient.clientId()))
                    .endsWith("\n1");
            held.unlock();
            for (Thread t : waiters) {
                t.join(10_000);
                assertThat(t.isAlive()).isFalse();
            }
        }
    }

    @Test
    void watchdog_renewsThousandHolds_inOneScriptPerTick() throws Exception {
        Duration lease = Duration.ofMillis(900); // a tick every 300 ms
        try (RedisLockClient client =
                RedisLockClient.builder().uri(redis.uri()).leaseTime(lease).build()) {
            List<LockHold> holds = new ArrayList<>();
            for (int i = 0; i < 1000; i++) {
                holds.add(client.lock("rt-renew-" + i).acquire());
            }
            Thread.sleep(400); // a tick that collected its batch while holds were still being acquired is over
            resetStats();
            long start = System.nanoTime();
            Thread.sleep(2000); // past two leases: only renewals keep the holds
            long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            Map<String, Long> calls = commandCalls(); // one snapshot: a tick may run between two INFO calls
            long ticks = calls.getOrDefault("evalsha", 0L) + calls.getOrDefault("eval", 0L);
            assertThat(ticks)
                    .as("scripts in %d ms with a tick every 300 ms", elapsedMillis)
                    .isBetween(1L, elapsedMillis / 300 + 1); // a loaded machine delays ticks, never adds any
            assertThat(calls.get("pexpire")).as("every hold renewed per tick").isEqualTo(ticks * 1000);
            for (LockHold h : holds) {
                assertThat(h.isValid()).isTrue();
                h.release();
            }
        }
    }
}
