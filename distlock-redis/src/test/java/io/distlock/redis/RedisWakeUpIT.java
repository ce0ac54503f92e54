package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedLock;
import io.distlock.testkit.server.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Targeted wake-ups (wake-one.lua): a release tells one waiting client, not every client, and a wake-up that reaches a
 * client that no longer waits is passed on. On a server of its own, so that INFO commandstats counts only this test.
 */
class RedisWakeUpIT {
    @RegisterExtension
    static final RedisServer redis = RedisServer.onFreePort();

    private static final KeyLayout layout = new KeyLayout("distlock:");
    private static RedisClient lettuce;
    private static StatefulRedisConnection<String, String> connection;
    private static RedisCommands<String, String> sync;

    @BeforeAll
    static void connect() {
        lettuce = RedisClient.create(redis.uri());
        connection = lettuce.connect();
        sync = connection.sync();
    }

    @AfterAll
    static void disconnect() {
        connection.close();
        lettuce.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }

    private static Map<String, Long> commandCalls() {
        Map<String, Long> calls = new HashMap<>();
        for (String line : redis.command("INFO", "commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_")) {
                String stats = line.substring(line.indexOf(':') + 1);
                calls.put(line.substring(8, line.indexOf(':')), Long.parseLong(stats.substring(6, stats.indexOf(','))));
            }
        }
        return calls;
    }

    private static String orderKey(String name) {
        return KeyLayout.key(layout.tag(name), KeyLayout.WAKE_ORDER);
    }

    private static void awaitWaitingClients(String name, int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (sync.zcard(orderKey(name)) < n) {
            assertThat(System.nanoTime())
                    .as("%d clients registered as waiting", n)
                    .isLessThan(deadline);
            Thread.sleep(10);
        }
    }

    /** Starts a thread that waits up to {@code seconds} for the lock, counts {@code acquired} down and releases. */
    private static Thread startWaiter(RedisLockClient client, String name, int seconds, CountDownLatch acquired) {
        Thread t = new Thread(() -> {
            DistributedLock lock = client.lock(name);
            try {
                if (lock.tryLock(seconds, TimeUnit.SECONDS)) {
                    acquired.countDown();
                    lock.unlock();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        t.start();
        return t;
    }

    private static long wakeUpsReceived(List<RedisLockClient> clients) {
        long sum = 0;
        for (RedisLockClient c : clients) {
            sum += c.store().connections().subscriptions().dispatch().wakeUpCounts()[0];
        }
        return sum;
    }

    /**
     * Four clients wait for a lock; each release tells exactly one of them (one PUBLISH, one wake-up received, one
     * attempt), and they get the lock in the order they started waiting. A release that published to every client
     * would wake four, then three, ... (ten wake-ups and ten attempts for four releases).
     */
    @Test
    void release_wakesOneWaitingClient_notAll_inOrder() throws Exception {
        String name = "wake-one";
        int n = 4;
        List<RedisLockClient> clients = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        try (RedisLockClient holderClient = RedisLockClient.create(redis.uri())) {
            DistributedLock held = holderClient.lock(name);
            held.lock();
            BlockingQueue<Integer> acquired = new LinkedBlockingQueue<>();
            Semaphore mayRelease = new Semaphore(0);
            CountDownLatch done = new CountDownLatch(n);
            for (int i = 0; i < n; i++) {
                RedisLockClient c = RedisLockClient.create(redis.uri());
                clients.add(c);
                int id = i;
                Thread t = new Thread(() -> {
                    DistributedLock lock = c.lock(name);
                    try {
                        if (lock.tryLock(30, TimeUnit.SECONDS)) {
                            acquired.add(id);
                            mayRelease.acquireUninterruptibly();
                            lock.unlock();
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } finally {
                        done.countDown();
                    }
                });
                threads.add(t);
                t.start();
                awaitWaitingClients(name, i + 1); // one after the other: the order of waiting is known
            }
            Thread.sleep(200); // nothing else is on its way
            assertThat(redis.command("CONFIG", "RESETSTAT")).isEqualTo("OK");
            long wakeUpsBefore = wakeUpsReceived(clients);
            held.unlock();
            List<Integer> order = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                Integer id = acquired.poll(10, TimeUnit.SECONDS);
                assertThat(id).as("acquisition %d", i + 1).isNotNull();
                order.add(id);
                Thread.sleep(100); // a herd would show here: every woken client tries
                Map<String, Long> calls = commandCalls();
                assertThat(wakeUpsReceived(clients) - wakeUpsBefore)
                        .as("wake-ups received after %d releases: %s", i + 1, calls)
                        .isEqualTo(i + 1);
                assertThat(calls.get("publish"))
                        .as("PUBLISH after %d releases", i + 1)
                        .isEqualTo(i + 1L);
                // per release: the release only; the woken client takes the grant that came with its wake-up
                // as it is, without a request of its own. The first release is the holder's, whose client never saw
                // the name contended: its lean release finds the waiting clients, changes nothing, and the full
                // release follows (2 scripts). The waiters' attempts were busy, so their releases are full at once.
                assertThat(calls.get("evalsha"))
                        .as("scripts after %d releases: %s", i + 1, calls)
                        .isEqualTo(i + 2L);
                mayRelease.release();
            }
            assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(order).as("served in the order they started waiting").containsExactly(0, 1, 2, 3);
            assertThat(commandCalls().get("publish"))
                    .as("the last release had nobody to tell")
                    .isEqualTo(4L);
            assertThat(RedisKeys.residue(sync, layout, name)).isEmpty();
        } finally {
            for (Thread t : threads) {
                t.join(10_000);
            }
            clients.forEach(RedisLockClient::close);
        }
    }

    /**
     * The lock is given to an earlier wait of client A (whose entry stayed) while A waits again with a new entry: A's
     * new wait takes it at once instead of waiting for the claim to run out.
     */
    @Test
    void lockGivenToEarlierWaitOfSameClient_takenByItsNewWait() throws Exception {
        String name = "wake-earlier";
        try (RedisLockClient holderClient = RedisLockClient.create(redis.uri());
                RedisLockClient a = RedisLockClient.create(redis.uri())) {
            DistributedLock held = holderClient.lock(name);
            held.lock();
            assertThat(a.lock(name).tryLock(200, TimeUnit.MILLISECONDS)).isFalse(); // wait 1 ended, it left
            CountDownLatch aAcquired = new CountDownLatch(1);
            Thread waiterA = startWaiter(a, name, 60, aAcquired);
            try {
                awaitWaitingClients(name, 1); // wait 2
                String deadlines = KeyLayout.key(layout.tag(name), KeyLayout.WAKE_DEADLINES);
                long now = Long.parseLong(sync.time().get(0)) * 1000;
                String earlier = a.clientId() + ":w1";
                sync.zadd(orderKey(name), 1, earlier);
                sync.zadd(deadlines, now + 60_000, earlier);
                long start = System.nanoTime();
                held.unlock();
                assertThat(aAcquired.await(5, TimeUnit.SECONDS)).isTrue();
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
                        .as("taken before the claim of %s ran out", WaitRegistry.CLAIM)
                        .isLessThan(WaitRegistry.CLAIM.toMillis() - 100);
            } finally {
                waiterA.join(10_000);
            }
            assertThat(RedisKeys.residue(sync, layout, name)).isEmpty();
        }
    }

    /**
     * A grant message whose token is not greater than what the waiting client's own attempt saw of the fence counter
     * is stale (the grant ended before that attempt ran): the client does not take it as it is. Here the message is
     * forged while another client holds the lock; taking it would make two holders.
     */
    @Test
    void staleGrantMessage_isNotTaken() throws Exception {
        String name = "wake-stale";
        try (RedisLockClient holderClient = RedisLockClient.create(redis.uri());
                RedisLockClient b = RedisLockClient.create(redis.uri())) {
            DistributedLock held = holderClient.lock(name);
            held.lock();
            CountDownLatch bAcquired = new CountDownLatch(1);
            Thread waiterB = startWaiter(b, name, 30, bAcquired);
            try {
                awaitWaitingClients(name, 1);
                String tag = layout.tag(name);
                String entry = sync.zrange(orderKey(name), 0, -1).get(0);
                long fence = Long.parseLong(sync.get(KeyLayout.key(tag, KeyLayout.FENCE)));
                long published = sync.publish(b.store().wakeChannel(tag), tag + entry + "#" + fence);
                assertThat(published).isEqualTo(1L);
                assertThat(bAcquired.await(300, TimeUnit.MILLISECONDS))
                        .as("B took a stale grant while the holder still holds")
                        .isFalse();
                assertThat(b.store().waits().grantsTaken()).isZero();
                held.unlock();
                assertThat(bAcquired.await(5, TimeUnit.SECONDS)).isTrue();
                // counted on the I/O thread just after the waiter was handed the grant
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
                while (b.store().waits().grantsTaken() == 0 && System.nanoTime() < deadline) {
                    Thread.sleep(5);
                }
                assertThat(b.store().waits().grantsTaken())
                        .as("the real grant, with a newer token, taken as it is")
                        .isEqualTo(1);
            } finally {
                waiterB.join(10_000);
            }
        }
    }

    /**
     * A client died while it waited (its entry stays, nobody passes on): the release gives the lock to it, the claim
     * runs out unclaimed, and the live waiter B still gets the lock within its capped retry (5 s), not at the end of
     * the 30 s lease it saw.
     */
    @Test
    void lockGivenToClientThatDied_otherWaiterComesBackWithinFiveSeconds() throws Exception {
        String name = "wake-dead";
        try (RedisLockClient holderClient = RedisLockClient.create(redis.uri());
                RedisLockClient b = RedisLockClient.create(redis.uri())) {
            DistributedLock held = holderClient.lock(name);
            held.lock();
            CountDownLatch bAcquired = new CountDownLatch(1);
            Thread waiterB = startWaiter(b, name, 60, bAcquired);
            try {
                awaitWaitingClients(name, 1);
                String deadlines = KeyLayout.key(layout.tag(name), KeyLayout.WAKE_DEADLINES);
                long now = Long.parseLong(sync.time().get(0)) * 1000;
                String dead = "gone-client:w1";
                sync.zadd(orderKey(name), 1, dead);
                sync.zadd(deadlines, now + 60_000, dead);
                long start = System.nanoTime();
                held.unlock();
                assertThat(sync.get(RedisKeys.holdKey(layout, name)))
                        .as("given to the dead client")
                        .startsWith(dead + "#");
                assertThat(bAcquired.await(10, TimeUnit.SECONDS)).isTrue();
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
                        .as("B came back by itself")
                        .isLessThan(7_000);
            } finally {
                waiterB.join(10_000);
            }
        }
    }

    /**
     * Client A's wait ended but its entry among the waiting clients stayed (as when its leaving was lost on the way):
     * the release gives the lock to A, and A, which no longer waits, passes it on to B at once. Without passing on, B
     * would wait for the claim to run out and then for its own retry at the end of the holder's 30 s lease.
     */
    @Test
    void wakeUp_forClientThatNoLongerWaits_isPassedOn() throws Exception {
        String name = "wake-pass-on";
        try (RedisLockClient holderClient = RedisLockClient.create(redis.uri());
                RedisLockClient a = RedisLockClient.create(redis.uri());
                RedisLockClient b = RedisLockClient.create(redis.uri())) {
            DistributedLock held = holderClient.lock(name);
            held.lock();
            assertThat(a.lock(name).tryLock(200, TimeUnit.MILLISECONDS)).isFalse(); // A's wait 1 ended, it left
            assertThat(sync.zcard(orderKey(name))).isZero();
            CountDownLatch bAcquired = new CountDownLatch(1);
            Thread waiterB = startWaiter(b, name, 60, bAcquired);
            try {
                awaitWaitingClients(name, 1);
                // A's ended wait back in front of B, with a live deadline
                String deadlines = KeyLayout.key(layout.tag(name), KeyLayout.WAKE_DEADLINES);
                long now = Long.parseLong(sync.time().get(0)) * 1000;
                String staleEntry = a.clientId() + ":w1";
                sync.zadd(orderKey(name), 1, staleEntry);
                sync.zadd(deadlines, now + 60_000, staleEntry);
                long start = System.nanoTime();
                held.unlock();
                assertThat(bAcquired.await(5, TimeUnit.SECONDS))
                        .as("B acquired after A passed the lock on")
                        .isTrue();
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
                        .as("before A's claim of %s ran out", WaitRegistry.CLAIM)
                        .isLessThan(WaitRegistry.CLAIM.toMillis());
                assertThat(a.store().waits().passedOn()).isEqualTo(1);
                assertThat(a.store().connections().subscriptions().dispatch().wakeUpCounts())
                        .containsExactly(1L, 1L);
            } finally {
                waiterB.join(10_000);
            }
            assertThat(RedisKeys.residue(sync, layout, name)).isEmpty();
        }
    }
}
