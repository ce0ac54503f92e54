package io.distlock.safety;

import io.distlock.testkit.server.EtcdCluster;
import io.distlock.testkit.server.EtcdServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;

/** The consensus stores: a ZooKeeper ensemble of 3 and an etcd cluster of 3. */
final class ConsensusStores {
    private ConsensusStores() {}

    /** Three ZooKeeper servers; sessions of 3 s. */
    static final class ZooKeeper extends Store {
        static final Duration SESSION = Duration.ofSeconds(3);
        final ZooKeeperEnsemble ensemble;

        ZooKeeper() {
            this(new ZooKeeperEnsemble(3).start(Duration.ofSeconds(90)));
        }

        /** On a started {@code ensemble} (one whose members run on fake clocks, say); closing closes it. */
        ZooKeeper(ZooKeeperEnsemble ensemble) {
            this.ensemble = ensemble;
        }

        @Override
        String name() {
            return "zookeeper";
        }

        @Override
        List<Integer> ports() {
            return ensemble.clientPorts();
        }

        @Override
        String spec(String clientId, String prefix, List<Integer> ports) {
            StringJoiner connect = new StringJoiner(",");
            ports.forEach(p -> connect.add("127.0.0.1:" + p));
            return Clients.spec(
                    "kind",
                    "zookeeper",
                    "uri",
                    connect.toString(),
                    "prefix",
                    prefix,
                    "session",
                    Long.toString(SESSION.toMillis()),
                    "id",
                    clientId);
        }

        @Override
        String prefix(String scenarioId) {
            return "/" + scenarioId;
        }

        @Override
        Duration expiry() {
            return SESSION.plusMillis(ZooKeeperEnsemble.TICK_MILLIS * 2L);
        }

        @Override
        Duration renewInterval() {
            return SESSION.dividedBy(9);
        }

        @Override
        Leftovers leftovers(String prefix) {
            return leftoversOn(ensemble.connectString(), prefix);
        }

        /** The lock nodes left under {@code prefix} on the ensemble at {@code connect}. */
        static Leftovers leftoversOn(String connect, String prefix) {
            try (CuratorFramework c = CuratorFrameworkFactory.newClient(connect, 5_000, 5_000, new RetryOneTime(200))) {
                c.start();
                if (!c.blockUntilConnected(10, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("cannot reach the ensemble to count leftovers");
                }
                String locks = prefix + "/locks";
                if (c.checkExists().forPath(locks) == null) {
                    return new Leftovers(0, "");
                }
                List<String> left = new ArrayList<>();
                for (String lock : c.getChildren().forPath(locks)) {
                    for (String child : c.getChildren().forPath(locks + "/" + lock)) {
                        left.add(lock + "/" + child);
                    }
                }
                return new Leftovers(left.size(), String.join(", ", left));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            } catch (Exception e) {
                throw new IllegalStateException("cannot count leftovers under " + prefix, e);
            }
        }

        @Override
        public void close() {
            ensemble.close();
        }
    }

    /** Three etcd members; leases of 2 s (3 s in etcd, which rounds up to whole seconds plus one). */
    static final class Etcd extends Store {
        static final Duration LEASE = Duration.ofSeconds(2);
        final EtcdCluster cluster;

        Etcd() {
            cluster = EtcdCluster.ofMembers(3).start();
        }

        @Override
        String name() {
            return "etcd";
        }

        @Override
        List<Integer> ports() {
            List<Integer> ports = new ArrayList<>();
            for (String e : cluster.endpoints().split(",")) {
                ports.add(Integer.parseInt(e.substring(e.lastIndexOf(':') + 1)));
            }
            return ports;
        }

        @Override
        String spec(String clientId, String prefix, List<Integer> ports) {
            return clientSpec(clientId, prefix, ports);
        }

        /** A worker's etcd client of the members on {@code ports}, with this suite's lease and request timeout. */
        static String clientSpec(String clientId, String prefix, List<Integer> ports) {
            StringJoiner endpoints = new StringJoiner(",");
            ports.forEach(p -> endpoints.add("http://127.0.0.1:" + p));
            return Clients.spec(
                    "kind",
                    "etcd",
                    "uri",
                    endpoints.toString(),
                    "prefix",
                    prefix,
                    "lease",
                    Long.toString(LEASE.toMillis()),
                    "timeout",
                    "5000",
                    "id",
                    clientId);
        }

        @Override
        String prefix(String scenarioId) {
            return "safety/" + scenarioId + "/";
        }

        @Override
        Duration expiry() {
            return Duration.ofSeconds(3);
        }

        @Override
        Duration renewInterval() {
            return LEASE.dividedBy(3);
        }

        @Override
        Leftovers leftovers(String prefix) {
            String out = EtcdServer.etcdctlAt(cluster.endpoints(), "get", "--prefix", prefix, "--keys-only");
            List<String> keys = out.lines().filter(l -> !l.isBlank()).toList();
            return new Leftovers(keys.size(), String.join(", ", keys));
        }

        @Override
        public void close() {
            cluster.close();
        }
    }
}
