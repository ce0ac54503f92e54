package io.distlock.safety;

import io.distlock.testkit.fault.FaultLog;
import io.distlock.testkit.fault.FaultProxy;
import io.distlock.testkit.server.EtcdServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The consensus stores with one network namespace per server ({@link NetNamespaces}), for partitions between servers
 * (Z3, E6): the same settings as {@link ConsensusStores} (3 s ZooKeeper sessions, tick 200 ms; 2 s etcd leases, 3 s in
 * etcd), but each member listens on its own namespace's address. Clients reach member {@code i} through a forwarding
 * proxy on 127.0.0.1 ({@link #ports()}), and the scenario's own fault proxies sit in front of those, so that a client
 * proxy's open connections tell which member a client talks to.
 */
final class PartitionStores {
    private PartitionStores() {}

    /** A store whose members can be cut off from each other. */
    abstract static class Partitioned extends Store {
        final NetNamespaces net;
        final List<@Nullable Process> processes = new ArrayList<>();
        final List<FaultProxy> forwarders = new ArrayList<>();
        final Path dir;

        Partitioned(int size, String tmpPrefix) {
            net = new NetNamespaces(size);
            try {
                dir = Files.createTempDirectory(tmpPrefix);
            } catch (IOException e) {
                net.close();
                throw new UncheckedIOException(e);
            }
            for (int i = 0; i < size; i++) {
                processes.add(null);
            }
        }

        abstract int clientPort();

        /** The member that is leader now, or -1. */
        abstract int leader();

        void forward() {
            for (int i = 0; i < net.size(); i++) {
                forwarders.add(FaultProxy.start("m" + i, net.address(i), clientPort(), FaultLog.NONE));
            }
        }

        @Override
        List<Integer> ports() {
            return forwarders.stream().map(FaultProxy::port).toList();
        }

        /** The member behind forwarder port {@code port}. */
        int memberOfPort(int port) {
            for (int i = 0; i < forwarders.size(); i++) {
                if (forwarders.get(i).port() == port) {
                    return i;
                }
            }
            throw new IllegalArgumentException("no member behind port " + port);
        }

        Process launch(int i, List<String> command, String log) {
            try {
                Process p = new ProcessBuilder(net.inside(i, command))
                        .redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.appendTo(
                                dir.resolve(log).toFile()))
                        .start();
                processes.set(i, p);
                return p;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void close() {
            forwarders.forEach(FaultProxy::close);
            for (Process p : processes) {
                if (p != null) {
                    p.destroyForcibly();
                    try {
                        p.waitFor(10, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
            net.close();
            try (var files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder())
                        .forEach(f -> f.toFile().delete());
            } catch (IOException e) {
                // best effort
            }
        }

        static void sleep(long millis) {
            try {
                Thread.sleep(millis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
    }

    /** Three ZooKeeper servers ({@code QuorumPeerMain} JVMs), each in its own namespace; sessions of 3 s. */
    static final class ZooKeeper extends Partitioned {
        ZooKeeper() {
            super(3, "distlock-zk-netns-");
            try {
                for (int i = 0; i < net.size(); i++) {
                    Path data = dir.resolve("m" + i);
                    Files.createDirectories(data);
                    Files.writeString(data.resolve("myid"), Integer.toString(i + 1));
                    List<String> lines = new ArrayList<>(List.of(
                            "tickTime=" + ZooKeeperEnsemble.TICK_MILLIS,
                            "initLimit=25",
                            "syncLimit=10",
                            "dataDir=" + data,
                            "clientPort=" + clientPort(),
                            "clientPortAddress=" + net.address(i),
                            "maxClientCnxns=0",
                            "admin.enableServer=false",
                            "4lw.commands.whitelist=*",
                            "standaloneEnabled=false",
                            "reconfigEnabled=false"));
                    for (int j = 0; j < net.size(); j++) {
                        lines.add("server." + (j + 1) + "=" + net.address(j) + ":2888:3888");
                    }
                    Files.write(data.resolve("zoo.cfg"), lines);
                }
                for (int i = 0; i < net.size(); i++) {
                    launch(
                            i,
                            List.of(
                                    Path.of(System.getProperty("java.home"), "bin", "java")
                                            .toString(),
                                    "-Xmx192m",
                                    "-XX:+UseSerialGC",
                                    "-XX:TieredStopAtLevel=1",
                                    "-Dzookeeper.admin.enableServer=false",
                                    "-Dznode.container.checkIntervalMs=" + ZooKeeperEnsemble.CONTAINER_CHECK_MILLIS,
                                    "-cp",
                                    System.getProperty("java.class.path"),
                                    "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                                    dir.resolve("m" + i).resolve("zoo.cfg").toString()),
                            "m" + i + ".log");
                }
                awaitServing(Duration.ofSeconds(90));
                forward();
            } catch (IOException e) {
                close();
                throw new UncheckedIOException(e);
            } catch (RuntimeException e) {
                close();
                throw e;
            }
        }

        @Override
        int clientPort() {
            return 2181;
        }

        void awaitServing(Duration timeout) {
            long end = System.nanoTime() + timeout.toNanos();
            for (int i = 0; i < net.size(); i++) {
                while (!mode(i).matches("leader|follower")) {
                    if (System.nanoTime() - end > 0) {
                        throw new IllegalStateException("ZooKeeper member " + i + " not serving within " + timeout
                                + " (mode " + mode(i) + "); see " + dir);
                    }
                    sleep(100);
                }
            }
        }

        /** Member {@code i}'s {@code Mode:} as {@code srvr} reports it, or {@code down}. */
        String mode(int i) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(net.address(i), clientPort()), 500);
                s.setSoTimeout(1000);
                OutputStream out = s.getOutputStream();
                out.write("srvr".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                InputStream in = s.getInputStream();
                for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                    if (line.startsWith("Mode: ")) {
                        return line.substring(6).trim();
                    }
                }
                return "down";
            } catch (IOException e) {
                return "down";
            }
        }

        @Override
        int leader() {
            for (int i = 0; i < net.size(); i++) {
                if (mode(i).equals("leader")) {
                    return i;
                }
            }
            return -1;
        }

        @Override
        String name() {
            return "zookeeper";
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
                    Long.toString(ConsensusStores.ZooKeeper.SESSION.toMillis()),
                    "id",
                    clientId);
        }

        @Override
        String prefix(String scenarioId) {
            return "/" + scenarioId;
        }

        @Override
        Duration expiry() {
            return ConsensusStores.ZooKeeper.SESSION.plusMillis(ZooKeeperEnsemble.TICK_MILLIS * 2L);
        }

        @Override
        Duration renewInterval() {
            return ConsensusStores.ZooKeeper.SESSION.dividedBy(9);
        }

        @Override
        Leftovers leftovers(String prefix) {
            StringJoiner connect = new StringJoiner(",");
            ports().forEach(p -> connect.add("127.0.0.1:" + p));
            return ConsensusStores.ZooKeeper.leftoversOn(connect.toString(), prefix);
        }
    }

    /** Three etcd members, each in its own namespace; leases of 2 s (3 s in etcd). */
    static final class Etcd extends Partitioned {
        private static final Pattern STATUS =
                Pattern.compile("\"Endpoint\":\"[^\"]*\".*?\"member_id\":(\\d+).*?\"leader\":(\\d+)");

        Etcd() {
            super(3, "distlock-etcd-netns-");
            try {
                StringJoiner initial = new StringJoiner(",");
                for (int i = 0; i < net.size(); i++) {
                    initial.add("m" + i + "=" + peerUrl(i));
                }
                for (int i = 0; i < net.size(); i++) {
                    launch(
                            i,
                            List.of(
                                    System.getProperty("distlock.etcd.server", "etcd"),
                                    "--name",
                                    "m" + i,
                                    "--data-dir",
                                    dir.resolve("m" + i + ".etcd").toString(),
                                    "--listen-client-urls",
                                    clientUrl(i),
                                    "--advertise-client-urls",
                                    clientUrl(i),
                                    "--listen-peer-urls",
                                    peerUrl(i),
                                    "--initial-advertise-peer-urls",
                                    peerUrl(i),
                                    "--initial-cluster",
                                    initial.toString(),
                                    "--initial-cluster-state",
                                    "new",
                                    "--initial-cluster-token",
                                    "distlock-" + dir.getFileName(),
                                    "--heartbeat-interval",
                                    "50",
                                    "--election-timeout",
                                    "500",
                                    "--log-level",
                                    "warn"),
                            "m" + i + ".log");
                }
                long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (leader() < 0) {
                    if (System.nanoTime() - end > 0) {
                        throw new IllegalStateException("etcd members not serving within 60 s; see " + dir);
                    }
                    sleep(200);
                }
                forward();
            } catch (RuntimeException e) {
                close();
                throw e;
            }
        }

        String clientUrl(int i) {
            return "http://" + net.address(i) + ":" + clientPort();
        }

        String peerUrl(int i) {
            return "http://" + net.address(i) + ":2380";
        }

        @Override
        int clientPort() {
            return 2379;
        }

        /** The member every reachable member names as leader, or -1 while they disagree or none answers. */
        @Override
        int leader() {
            String[] ids = new String[net.size()];
            String leader = null;
            for (int i = 0; i < net.size(); i++) {
                String json;
                try {
                    json = EtcdServer.etcdctlAt(clientUrl(i), "--dial-timeout=1s", "endpoint", "status", "-w", "json");
                } catch (RuntimeException e) {
                    return -1;
                }
                Matcher m = STATUS.matcher(json);
                if (!m.find()) {
                    return -1;
                }
                ids[i] = m.group(1);
                String l = m.group(2);
                if (l.equals("0") || (leader != null && !l.equals(leader))) {
                    return -1;
                }
                leader = l;
            }
            for (int i = 0; i < ids.length; i++) {
                if (ids[i].equals(leader)) {
                    return i;
                }
            }
            return -1;
        }

        @Override
        String name() {
            return "etcd";
        }

        @Override
        String spec(String clientId, String prefix, List<Integer> ports) {
            return ConsensusStores.Etcd.clientSpec(clientId, prefix, ports);
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
            return ConsensusStores.Etcd.LEASE.dividedBy(3);
        }

        /** The keys under {@code prefix} with their create revision and lease, for the schedule. */
        String describeKeys(String prefix) {
            try {
                String out = EtcdServer.etcdctlAt(endpoints(), "get", "--prefix", prefix, "-w", "fields");
                StringJoiner j = new StringJoiner("; ");
                for (String line : out.split("\n")) {
                    if (line.startsWith("\"Key\"")
                            || line.startsWith("\"CreateRevision\"")
                            || line.startsWith("\"Lease\"")) {
                        j.add(line.replace("\"", "").replace(" ", ""));
                    }
                }
                return j.toString();
            } catch (RuntimeException e) {
                return "(cannot list: " + e.getMessage() + ")";
            }
        }

        private String endpoints() {
            StringJoiner endpoints = new StringJoiner(",");
            for (int i = 0; i < net.size(); i++) {
                endpoints.add(clientUrl(i));
            }
            return endpoints.toString();
        }

        @Override
        Leftovers leftovers(String prefix) {
            StringJoiner endpoints = new StringJoiner(",");
            for (int i = 0; i < net.size(); i++) {
                endpoints.add(clientUrl(i));
            }
            String out = EtcdServer.etcdctlAt(endpoints.toString(), "get", "--prefix", prefix, "--keys-only");
            List<String> keys = out.lines().filter(l -> !l.isBlank()).toList();
            return new Leftovers(keys.size(), String.join(", ", keys));
        }
    }

    /**
     * S2's topology: a Redis master (member 0 at the start), two replicas (1, 2) and three Sentinels (3, 4, 5; quorum
     * 2, master down after 1 s), each {@code redis-server} in a namespace of its own, and two namespaces without a
     * server (6, 7) for client JVMs, so that a partition can put clients on either side. Clients find the master
     * through the Sentinels; leases of 2 s as {@link RedisStores}.
     */
    static final class Sentinel extends Partitioned {
        static final int SENTINEL_PORT = 26379;
        /** The member of the Sentinel a scenario puts on the minority side with the master. */
        static final int MINORITY_SENTINEL = 3;
        /** The namespaces for client JVMs: one for the minority side, one for the majority side. */
        static final int MINORITY_CLIENTS = 6;

        static final int MAJORITY_CLIENTS = 7;

        Sentinel() {
            super(8, "distlock-sentinel-netns-");
            try {
                for (int i = 0; i < 3; i++) {
                    List<String> command = new ArrayList<>(List.of(
                            System.getProperty("distlock.redis.server", "redis-server"),
                            "--port",
                            Integer.toString(clientPort()),
                            "--bind",
                            net.address(i),
                            "--protected-mode",
                            "no",
                            "--save",
                            "",
                            "--appendonly",
                            "no",
                            "--repl-diskless-sync",
                            "yes",
                            "--repl-diskless-sync-delay",
                            "0",
                            "--dir",
                            dir.toString(),
                            "--dbfilename",
                            "m" + i + ".rdb",
                            "--logfile",
                            dir.resolve("redis-m" + i + ".log").toString()));
                    if (i > 0) {
                        command.addAll(List.of("--replicaof", net.address(0), Integer.toString(clientPort())));
                    }
                    launch(i, command, "m" + i + ".out");
                }
                for (int i = 3; i < 6; i++) {
                    Path conf = dir.resolve("sentinel-m" + i + ".conf");
                    Files.writeString(
                            conf,
                            String.join(
                                    "\n",
                                    "port " + SENTINEL_PORT,
                                    "bind " + net.address(i),
                                    "protected-mode no",
                                    "dir " + dir,
                                    "logfile " + dir.resolve("sentinel-m" + i + ".log"),
                                    "sentinel monitor mymaster " + net.address(0) + " " + clientPort() + " 2",
                                    "sentinel down-after-milliseconds mymaster 1000",
                                    "sentinel failover-timeout mymaster 5000",
                                    "sentinel parallel-syncs mymaster 1",
                                    ""));
                    launch(
                            i,
                            List.of(
                                    System.getProperty("distlock.redis.server", "redis-server"),
                                    conf.toString(),
                                    "--sentinel"),
                            "m" + i + ".out");
                }
                awaitSettled(Duration.ofSeconds(60));
            } catch (IOException e) {
                close();
                throw new UncheckedIOException(e);
            } catch (RuntimeException e) {
                close();
                throw e;
            }
        }

        @Override
        int clientPort() {
            return 6379;
        }

        /** The command prefix that runs a program in member {@code i}'s namespace. */
        List<String> launcher(int i) {
            return net.inside(i, List.of());
        }

        /** One command to member {@code i}'s server (its Sentinel for members 3 to 5); {@code -down} if unreachable. */
        String command(int i, String... args) {
            try {
                return io.distlock.testkit.server.RedisServer.command(
                        java.net.InetAddress.getByName(net.address(i)), i >= 3 ? SENTINEL_PORT : clientPort(), args);
            } catch (UncheckedIOException | IOException e) {
                return "-down " + e.getMessage();
            }
        }

        /** The first line of {@code ROLE} of data member {@code i}: master, slave, or -down. */
        String role(int i) {
            return command(i, "ROLE").split("\n")[0];
        }

        /** The data member the Sentinel of member {@code sentinel} names master, or -1. */
        int masterNamedBy(int sentinel) {
            String[] addr = command(sentinel, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster")
                    .split("\n");
            for (int i = 0; i < 3; i++) {
                if (addr[0].equals(net.address(i))) {
                    return i;
                }
            }
            return -1;
        }

        /** The master every Sentinel names, or -1 while they disagree or one does not answer. */
        @Override
        int leader() {
            int named = masterNamedBy(3);
            for (int s = 4; s < 6; s++) {
                if (masterNamedBy(s) != named) {
                    return -1;
                }
            }
            return named;
        }

        /**
         * Waits until every Sentinel names the same master, which says it is master and sees both replicas online,
         * each replica's link to it is up, and every Sentinel knows the other two and both replicas.
         */
        void awaitSettled(Duration bound) {
            long end = System.nanoTime() + bound.toNanos();
            String last = "";
            while (true) {
                int m = leader();
                if (m >= 0 && role(m).equals("master")) {
                    String info = command(m, "INFO", "replication");
                    long online = info.lines()
                            .filter(l -> l.matches("slave\\d+:.*state=online.*"))
                            .count();
                    boolean linked = true;
                    boolean known = true;
                    for (int i = 0; i < 3; i++) {
                        if (i != m) {
                            linked &= command(i, "INFO", "replication").contains("master_link_status:up");
                        }
                    }
                    for (int s = 3; s < 6; s++) {
                        String master = command(s, "SENTINEL", "MASTER", "mymaster");
                        known &= master.contains("num-other-sentinels\n2") && master.contains("num-slaves\n2");
                    }
                    if (online == 2 && linked && known) {
                        return;
                    }
                    last = "master m" + m + ", " + online + " replicas online, linked " + linked + ", sentinels "
                            + known;
                } else {
                    last = "master " + m + (m >= 0 ? " says " + role(m) : "");
                }
                if (System.nanoTime() - end > 0) {
                    throw new IllegalStateException(
                            "Sentinel set not settled within " + bound + " (" + last + "); see " + dir);
                }
                sleep(200);
            }
        }

        /** Sets {@code min-replicas-to-write} on every data node ({@code min-replicas-max-lag} 2 s). */
        void minReplicasToWrite(int n) {
            for (int i = 0; i < 3; i++) {
                String a = command(i, "CONFIG", "SET", "min-replicas-to-write", Integer.toString(n));
                String b = command(i, "CONFIG", "SET", "min-replicas-max-lag", "2");
                if (!a.equals("OK") || !b.equals("OK")) {
                    throw new IllegalStateException("CONFIG SET on m" + i + ": " + a + ", " + b);
                }
            }
        }

        /** The keys under {@code prefix} on data member {@code i} other than fence counters. */
        List<String> keysOn(int i, String prefix) {
            List<String> found = new ArrayList<>();
            String cursor = "0";
            do {
                String reply = command(i, "SCAN", cursor, "MATCH", prefix + "*", "COUNT", "1000");
                if (reply.startsWith("-")) {
                    throw new IllegalStateException("SCAN on m" + i + ": " + reply);
                }
                String[] items = reply.split("\n");
                cursor = items[0];
                for (int k = 1; k < items.length; k++) {
                    if (!items[k].isEmpty() && !items[k].endsWith(":fence")) {
                        found.add(items[k]);
                    }
                }
            } while (!cursor.equals("0"));
            return found;
        }

        @Override
        String name() {
            return "redis-sentinel";
        }

        @Override
        boolean proxiable() {
            return false;
        }

        /**
         * Sentinels of the majority side first: a client asks them in this order when it (re)connects, so a client
         * of the minority side that reconnects after the heal learns the new master at once.
         */
        @Override
        String spec(String clientId, String prefix, List<Integer> ports) {
            return Clients.spec(
                    "kind",
                    "redis",
                    "uri",
                    "redis-sentinel://" + net.address(4) + ":" + SENTINEL_PORT + "," + net.address(5) + ":"
                            + SENTINEL_PORT + "," + net.address(3) + ":" + SENTINEL_PORT + "#mymaster",
                    "prefix",
                    prefix,
                    "lease",
                    Long.toString(RedisStores.LEASE.toMillis()),
                    "id",
                    clientId);
        }

        @Override
        String prefix(String scenarioId) {
            return scenarioId + ":";
        }

        @Override
        Duration expiry() {
            return RedisStores.LEASE;
        }

        @Override
        Duration renewInterval() {
            return RedisStores.LEASE.dividedBy(3);
        }

        /** Lock keys on every data node: after a split-brain, the old master's own keys count too. */
        @Override
        Leftovers leftovers(String prefix) {
            List<String> all = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                for (String k : keysOn(i, prefix)) {
                    all.add("m" + i + ":" + k);
                }
            }
            return new Leftovers(all.size(), String.join(", ", all));
        }

        @Override
        boolean soundTokens() {
            return false; // the two sides of a split-brain both count on from the last replicated fence value
        }
    }
}
