package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedLock;
import io.distlock.LockClient;
import io.distlock.LockHold;
import io.distlock.testkit.AllLockContracts;
import io.distlock.testkit.server.RedisCluster;
import io.distlock.testkit.server.RedisServer;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The contract suite on a 3-master Redis Cluster that this class starts, plus slot checks. */
class RedisClusterIT implements AllLockContracts {
    @RegisterExtension
    static final RedisCluster cluster = RedisCluster.withMasters(3);

    private static final KeyLayout layout = new KeyLayout("distlock:");
    private static RedisClusterClient lettuce;
    private static StatefulRedisClusterConnection<String, String> connection;

    @BeforeAll
    static void connect() {
        lettuce = RedisClusterClient.create(RedisURI.create(cluster.uris().get(0)));
        connection = lettuce.connect();
    }

    @AfterAll
    static void disconnect() {
        connection.close();
        lettuce.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }

    private static RedisAdvancedClusterCommands<String, String> sync() {
        return connection.sync();
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
        for (String name : List.of("a{b}c", "}{", "{x}", "new\nline ✓", "y".repeat(10_000))) {
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
            nodes.add(lettuce.getPartitions()
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

    @Test
    void cluster_isReallyACluster() {
        assertThat(RedisServer.command(cluster.ports().get(0), "CLUSTER", "INFO"))
                .contains("cluster_state:ok")
                .contains("cluster_known_nodes:3");
    }
}
