package io.distlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedLock;
import io.distlock.LockClient;
import io.distlock.MultiLock;
import io.distlock.MultiLockHold;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Deadlock freedom: 8 threads take random overlapping multi-locks over 6 names (3 on each of two stores), each listing
 * its members in a random order, for 20 s. They all finish (a cycle of holders would hang them), and every name's
 * fenced resource sees no lost increment, no rejected token and never two holders at once.
 */
class MultiLockDeadlockTest {
    static final InMemoryLockServer first = InMemoryLockServer.create();
    static final InMemoryLockServer second = InMemoryLockServer.create();

    @AfterAll
    static void stop() {
        first.close();
        second.close();
    }

    @Test
    void randomOverlappingMultiLocks_eightThreadsSixNames_finish_noTwoHoldersOfAName() throws Exception {
        int threads = 8;
        int names = 6;
        String base = "deadlock-" + System.nanoTime() + "-";
        FencedResource[] resources = new FencedResource[names];
        AtomicInteger[] inside = new AtomicInteger[names];
        AtomicLong[] increments = new AtomicLong[names];
        for (int i = 0; i < names; i++) {
            resources[i] = new FencedResource();
            inside[i] = new AtomicInteger();
            increments[i] = new AtomicLong();
        }
        AtomicReference<String> overlap = new AtomicReference<>();
        long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        CountDownLatch start = new CountDownLatch(1);
        List<LockClient> clients = new ArrayList<>();
        List<Thread> workers = new ArrayList<>();
        AtomicLong rounds = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        for (int t = 0; t < threads; t++) {
            LockClient a = first.newClient();
            LockClient b = second.newClient();
            clients.add(a);
            clients.add(b);
            boolean holds = t % 2 == 0; // half use LockHolds, half the Lock view
            Thread w = new Thread(() -> {
                try {
                    start.await();
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    while (System.nanoTime() - end < 0) {
                        List<Integer> picked = new ArrayList<>(List.of(0, 1, 2, 3, 4, 5));
                        Collections.shuffle(picked, random);
                        picked = picked.subList(0, 2 + random.nextInt(3));
                        List<DistributedLock> locks = new ArrayList<>();
                        for (int n : picked) {
                            locks.add((n < 3 ? a : b).lock(base + n));
                        }
                        MultiLock multi = MultiLock.of(locks);
                        Object acquisition = new Object();
                        if (holds) {
                            try (MultiLockHold hold = multi.acquire()) {
                                work(
                                        picked,
                                        base,
                                        hold.fencingTokens(),
                                        acquisition,
                                        resources,
                                        inside,
                                        increments,
                                        overlap);
                            }
                        } else {
                            multi.lock();
                            try {
                                work(
                                        picked,
                                        base,
                                        multi.fencingTokens(),
                                        acquisition,
                                        resources,
                                        inside,
                                        increments,
                                        overlap);
                            } finally {
                                multi.unlock();
                            }
                        }
                        rounds.incrementAndGet();
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            });
            w.setName("multilock-worker-" + t);
            workers.add(w);
            w.start();
        }
        start.countDown();
        List<String> hung = new ArrayList<>();
        for (Thread w : workers) {
            w.join(TimeUnit.SECONDS.toMillis(60));
            if (w.isAlive()) {
                StringBuilder s = new StringBuilder(w.getName());
                for (StackTraceElement e : w.getStackTrace()) {
                    s.append("\n    at ").append(e);
                }
                hung.add(s.toString());
                w.interrupt();
            }
        }
        clients.forEach(LockClient::close);
        assertThat(hung)
                .as("threads still waiting 40 s after the end (a deadlock)")
                .isEmpty();
        assertThat(failure.get()).as("a worker's failure").isNull();
        assertThat(overlap.get()).as("two holders of one name").isNull();
        assertThat(rounds.get()).as("multi-locks taken").isGreaterThan(100);
        for (int i = 0; i < names; i++) {
            assertThat(resources[i].rejected())
                    .as("stale tokens at resource %d", i)
                    .isZero();
            assertThat(resources[i].value()).as("increments of resource %d", i).isEqualTo(increments[i].get());
        }
    }

    private static void work(
            List<Integer> picked,
            String base,
            Map<String, Long> tokens,
            Object acquisition,
            FencedResource[] resources,
            AtomicInteger[] inside,
            AtomicLong[] increments,
            AtomicReference<String> overlap) {
        for (int n : picked) {
            if (inside[n].incrementAndGet() != 1) {
                overlap.compareAndSet(null, "name " + n);
            }
        }
        for (int n : picked) {
            long token = java.util.Objects.requireNonNull(tokens.get(base + n));
            OptionalLong v = resources[n].read(token, acquisition);
            Thread.yield();
            if (v.isPresent() && resources[n].write(token, acquisition, v.getAsLong() + 1)) {
                increments[n].incrementAndGet();
            }
        }
        for (int n : picked) {
            inside[n].decrementAndGet();
        }
    }
}
