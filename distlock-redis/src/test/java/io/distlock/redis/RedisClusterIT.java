package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedLock;
import io.distlock.LockClient;
import io.distlock.LockHold;
import io.distlock.testkit.AllLockContracts;
import io.distlock.testkit.server.RedisCluster;
import io.distlock.testkit.server.RedisServer;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The contract suite on a 3-master Redis Cluster that this class starts, plus slot checks. */
class RedisClusterIT implements AllLockContracts {
    @RegisterExtension
    static final RedisCluster cluster = RedisCluster.withMasters(3);

    private static final KeyLayout layout = new KeyLayout("distlock:");
    private static ClusterAdmin admin;

    @BeforeAll
    static void connect() {
        admin = ClusterAdmin.connect(cluster);
    }

    @AfterAll
    static void disconnect() {
        admin.close();
    }

    private static RedisAdvancedClusterCommands<String, String> sync() {
        return admin.sync();
    }

    @Override
    public LockClient createClient(Duration watchdogLease) {
        return RedisLockClient.builder()
                .cluster(cluster.uris().toArray(String[]::new))
                .leaseTime(watchdogLease)
                .build();
    }

    @Override
    public void expireHold(String name) {
        RedisKeys.expireHold(sync(), layout, name);
    }

    @Override
    public List<String> residue(String name) {
        return RedisKeys.residue(sync(), layout, name);
    }

    @Test
    void keysOfOneLock_shareOneSlotAndNode_evenForHostileNames() throws Exception {
        LockClient client = newClient();
        for (String name :
                List.of("a{b}c", "}{", "{x}", "new\nline ✓", "y".repeat(io.distlock.internal.Checks.MAX_NAME_LENGTH))) {
            DistributedLock fair = client.fairLock(name);
            fair.lock();
            DistributedLock other = newClient().fairLock(name);
            Thread waiter = new Thread(() -> {
                try {
                    if (other.tryLock(300, java.util.concurrent.TimeUnit.MILLISECONDS)) {
                        other.unlock();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            waiter.start();
            Thread.sleep(100); // the waiter is queued: hold, fence, queue and waiters keys all exist
            List<String> keys = RedisKeys.scan(sync(), layout.namePattern(name));
            assertThat(keys).hasSizeGreaterThanOrEqualTo(4);
            Set<Long> slots = new HashSet<>();
            for (String key : keys) {
                slots.add(sync().clusterKeyslot(key));
            }
            assertThat(slots).as("slots of %s", keys).hasSize(1);
            waiter.join(5000);
            fair.unlock();
        }
    }

    @Test
    void renew_holdsOnAllNodes_keptAlive() throws Exception {
        LockClient client = newClient(Duration.ofMillis(900));
        List<LockHold> holds = new ArrayList<>();
        Set<Integer> nodes = new HashSet<>();
        for (int i = 0; i < 60; i++) {
            String name = "cluster-renew-" + i;
            holds.add(client.lock(name).acquire());
            String key = RedisKeys.holdKey(layout, name);
            nodes.add(admin.partitions()
                    .getPartitionBySlot(io.lettuce.core.cluster.SlotHash.getSlot(key))
                    .getUri()
                    .getPort());
        }
        assertThat(nodes).as("holds spread over the masters").hasSize(3);
        Thread.sleep(2500); // beyond two leases: only the watchdog keeps them
        for (LockHold h : holds) {
            assertThat(h.isValid()).isTrue();
            h.release();
        }
    }

    /**
     * Wake-ups by sharded pub/sub (Redis 7): the waiting client's channel is in the lock's slot, SSUBSCRIBEd on the
     * node that serves it, and no classic channel exists anywhere; the release reaches the waiter through it at once
     * (its own retry would come only at the end of the holder's 30 s lease).
     */
    @Test
    void wakeUps_useShardedPubSub_onTheNodeOfTheLocksSlot() throws Exception {
        String name = "sharded-wake";
        RedisLockClient waiterClient = (RedisLockClient) newClient();
        DistributedLock held = newClient().lock(name);
        held.lock();
        CountDownLatch acquired = new CountDownLatch(1);
        Thread waiter = new Thread(() -> {
            DistributedLock lock = waiterClient.lock(name);
            try {
                if (lock.tryLock(30, TimeUnit.SECONDS)) {
                    acquired.countDown();
                    lock.unlock();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        waiter.start();
        try {
            String tag = layout.tag(name);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (sync().zcard(KeyLayout.key(tag, KeyLayout.WAKE_ORDER)) < 1) {
                assertThat(System.nanoTime()).as("the waiter registered").isLessThan(deadline);
                Thread.sleep(10);
            }
            String channel = waiterClient.store().wakeChannel(tag);
            int slot = SlotHash.getSlot(channel);
            assertThat(slot).as("the channel is in the lock's slot").isEqualTo(SlotHash.getSlot(tag));
            int port = admin.partitions().getPartitionBySlot(slot).getUri().getPort();
            assertThat(RedisServer.command(port, "PUBSUB", "SHARDNUMSUB", channel))
                    .as("SSUBSCRIBEd on the node of slot %d (port %d)", slot, port)
                    .isEqualTo(channel + "\n1");
            for (int p : cluster.ports()) {
                assertThat(RedisServer.command(p, "PUBSUB", "CHANNELS"))
                        .as("classic channels on %d", p)
                        .isEmpty();
            }
            held.unlock();
            assertThat(acquired.await(5, TimeUnit.SECONDS))
                    .as("woken by SPUBLISH")
                    .isTrue();
        } finally {
            waiter.join(10_000);
        }
    }

    /**
     * The lock's slot moves to another master while a client waits: the old master unsubscribes the client's shard
     * channel (SUNSUBSCRIBE), the client subscribes it on the new master, and the release there still wakes it.
     */
    @Test
    void slotMovesWhileWaiting_shardChannelFollows_releaseStillWakes() throws Exception {
        String name = "sharded-move";
        RedisLockClient waiterClient = (RedisLockClient) newClient();
        DistributedLock held = newClient().lock(name);
        held.lock();
        CountDownLatch acquired = new CountDownLatch(1);
        Thread waiter = new Thread(() -> {
            DistributedLock lock = waiterClient.lock(name);
            try {
                if (lock.tryLock(30, TimeUnit.SECONDS)) {
                    acquired.countDown();
                    lock.unlock();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        waiter.start();
        try {
            String tag = layout.tag(name);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (sync().zcard(KeyLayout.key(tag, KeyLayout.WAKE_ORDER)) < 1) {
                assertThat(System.nanoTime()).as("the waiter registered").isLessThan(deadline);
                Thread.sleep(10);
            }
            String channel = waiterClient.store().wakeChannel(tag);
            int slot = SlotHash.getSlot(tag);
            int from = admin.partitions().getPartitionBySlot(slot).getUri().getPort();
            int to = cluster.ports().stream().filter(p -> p != from).findFirst().orElseThrow();
            moveSlot(slot, from, to);
            while (!RedisServer.command(to, "PUBSUB", "SHARDNUMSUB", channel).equals(channel + "\n1")) {
                assertThat(System.nanoTime())
                        .as("subscribed again on the new master")
                        .isLessThan(deadline);
                Thread.sleep(20);
            }
            assertThat(RedisServer.command(from, "PUBSUB", "SHARDNUMSUB", channel))
                    .isEqualTo(channel + "\n0");
            held.unlock();
            assertThat(acquired.await(5, TimeUnit.SECONDS))
                    .as("woken by SPUBLISH on the new master")
                    .isTrue();
        } finally {
            waiter.join(10_000);
        }
    }

    /** Moves one slot and its keys from one master to another (CLUSTER SETSLOT IMPORTING/MIGRATING, MIGRATE, NODE). */
    private static void moveSlot(int slot, int from, int to) {
        String fromId = RedisServer.command(from, "CLUSTER", "MYID");
        String toId = RedisServer.command(to, "CLUSTER", "MYID");
        String s = Integer.toString(slot);
        assertThat(RedisServer.command(to, "CLUSTER", "SETSLOT", s, "IMPORTING", fromId))
                .isEqualTo("OK");
        assertThat(RedisServer.command(from, "CLUSTER", "SETSLOT", s, "MIGRATING", toId))
                .isEqualTo("OK");
        String keys = RedisServer.command(from, "CLUSTER", "GETKEYSINSLOT", s, "100");
        if (!keys.isEmpty()) {
            List<String> migrate =
                    new ArrayList<>(List.of("MIGRATE", "127.0.0.1", Integer.toString(to), "", "0", "5000", "KEYS"));
            migrate.addAll(List.of(keys.split("\n")));
            assertThat(RedisServer.command(from, migrate.toArray(String[]::new)))
                    .isEqualTo("OK");
        }
        for (int p : List.of(to, from)) {
            assertThat(RedisServer.command(p, "CLUSTER", "SETSLOT", s, "NODE", toId))
                    .isEqualTo("OK");
        }
        for (int p : cluster.ports()) {
            if (p != to && p != from) {
                assertThat(RedisServer.command(p, "CLUSTER", "SETSLOT", s, "NODE", toId))
                        .isEqualTo("OK");
            }
        }
    }
}
