package io.distlock.redis;

import io.distlock.testkit.server.RedisCluster;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import io.lettuce.core.cluster.models.partitions.Partitions;
import java.time.Duration;

/** A plain Lettuce connection to a test's Redis Cluster, to look at keys and topology beside the client under test. */
final class ClusterAdmin implements AutoCloseable {
    private final RedisClusterClient lettuce;
    private final StatefulRedisClusterConnection<String, String> connection;

    private ClusterAdmin(RedisClusterClient lettuce) {
        this.lettuce = lettuce;
        this.connection = lettuce.connect();
    }

    static ClusterAdmin connect(RedisCluster cluster) {
        return new ClusterAdmin(
                RedisClusterClient.create(RedisURI.create(cluster.uris().get(0))));
    }

    RedisAdvancedClusterCommands<String, String> sync() {
        return connection.sync();
    }

    StatefulRedisClusterConnection<String, String> connection() {
        return connection;
    }

    /** The client's view of the topology (refresh it with {@link #refresh} after a change). */
    Partitions partitions() {
        return lettuce.getPartitions();
    }

    void refresh() {
        lettuce.refreshPartitions();
    }

    @Override
    public void close() {
        connection.close();
        lettuce.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }
}
