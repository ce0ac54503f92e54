package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedLock;
import io.distlock.DistributedLockException;
import io.distlock.DistributedSemaphore;
import io.distlock.LockHold;
import io.distlock.PermitHold;
import io.distlock.testkit.Eventually;
import io.distlock.testkit.Timing;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.client.FourLetterWordMain;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/*
 * A semaphore's permits and a write lock are held while other clients wait for permits and for the read lock; then
 * the ensemble's leader is killed. The holder must be told it lost both before any waiter is granted, the permits
 * held at once must never pass the size, the waiters must get in with greater tokens, and no node may be left.
 */
/** Semaphores and read-write locks on a 3-node ensemble under leader loss. */
class ZooKeeperClusterSynchronizersIT {
    static {
        System.setProperty("zookeeper.4lw.commands.whitelist", "srvr");
    }

    private static final String SEMAPHORE = "cluster-semaphore";
    private static final String RW = "cluster-rw";
    private static final int SIZE = 2;

    private TestingCluster cluster;
    private CuratorFramework admin;
    private final List<AutoCloseable> closeAfter = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        List<InstanceSpec> specs = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            specs.add(new InstanceSpec(null, -1, -1, -1, true, -1, ZooKeeperTestServers.TICK_MILLIS, -1));
        }
        cluster = new TestingCluster(specs);
        cluster.start();
        admin = ZooKeeperTestServers.adminClient(cluster.getConnectString());
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : closeAfter) {
            try {
                c.close();
            } catch (Exception e) {
                // broken on purpose
            }
        }
        admin.close();
        cluster.close();
    }

    @Test
    void leaderKilled_whilePermitsAndWriteLockHeld_holderToldFirst_neverAboveSize_noNodesLeft() throws Exception {
        ZooKeeperLockClient holder = client();
        PermitHold permits = holder.semaphore(SEMAPHORE, SIZE).acquire(SIZE);
        LockHold write = holder.readWriteLock(RW).writeLock().acquire();
        AtomicInteger inside = new AtomicInteger(); // the waiters' permits; the holder's end before any is granted
        AtomicInteger most = new AtomicInteger();
        List<Long> tokens = new CopyOnWriteArrayList<>();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        List<Thread> waiters = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            DistributedSemaphore s = client().semaphore(SEMAPHORE, SIZE);
            waiters.add(start(failed, () -> {
                PermitHold h = acquireThroughOutages(() -> s.tryAcquire(1, Timing.seconds(30)));
                assertThat(permits.isValid())
                        .as("the holder was told before a waiter got in")
                        .isFalse();
                most.accumulateAndGet(inside.incrementAndGet(), Math::max);
                tokens.add(h.fencingToken());
                Timing.sleep(Duration.ofMillis(50));
                inside.decrementAndGet();
                h.release();
            }));
        }
        DistributedLock read = client().readWriteLock(RW).readLock();
        List<Long> readTokens = new CopyOnWriteArrayList<>();
        waiters.add(start(failed, () -> {
            LockHold h = acquireThroughOutages(() -> read.tryAcquire(Timing.seconds(30)));
            assertThat(write.isValid())
                    .as("the writer was told before the reader got in")
                    .isFalse();
            readTokens.add(h.fencingToken());
            h.release();
        }));
        Eventually.within(
                Timing.seconds(10),
                "all waiters queued",
                () -> residue(SEMAPHORE).size() == 4 && residue(RW).size() == 2);

        assertThat(cluster.killServer(leader())).isTrue();
        Eventually.within(Timing.seconds(15), "holder told lost", () -> !permits.isValid() && !write.isValid());

        for (Thread t : waiters) {
            t.join(Timing.seconds(45).toMillis());
        }
        if (failed.get() != null) {
            throw new AssertionError("a waiter failed", failed.get());
        }
        assertThat(most.get()).as("permits held at once").isLessThanOrEqualTo(SIZE);
        assertThat(tokens).hasSize(3).allSatisfy(t -> assertThat(t).isGreaterThan(permits.fencingToken()));
        assertThat(readTokens).hasSize(1).allSatisfy(t -> assertThat(t).isGreaterThan(write.fencingToken()));
        Eventually.within(
                Timing.seconds(15),
                "no nodes left",
                () -> residue(SEMAPHORE).isEmpty() && residue(RW).isEmpty());
    }

    private interface Body {
        void run() throws Exception;
    }

    private static Thread start(AtomicReference<Throwable> failed, Body body) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                failed.compareAndSet(null, e);
            }
        });
        t.start();
        return t;
    }

    private interface Try<H> {
        Optional<H> attempt() throws InterruptedException;
    }

    /** Waits for a grant; a store failure during the outage is retried, as an application would. */
    private static <H> H acquireThroughOutages(Try<H> attempt) throws InterruptedException {
        long end = System.nanoTime() + Timing.seconds(40).toNanos();
        DistributedLockException last = null;
        while (System.nanoTime() - end < 0) {
            try {
                Optional<H> h = attempt.attempt();
                if (h.isPresent()) {
                    return h.get();
                }
            } catch (DistributedLockException e) {
                last = e;
                Timing.sleep(Duration.ofMillis(100));
            }
        }
        throw new AssertionError("no grant in time", last);
    }

    private ZooKeeperLockClient client() {
        ZooKeeperLockClient c = ZooKeeperLockClient.builder()
                .leaseTime(Duration.ofMillis(600))
                .connectString(cluster.getConnectString())
                .sessionTimeout(ZooKeeperTestServers.SESSION_TIMEOUT)
                .connectionTimeout(Duration.ofSeconds(3))
                .build();
        closeAfter.add(0, c);
        return c;
    }

    private InstanceSpec leader() throws Exception {
        for (InstanceSpec spec : cluster.getInstances()) {
            String srvr = FourLetterWordMain.send4LetterWord("127.0.0.1", spec.getPort(), "srvr");
            if (srvr.contains("Mode: leader")) {
                return spec;
            }
        }
        throw new AssertionError("no leader among " + cluster.getInstances());
    }

    private List<String> residue(String name) {
        try {
            return admin.getChildren().forPath(ZooKeeperSynchronizersIT.syncPath(name));
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (Exception e) {
            return List.of("unreadable: " + e);
        }
    }
}
