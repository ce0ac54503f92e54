package io.distlock.safety;

import io.distlock.testkit.server.RedisCluster;
import io.distlock.testkit.server.RedisSentinelSet;
import io.distlock.testkit.server.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** The Redis topologies: one server, a Sentinel set (master, 2 replicas, 3 Sentinels), a Cluster of 3+3 nodes. */
final class RedisStores {
    static final Duration LEASE = Duration.ofSeconds(2);

    private RedisStores() {}

    /** Keys under {@code prefix} on the Redis at {@code port} other than fence counters. */
    static List<String> keys(int port, String prefix) {
        List<String> found = new ArrayList<>();
        String cursor = "0";
        do {
            String[] reply = RedisServer.command(port, "SCAN", cursor, "MATCH", prefix + "*", "COUNT", "1000")
                    .split("\n");
            cursor = reply[0];
            for (int i = 1; i < reply.length; i++) {
                if (!reply[i].isEmpty() && !reply[i].endsWith(":fence")) {
                    found.add(reply[i]);
                }
            }
        } while (!cursor.equals("0"));
        return found;
    }

    /** A single {@code redis-server}; extra arguments choose its persistence. */
    static final class Standalone extends Store {
        final RedisServer server;

        Standalone(String... args) {
            server = RedisServer.started(args);
        }

        @Override
        String name() {
            return "redis";
        }

        @Override
        List<Integer> ports() {
            return List.of(server.port());
        }

        @Override
        String spec(String clientId, String prefix, List<Integer> ports) {
            return Clients.spec(
                    "kind",
                    "redis",
                    "uri",
                    "redis://127.0.0.1:" + ports.get(0),
                    "prefix",
                    prefix,
                    "lease",
                    Long.toString(LEASE.toMillis()),
                    "id",
                    clientId);
        }

        @Override
        String prefix(String scenarioId) {
            return scenarioId + ":";
        }

        @Override
        Duration expiry() {
            return LEASE;
        }

        @Override
        Duration renewInterval() {
            return LEASE.dividedBy(3);
        }

        @Override
        Leftovers leftovers(String prefix) {
            List<String> keys = keys(server.port(), prefix);
            return new Leftovers(keys.size(), String.join(", ", keys));
        }

        @Override
        public void close() {
            server.close();
        }
    }

    /** A master with two replicas watched by three Sentinels; clients find the master through the Sentinels. */
    static final class Sentinel extends Store {
        final RedisSentinelSet set;

        Sentinel() {
            set = RedisSentinelSet.of(2, 3).start();
        }

        @Override
        String name() {
            return "redis-sentinel";
        }

        @Override
        List<Integer> ports() {
            return set.sentinelPorts();
        }

        @Override
        boolean proxiable() {
            return false;
        }

        @Override
        String spec(String clientId, String prefix, List<Integer> ports) {
            return Clients.spec(
                    "kind",
                    "redis",
                    "uri",
                    set.sentinelUri(),
                    "prefix",
                    prefix,
                    "lease",
                    Long.toString(LEASE.toMillis()),
                    "id",
                    clientId);
        }

        @Override
        String prefix(String scenarioId) {
            return scenarioId + ":";
        }

        @Override
        Duration expiry() {
            return LEASE;
        }

        @Override
        Duration renewInterval() {
            return LEASE.dividedBy(3);
        }

        @Override
        Leftovers leftovers(String prefix) {
            List<String> keys = keys(set.masterPort(), prefix);
            return new Leftovers(keys.size(), String.join(", ", keys));
        }

        @Override
        boolean soundTokens() {
            return false; // a failover can lose the last INCR of the fence counter
        }

        @Override
        public void close() {
            set.close();
        }
    }

    /** Three masters with a replica each. */
    static final class Cluster extends Store {
        final RedisCluster cluster;

        Cluster() {
            cluster = RedisCluster.withMastersAndReplicas(3, 1).start();
        }

        @Override
        String name() {
            return "redis-cluster";
        }

        @Override
        List<Integer> ports() {
            return cluster.ports();
        }

        @Override
        boolean proxiable() {
            return false;
        }

        @Override
        String spec(String clientId, String prefix, List<Integer> ports) {
            return Clients.spec(
                    "kind",
                    "redis-cluster",
                    "uri",
                    String.join(",", cluster.uris()),
                    "prefix",
                    prefix,
                    "lease",
                    Long.toString(LEASE.toMillis()),
                    "id",
                    clientId);
        }

        @Override
        String prefix(String scenarioId) {
            return scenarioId + ":";
        }

        @Override
        Duration expiry() {
            return LEASE;
        }

        @Override
        Duration renewInterval() {
            return LEASE.dividedBy(3);
        }

        @Override
        Leftovers leftovers(String prefix) {
            List<String> all = new ArrayList<>();
            for (int port : cluster.ports()) {
                if (RedisServer.command(port, "ROLE").startsWith("master")) {
                    all.addAll(keys(port, prefix));
                }
            }
            return new Leftovers(all.size(), String.join(", ", all));
        }

        @Override
        boolean soundTokens() {
            return false;
        }

        @Override
        public void close() {
            cluster.close();
        }
    }
}
