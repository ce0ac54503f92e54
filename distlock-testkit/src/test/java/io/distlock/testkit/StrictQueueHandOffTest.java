package io.distlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedLock;
import io.distlock.LockClient;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The engine with a store whose queue is the only order (ZooKeeper, etcd): a release that would hand the lock to a
 * waiting thread of its own client must not pass an owner of another client queued ahead; the store answers
 * "queued", the thread waits in the queue, and gives its place back when it gives up.
 */
class StrictQueueHandOffTest {
    private final InMemoryLockServer server = InMemoryLockServer.create();
    private final LockClient a = client();
    private final LockClient b = client();
    private final String name = "strict-" + UUID.randomUUID();

    private LockClient client() {
        return InMemoryLockClient.builder().server(server).strictQueue(true).build();
    }

    @AfterEach
    void close() {
        a.close();
        b.close();
        server.close();
    }

    @Test
    void handOff_behindAnotherClientsQueuedWaiter_queuesInstead_andOrderIsKept() throws Exception {
        List<String> order = new CopyOnWriteArrayList<>();
        List<Long> tokens = new CopyOnWriteArrayList<>();
        DistributedLock first = a.lock(name);
        first.lock();
        tokens.add(first.fencingToken());

        Thread remote = start(() -> {
            DistributedLock l = b.lock(name);
            l.lock();
            order.add("b");
            tokens.add(l.fencingToken());
            Timing.sleep(Duration.ofMillis(100));
            l.unlock();
        });
        Eventually.within(Timing.seconds(5), "b queued", () -> server.residue(name).stream()
                .anyMatch(r -> r.startsWith("queue")));
        Thread local = start(() -> {
            DistributedLock l = a.lock(name);
            l.lock();
            order.add("a2");
            tokens.add(l.fencingToken());
            l.unlock();
        });
        awaitParked(local);

        first.unlock(); // would hand off to `local`; b is queued ahead

        remote.join(Timing.seconds(5).toMillis());
        local.join(Timing.seconds(5).toMillis());
        assertThat(remote.isAlive() || local.isAlive()).as("a waiter is stuck").isFalse();
        assertThat(order).containsExactly("b", "a2");
        assertThat(tokens).isSortedAccordingTo(Long::compare).doesNotHaveDuplicates();
        assertThat(server.residue(name)).isEmpty();
    }

    @Test
    void queuedByAHandOff_thenTimesOut_leavesNothing() throws Exception {
        DistributedLock first = a.lock(name);
        first.lock();
        AtomicBoolean remoteHolds = new AtomicBoolean();
        Thread remote = start(() -> {
            DistributedLock l = b.lock(name);
            l.lock();
            remoteHolds.set(true);
            Timing.sleep(Duration.ofMillis(1500));
            l.unlock();
        });
        Eventually.within(Timing.seconds(5), "b queued", () -> server.residue(name).stream()
                .anyMatch(r -> r.startsWith("queue")));
        AtomicBoolean localGot = new AtomicBoolean(true);
        Thread local = start(() -> {
            try {
                localGot.set(a.lock(name).tryLock(700, TimeUnit.MILLISECONDS));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        awaitParked(local);

        first.unlock();

        local.join(Timing.seconds(5).toMillis());
        assertThat(localGot).as("timed out behind the remote holder").isFalse();
        assertThat(remoteHolds).isTrue();
        remote.join(Timing.seconds(5).toMillis());
        assertThat(server.residue(name)).isEmpty();
    }

    private static Thread start(ThrowingRunnable body) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        t.start();
        return t;
    }

    private static void awaitParked(Thread t) {
        Eventually.within(
                Timing.seconds(5),
                "a2 parked",
                () -> t.getState() == Thread.State.WAITING || t.getState() == Thread.State.TIMED_WAITING);
    }

    private interface ThrowingRunnable {
        void run() throws Exception;
    }
}
