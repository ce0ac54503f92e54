package io.distlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedLock;
import io.distlock.LockClient;
import io.distlock.LockHold;
import io.distlock.internal.Checks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadFactory;
import org.junit.jupiter.api.Test;

/** Contract 1: at most one owner holds a lock name at any time, whatever clients and threads ask. */
public interface MutualExclusionContract extends BackendUnderTest {

    @Test
    default void tryLock_heldByOtherClient_returnsFalse() {
        String name = uniqueName();
        DistributedLock mine = newClient().lock(name);
        DistributedLock theirs = newClient().lock(name);
        assertThat(mine.tryLock()).isTrue();
        try {
            assertThat(theirs.tryLock()).isFalse();
            assertThat(theirs.isLocked()).isTrue();
        } finally {
            mine.unlock();
        }
        assertThat(theirs.tryLock()).isTrue();
        theirs.unlock();
    }

    @Test
    default void tryLock_heldByOtherThreadOfSameClient_returnsFalse() throws Exception {
        String name = uniqueName();
        LockClient client = newClient();
        DistributedLock lock = client.lock(name);
        assertThat(lock.tryLock()).isTrue();
        try {
            boolean[] other = new boolean[1];
            Thread t = new Thread(() -> other[0] = client.lock(name).tryLock());
            t.start();
            t.join();
            assertThat(other[0]).isFalse();
        } finally {
            lock.unlock();
        }
    }

    @Test
    default void tryAcquire_heldByThread_returnsEmpty() throws Exception {
        String name = uniqueName();
        LockClient client = newClient();
        DistributedLock lock = client.lock(name);
        lock.lock();
        try {
            assertThat(lock.tryAcquire(Duration.ZERO)).isEmpty();
            assertThat(newClient().lock(name).tryAcquire(Duration.ofMillis(50))).isEmpty();
        } finally {
            lock.unlock();
        }
        Optional<LockHold> hold = lock.tryAcquire(Duration.ZERO);
        assertThat(hold).isPresent();
        assertThat(lock.tryLock()).isFalse();
        hold.orElseThrow().release();
    }

    @Test
    default void counter_eightThreadsTwoClients_noLostIncrements() {
        String name = uniqueName();
        LockClient a = newClient();
        LockClient b = newClient();
        List<DistributedLock> locks = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            locks.add((i % 2 == 0 ? a : b).lock(name));
        }
        CounterWorkload.Result r = CounterWorkload.run(locks, Duration.ofSeconds(2), Duration.ofMillis(1));
        assertThat(r.increments()).as("increments").isPositive();
        assertThat(r.maxInside()).as("threads inside at once").isEqualTo(1);
        assertThat(r.rejected()).as("stale tokens").isZero();
        assertThat(r.lostIncrements()).as("lost increments").isZero();
    }

    @Test
    default void counter_fairLocks_noLostIncrements() {
        String name = uniqueName();
        LockClient a = newClient();
        LockClient b = newClient();
        List<DistributedLock> locks = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            locks.add((i % 2 == 0 ? a : b).fairLock(name));
        }
        CounterWorkload.Result r = CounterWorkload.run(locks, Duration.ofSeconds(1), Duration.ofMillis(1));
        assertThat(r.increments()).isPositive();
        assertThat(r.maxInside()).isEqualTo(1);
        assertThat(r.lostIncrements()).isZero();
    }

    /**
     * Runs on virtual threads where the JVM has them (21+); on 17 it runs the same workload on platform threads, unless
     * {@link VirtualThreads#REQUIRED_PROPERTY} is set, which makes a JVM without them fail.
     */
    @Test
    default void counter_virtualThreads_noLostIncrements() {
        String name = uniqueName();
        LockClient a = newClient();
        LockClient b = newClient();
        List<DistributedLock> locks = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            locks.add((i % 2 == 0 ? a : b).lock(name));
        }
        List<Thread> workers = new CopyOnWriteArrayList<>();
        ThreadFactory virtualOrPlatform = VirtualThreads.factoryOrPlatform();
        ThreadFactory factory = task -> {
            Thread worker = virtualOrPlatform.newThread(task);
            workers.add(worker);
            return worker;
        };
        CounterWorkload.Result r = CounterWorkload.run(locks, Duration.ofSeconds(1), Duration.ofMillis(1), factory);
        assertThat(r.increments()).isPositive();
        assertThat(r.maxInside()).isEqualTo(1);
        assertThat(r.lostIncrements()).isZero();
        if (VirtualThreads.available() || VirtualThreads.required()) {
            assertThat(workers)
                    .as("workers on Java " + System.getProperty("java.version"))
                    .hasSize(locks.size())
                    .allMatch(VirtualThreads::isVirtual, "virtual");
        }
    }

    @Test
    default void distinctNames_neverContend() {
        String base = uniqueName();
        List<String> held = List.of(
                base,
                base + "/b",
                "{" + base + "}",
                base + ":x",
                base + " ",
                base + "\n",
                base + "é",
                base.toUpperCase(java.util.Locale.ROOT),
                base + "'\"",
                base + "*",
                base + "..",
                base + "x".repeat(Checks.MAX_NAME_LENGTH - base.length()));
        List<String> others = List.of(
                base + "/",
                base + "/c",
                base + "}",
                "{" + base,
                base + ":",
                base + "  ",
                base + "e",
                base + "\t",
                base + "?",
                base + "x".repeat(Checks.MAX_NAME_LENGTH - 1 - base.length()));
        LockClient a = newClient();
        LockClient b = newClient();
        for (String n : held) {
            assertThat(a.lock(n).tryLock()).as("lock %s", abbreviated(n)).isTrue();
        }
        for (String n : held) {
            assertThat(b.lock(n).tryLock()).as("contended %s", abbreviated(n)).isFalse();
        }
        for (String n : others) {
            DistributedLock l = b.lock(n);
            assertThat(l.tryLock()).as("distinct name %s", abbreviated(n)).isTrue();
            l.unlock();
        }
        for (String n : held) {
            a.lock(n).unlock();
            assertThat(residue(n)).as("residue of %s", abbreviated(n)).isEmpty();
        }
    }

    private static String abbreviated(String n) {
        String s = n.length() > 60 ? n.substring(0, 60) + "…(" + n.length() + " chars)" : n;
        return s.replace("\n", "\\n").replace("\t", "\\t");
    }
}
