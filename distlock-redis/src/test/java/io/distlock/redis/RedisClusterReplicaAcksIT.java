package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLock;
import io.distlock.DistributedLockException;
import io.distlock.LockClient;
import io.distlock.testkit.server.RedisCluster;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code replicaAcks} on a Cluster of 3 masters with a replica each: the grant and its {@code WAIT} go to the master of
 * the name's slot, so a stopped replica of that master fails the grant loudly and leaves nothing behind.
 */
class RedisClusterReplicaAcksIT {
    @RegisterExtension
    static final RedisCluster cluster = RedisCluster.withMastersAndReplicas(3, 1);

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

    private static String holdKey(String name) {
        return KeyLayout.key(layout.tag(name), KeyLayout.HOLD);
    }

    private static RedisClusterNode masterOf(String key) {
        RedisClusterNode master = admin.partitions().getMasterBySlot(SlotHash.getSlot(key));
        assertThat(master).as("master of %s", key).isNotNull();
        return master;
    }

    private static RedisClusterNode replicaOf(RedisClusterNode master) {
        for (RedisClusterNode node : admin.partitions()) {
            if (master.getNodeId().equals(node.getSlaveOf())) {
                return node;
            }
        }
        throw new AssertionError("no replica of " + master.getUri() + " in " + admin.partitions());
    }

    private LockClient client(int minReplicas, Duration timeout) {
        return RedisLockClient.builder()
                .cluster(cluster.uris().toArray(String[]::new))
                .replicaAcks(minReplicas, timeout)
                .build();
    }

    @Test
    void replicaAcks_met_onEveryMaster_grantsAsUsual_andTheSlotsReplicaHasTheHold() throws Exception {
        try (LockClient client = client(1, Duration.ofSeconds(2))) {
            Set<Integer> masters = new HashSet<>();
            for (int i = 0; masters.size() < 3 && i < 200; i++) {
                String name = "acks-met-" + i;
                RedisClusterNode master = masterOf(holdKey(name));
                if (!masters.add(master.getUri().getPort())) {
                    continue;
                }
                DistributedLock lock = client.lock(name);
                assertThat(lock.tryLock(2, TimeUnit.SECONDS)).isTrue();
                assertThat(lock.fencingToken()).isPositive();
                RedisCommands<String, String> replica = admin.connection()
                        .getConnection(replicaOf(master).getNodeId())
                        .sync();
                replica.readOnly();
                assertThat(replica.get(holdKey(name)))
                        .as("the hold of %s on the replica of its master", name)
                        .isNotNull();
                lock.unlock();
            }
            assertThat(masters).as("names on every master").hasSize(3);
        }
    }

    @Test
    void replicaAcks_theSlotsReplicaStopped_throwsClearly_andLeavesNoHold() throws Exception {
        String name = "acks-stopped";
        String key = holdKey(name);
        int replicaPort = replicaOf(masterOf(key)).getUri().getPort();
        try (LockClient client = client(1, Duration.ofMillis(300));
                LockClient other = RedisLockClient.builder()
                        .cluster(cluster.uris().toArray(String[]::new))
                        .build()) {
            DistributedLock lock = client.lock(name);
            // one grant first, while the replica runs: afterwards, a WAIT sent anywhere but on the connection that
            // wrote
            // the next grant (routed to another master, or on a connection without that write) returns at once
            assertThat(lock.tryLock(2, TimeUnit.SECONDS)).isTrue();
            lock.unlock();
            cluster.pause(replicaPort);
            try {
                assertThatThrownBy(lock::tryLock)
                        .isInstanceOf(DistributedLockException.class)
                        .hasMessageContaining("only 0 of the required 1 replicas");
                assertThat(lock.isHeldByCurrentThread()).isFalse();
                assertThat(admin.sync().exists(key))
                        .as("hold left on the master")
                        .isZero();
            } finally {
                cluster.resume(replicaPort);
            }
            DistributedLock theirs = other.lock(name);
            assertThat(theirs.tryLock(2, TimeUnit.SECONDS))
                    .as("no silent grant blocks others")
                    .isTrue();
            theirs.unlock();
        }
    }
}
