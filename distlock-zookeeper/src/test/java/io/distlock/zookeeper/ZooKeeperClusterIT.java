package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLock;
import io.distlock.DistributedLockException;
import io.distlock.LockHold;
import io.distlock.LockListener;
import io.distlock.LockLostException;
import io.distlock.testkit.Eventually;
import io.distlock.testkit.FencedResource;
import io.distlock.testkit.Timing;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.client.FourLetterWordMain;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/*
 * A lock is held while two other clients wait; then the ensemble's leader is killed, or the holder's session expires.
 * The holder must be told it lost the lock before anyone else is granted it, unlock must throw LockLostException, the
 * fenced counter must lose no increment, the waiters must get it with greater tokens, and no node may be left.
 */
/** The lock on a 3-node ensemble under leader loss and session expiry. */
class ZooKeeperClusterIT {
    static {
        System.setProperty("zookeeper.4lw.commands.whitelist", "srvr");
    }

    private static final String NAME = "cluster-lock";

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
    void leaderKilled_whileHeld_holderToldFirst_waitersGetIt_noLostIncrements_noNodesLeft() throws Exception {
        ZooKeeperLockClient holder = client();
        run(holder, () -> {
            InstanceSpec leader = leader();
            assertThat(cluster.killServer(leader)).isTrue();
        });
    }

    /**
     * The expiry is reported by the holder's own handle while its connection is up, and Curator then closes the session
     * on the server itself: only a client whose handles the library made hears of it before that (see the store's
     * overview), so the holder's Curator client is the lock client's own.
     */
    @Test
    void holderSessionExpired_whileHeld_holderToldFirst_waitersGetIt_noLostIncrements_noNodesLeft() throws Exception {
        ZooKeeperLockClient holder = client();
        run(holder, () -> holder.curator()
                .getZookeeperClient()
                .getZooKeeper()
                .getTestable()
                .injectSessionExpiration());
    }

    private interface Failure {
        void inject() throws Exception;
    }

    private void run(ZooKeeperLockClient holderClient, Failure failure) throws Exception {
        FencedResource resource = new FencedResource();
        AtomicLong lostAt = new AtomicLong();
        DistributedLock holderLock = holderClient.lock(NAME);
        holderLock.addListener(new LockListener() {
            @Override
            public void lost(String name, long fencingToken, @Nullable Throwable cause) {
                lostAt.compareAndSet(0, System.nanoTime());
            }
        });
        LockHold held = holderLock.acquire();

        List<Long> grantedAt = new CopyOnWriteArrayList<>();
        List<Long> tokens = new CopyOnWriteArrayList<>();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        List<Thread> waiters = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            DistributedLock lock = client().lock(NAME);
            Thread t = new Thread(() -> {
                try {
                    LockHold h = acquireThroughOutages(lock, Timing.seconds(30));
                    grantedAt.add(System.nanoTime());
                    tokens.add(h.fencingToken());
                    for (int n = 0; n < 5; n++) {
                        increment(resource, h);
                    }
                    h.release();
                } catch (Throwable e) {
                    failed.compareAndSet(null, e);
                }
            });
            waiters.add(t);
            t.start();
        }
        Eventually.within(
                Timing.seconds(10),
                "both waiters queued",
                () -> residueQuietly().size() == 3);

        // the holder works until it learns the lock is gone
        Thread work = new Thread(() -> {
            while (held.isValid()) {
                increment(resource, held);
            }
        });
        work.start();
        Timing.sleep(Duration.ofMillis(300));
        long injected = System.nanoTime();
        failure.inject();

        work.join(Timing.seconds(15).toMillis());
        assertThat(work.isAlive()).as("holder still believes it holds the lock").isFalse();
        // the hold turns invalid first (so work stops at once), then listeners are told: allow that instant
        Eventually.within(Timing.seconds(2), "holder told lost", () -> lostAt.get() != 0);
        assertThat(lostAt.get() - injected)
                .as("told within the session timeout")
                .isLessThan(ZooKeeperTestServers.SESSION_TIMEOUT.toNanos());
        assertThatThrownBy(held::release).isInstanceOf(LockLostException.class);
        held.close(); // the loss was reported once; closing now is a no-op

        for (Thread t : waiters) {
            t.join(Timing.seconds(40).toMillis());
        }
        if (failed.get() != null) {
            throw new AssertionError("a waiter failed", failed.get());
        }
        assertThat(tokens).hasSize(2).allSatisfy(t -> assertThat(t).isGreaterThan(held.fencingToken()));
        assertThat(tokens.get(1)).isGreaterThan(tokens.get(0));
        for (long g : grantedAt) {
            assertThat(g - lostAt.get())
                    .as("granted only after the holder was told")
                    .isPositive();
        }
        assertThat(resource.value())
                .as("no increment lost: never two holders inside")
                .isEqualTo(resource.acceptedWrites());
        assertThat(resource.acceptedWrites()).isGreaterThanOrEqualTo(10);

        Eventually.within(Timing.seconds(15), "no nodes left: " + residueQuietly(), () -> residueQuietly()
                .isEmpty());
    }

    /** Waits for the lock; a store failure during the outage is retried, as an application would. */
    private static LockHold acquireThroughOutages(DistributedLock lock, Duration bound) throws InterruptedException {
        long end = System.nanoTime() + bound.toNanos();
        DistributedLockException last = null;
        while (System.nanoTime() - end < 0) {
            try {
                Optional<LockHold> h = lock.tryAcquire(Duration.ofNanos(end - System.nanoTime()));
                if (h.isPresent()) {
                    return h.get();
                }
            } catch (DistributedLockException e) {
                last = e;
                Timing.sleep(Duration.ofMillis(100));
            }
        }
        throw new AssertionError("no grant within " + bound, last);
    }

    private static void increment(FencedResource resource, LockHold hold) {
        OptionalLong v = resource.read(hold.fencingToken(), hold);
        Timing.sleep(Duration.ofMillis(5));
        if (v.isPresent()) {
            var unused = resource.write(hold.fencingToken(), hold, v.getAsLong() + 1);
        }
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

    private List<String> residue() throws Exception {
        try {
            return admin.getChildren().forPath(ZooKeeperTestServers.lockPath(NAME));
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
    }

    private List<String> residueQuietly() {
        try {
            return residue();
        } catch (Exception e) {
            return List.of("unreadable: " + e);
        }
    }
}
