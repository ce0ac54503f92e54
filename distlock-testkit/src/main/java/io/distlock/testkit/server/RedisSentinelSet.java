package io.distlock.testkit.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One Redis master, its replicas and a quorum of Sentinels, all real processes on free loopback ports, ready when
 * {@link #start()} returns: the replicas are in sync and every Sentinel knows the master, the replicas and the other
 * Sentinels. A JUnit 5 extension like {@link RedisServer}.
 *
 * <p>Options, set before the start: {@link #withUser} adds an ACL user to every data node, {@link #withTls} gives every
 * node a TLS port beside its plain one, and makes replication, the Sentinels' own connections and the addresses the
 * Sentinels report use TLS, so a client that connects through {@link #tlsSentinelUri(String)} speaks TLS only. The plain
 * ports keep the {@code default} user open: the launcher's own checks, the replicas and the Sentinels use them.
 */
public final class RedisSentinelSet implements BeforeAllCallback, AfterAllCallback, AutoCloseable {
    /** The master name the Sentinels monitor. */
    public static final String MASTER_NAME = "mymaster";

    private static final Duration READY_TIMEOUT = io.distlock.testkit.Timing.seconds(60);

    private final int replicas;
    private final int sentinels;
    private final List<Process> processes = new ArrayList<>();
    private final List<Integer> dataPorts = new ArrayList<>();
    private final List<Integer> sentinelPorts = new ArrayList<>();
    /** The TLS port of each node, by its plain port. */
    private final Map<Integer, Integer> tlsPorts = new HashMap<>();

    private final List<String> userArgs = new ArrayList<>();
    private @Nullable TestCertificates tls;
    private @Nullable Path dir;

    private RedisSentinelSet(int replicas, int sentinels) {
        this.replicas = replicas;
        this.sentinels = sentinels;
    }

    /** A master with {@code replicas} replicas watched by {@code sentinels} Sentinels (quorum: a majority). */
    public static RedisSentinelSet of(int replicas, int sentinels) {
        if (replicas < 1 || sentinels < 1) {
            throw new IllegalArgumentException(
                    "need at least one replica and one sentinel: " + replicas + ", " + sentinels);
        }
        return new RedisSentinelSet(replicas, sentinels);
    }

    /**
     * Adds the ACL user {@code name} with {@code password} and the given rules ({@code "~distlock:*"}, {@code
     * "+eval"}, ...) to every data node. Call before the start.
     */
    public synchronized RedisSentinelSet withUser(String name, String password, String... rules) {
        notStarted();
        userArgs.addAll(List.of("--user", name, "on", ">" + password));
        userArgs.addAll(List.of(rules));
        return this;
    }

    /**
     * Gives every node a TLS port with the server certificate of {@code certs} (clients need no certificate) and
     * makes replication and the Sentinels use TLS: the master address the Sentinels report is its TLS port. Call
     * before the start.
     */
    public synchronized RedisSentinelSet withTls(TestCertificates certs) {
        notStarted();
        this.tls = certs;
        return this;
    }

    private void notStarted() {
        if (!processes.isEmpty()) {
            throw new IllegalStateException("set the options before the start");
        }
    }

    /** The {@code redis-server} options of a TLS port and of TLS for outgoing connections, or none. */
    private List<String> tlsArgs(int port) {
        TestCertificates certs = tls;
        if (certs == null) {
            return List.of();
        }
        int tlsPort = RedisServer.freePort();
        tlsPorts.put(port, tlsPort);
        return List.of(
                "--tls-port",
                Integer.toString(tlsPort),
                "--tls-cert-file",
                certs.serverCert().toString(),
                "--tls-key-file",
                certs.serverKey().toString(),
                "--tls-ca-cert-file",
                certs.caCert().toString(),
                "--tls-auth-clients",
                "no",
                "--tls-replication",
                "yes");
    }

    /** The port other nodes and clients reach {@code port}'s node at: its TLS port with TLS, else itself. */
    private int advertised(int port) {
        return tlsPorts.getOrDefault(port, port);
    }

    public synchronized RedisSentinelSet start() {
        if (!processes.isEmpty()) {
            return this;
        }
        try {
            Path d = Files.createTempDirectory("distlock-redis-sentinel-");
            dir = d;
            int masterPort = startData(d, null);
            for (int i = 0; i < replicas; i++) {
                startData(d, masterPort);
            }
            awaitReplicasOnline(masterPort);
            int quorum = sentinels / 2 + 1;
            for (int i = 0; i < sentinels; i++) {
                int port = RedisServer.freePort();
                Path conf = d.resolve("sentinel-" + port + ".conf");
                List<String> tlsArgs = tlsArgs(port);
                List<String> tlsLines = new ArrayList<>();
                for (int a = 0; a + 1 < tlsArgs.size(); a += 2) {
                    tlsLines.add(tlsArgs.get(a).substring(2) + " " + tlsArgs.get(a + 1));
                }
                Files.writeString(
                        conf,
                        String.join(
                                "\n",
                                "port " + port,
                                "bind 127.0.0.1",
                                "protected-mode no",
                                "dir " + d,
                                "logfile " + d.resolve("sentinel-" + port + ".log"),
                                String.join("\n", tlsLines),
                                "sentinel monitor " + MASTER_NAME + " 127.0.0.1 " + advertised(masterPort) + " "
                                        + quorum,
                                "sentinel down-after-milliseconds " + MASTER_NAME + " 1000",
                                "sentinel failover-timeout " + MASTER_NAME + " 5000",
                                "sentinel parallel-syncs " + MASTER_NAME + " 1",
                                ""));
                Process p = RedisServer.launch(
                        List.of(RedisServer.binary(), conf.toString(), "--sentinel"),
                        d.resolve("sentinel-" + port + ".out"));
                processes.add(p);
                sentinelPorts.add(port);
                if (!RedisServer.awaitPing(port, p, Duration.ofSeconds(10))) {
                    throw new IllegalStateException("sentinel did not start on port " + port + "; see " + d);
                }
            }
            awaitSentinelsKnowEachOther();
            return this;
        } catch (IOException e) {
            close();
            throw new UncheckedIOException(e);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    private int startData(Path d, @Nullable Integer masterPort) {
        int port = RedisServer.freePort();
        launchData(d, port, masterPort);
        dataPorts.add(port);
        return port;
    }

    private void launchData(Path d, int port, @Nullable Integer masterPort) {
        List<String> command = new ArrayList<>(List.of(
                RedisServer.binary(),
                "--port",
                Integer.toString(port),
                "--bind",
                "127.0.0.1",
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
                d.toString(),
                "--logfile",
                d.resolve("redis-" + port + ".log").toString()));
        command.addAll(tlsArgs(port));
        command.addAll(userArgs);
        if (masterPort != null) {
            command.addAll(List.of("--replicaof", "127.0.0.1", Integer.toString(advertised(masterPort))));
        }
        Process p = RedisServer.launch(command, d.resolve("redis-" + port + ".out"));
        processes.add(p);
        if (!RedisServer.awaitPing(port, p, Duration.ofSeconds(10))) {
            throw new IllegalStateException("redis-server did not start on port " + port + "; see " + d);
        }
    }

    /**
     * Starts the data node of {@code port} again, after it was killed, as an empty replica of the current master (what
     * Sentinel would make of a failed master that comes back, without its wait of several seconds), and waits until
     * every replica is in sync with the master.
     *
     * @throws IllegalArgumentException if {@code port} is not one of {@link #dataPorts()}
     * @throws IllegalStateException if a process still listens on it, or the replicas do not get in sync
     */
    public synchronized void restartAsReplica(int port) {
        Path d = dir;
        if (d == null || !dataPorts.contains(port)) {
            throw new IllegalArgumentException("not a data node of this set: " + port);
        }
        if (RedisServer.awaitPing(port, null, Duration.ofMillis(200))) {
            throw new IllegalStateException("the data node on " + port + " is still running");
        }
        int master = masterPort();
        if (master == port) {
            throw new IllegalStateException("Sentinel still names " + port + " the master");
        }
        launchData(d, port, master);
        awaitReplicasOnline(master);
    }

    /**
     * Waits until Sentinel's current master sees every replica online: after a failover the old master is turned into
     * a replica only after a while, and a test that needs replica acknowledgements must wait for that.
     */
    public void awaitReplicasInSync() {
        awaitReplicasOnline(masterPort());
    }

    private void awaitReplicasOnline(int masterPort) {
        awaitReplicasOnline(masterPort, System.nanoTime() + READY_TIMEOUT.toNanos());
    }

    /** Waits until the master sees every replica online and every replica's link to it is up. */
    private void awaitReplicasOnline(int masterPort, long deadline) {
        for (; ; ) {
            String info = RedisServer.command(masterPort, "INFO", "replication");
            long online = info.lines()
                    .filter(l -> l.matches("slave\\d+:.*state=online.*"))
                    .count();
            if (info.contains("connected_slaves:" + replicas) && online == replicas) {
                break;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("replicas not in sync: " + info);
            }
            RedisServer.sleep(100);
        }
        for (int port : dataPorts) {
            if (port == masterPort) {
                continue;
            }
            while (!RedisServer.command(port, "INFO", "replication").contains("master_link_status:up")) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("replica on " + port + " not linked within " + READY_TIMEOUT);
                }
                RedisServer.sleep(100);
            }
        }
    }

    private void awaitSentinelsKnowEachOther() {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        for (int port : sentinelPorts) {
            for (; ; ) {
                String master = RedisServer.command(port, "SENTINEL", "MASTER", MASTER_NAME);
                if (field(master, "num-other-sentinels") == sentinels - 1 && field(master, "num-slaves") == replicas) {
                    break;
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("sentinel on " + port + " not ready: " + master);
                }
                RedisServer.sleep(200);
            }
        }
    }

    private static int field(String flatReply, String name) {
        String[] items = flatReply.split("\n");
        for (int i = 0; i + 1 < items.length; i++) {
            if (items[i].equals(name)) {
                try {
                    return Integer.parseInt(items[i + 1]);
                } catch (NumberFormatException e) {
                    return -1;
                }
            }
        }
        return -1;
    }

    /** {@code redis-sentinel://127.0.0.1:<s1>,127.0.0.1:<s2>,...#mymaster}, as Lettuce reads it. */
    public String sentinelUri() {
        StringBuilder uri = new StringBuilder("redis-sentinel://");
        for (int i = 0; i < sentinelPorts.size(); i++) {
            uri.append(i == 0 ? "" : ",").append("127.0.0.1:").append(sentinelPorts.get(i));
        }
        return uri.append("#").append(MASTER_NAME).toString();
    }

    /**
     * With {@link #withTls}: {@code rediss-sentinel://[userInfo@]127.0.0.1:<s1 TLS port>,...#mymaster}, the Sentinels'
     * TLS ports; {@code userInfo} ({@code user:password}, or null for none) is what the client authenticates with at
     * the master.
     */
    public String tlsSentinelUri(@Nullable String userInfo) {
        if (tls == null) {
            throw new IllegalStateException("started without withTls");
        }
        StringBuilder uri = new StringBuilder("rediss-sentinel://");
        if (userInfo != null) {
            uri.append(userInfo).append("@");
        }
        for (int i = 0; i < sentinelPorts.size(); i++) {
            uri.append(i == 0 ? "" : ",").append("127.0.0.1:").append(advertised(sentinelPorts.get(i)));
        }
        return uri.append("#").append(MASTER_NAME).toString();
    }

    /** The plain port of the current master, as the first Sentinel reports it. */
    public int masterPort() {
        String addr = RedisServer.command(sentinelPorts.get(0), "SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME);
        int reported = Integer.parseInt(addr.split("\n")[1]);
        for (Map.Entry<Integer, Integer> e : tlsPorts.entrySet()) {
            if (e.getValue() == reported) {
                return e.getKey();
            }
        }
        return reported;
    }

    /** The TLS port of the node whose plain port is {@code port} (with {@link #withTls}). */
    public int tlsPort(int port) {
        Integer tlsPort = tlsPorts.get(port);
        if (tlsPort == null) {
            throw new IllegalArgumentException("no TLS port for port " + port);
        }
        return tlsPort;
    }

    /** Ports of the master and replicas as started (the roles change with failovers). */
    public List<Integer> dataPorts() {
        return List.copyOf(dataPorts);
    }

    public List<Integer> sentinelPorts() {
        return List.copyOf(sentinelPorts);
    }

    /**
     * Forces a failover ({@code SENTINEL FAILOVER}) and waits until the Sentinels name a new master that accepts
     * writes and every other data node replicates from it again. Sentinel turns the old master into a replica only
     * after it has reported the wrong role for about 8 s, so this takes 10 s or more; until then the old master still
     * accepts writes from clients connected to it. Returns the new master's port.
     */
    public int failover(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        int old = masterPort();
        long nextRequest = System.nanoTime();
        for (; ; ) {
            int now = masterPort();
            if (now != old && RedisServer.command(now, "ROLE").startsWith("master")) {
                awaitReplicasOnline(now, deadline);
                return now;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(
                        "no failover within " + timeout + ": Sentinel names port " + now + " (was " + old + ")");
            }
            // Sentinel aborts a forced failover when it has no fresh INFO from a replica yet (right after a previous
            // failover): ask again until it starts one
            if (now == old && System.nanoTime() - nextRequest >= 0 && hasGoodReplica()) {
                String answer = RedisServer.command(sentinelPorts.get(0), "SENTINEL", "FAILOVER", MASTER_NAME);
                if (answer.startsWith("-") && !answer.startsWith("-INPROG") && !answer.startsWith("-NOGOODSLAVE")) {
                    throw new IllegalStateException("SENTINEL FAILOVER refused: " + answer);
                }
                nextRequest = System.nanoTime() + Duration.ofSeconds(3).toNanos();
            }
            RedisServer.sleep(100);
        }
    }

    /** Whether the first Sentinel sees a replica it could promote: plain "slave" flags, link up, INFO fresh. */
    private boolean hasGoodReplica() {
        return goodReplicas(sentinelPorts.get(0)) > 0;
    }

    /**
     * How many replicas the Sentinel on {@code sentinelPort} could promote now: plain "slave" flags, link up, INFO
     * younger than 5 s (a replica that came back a moment ago is not a candidate yet).
     */
    public static int goodReplicas(int sentinelPort) {
        String[] items = RedisServer.command(sentinelPort, "SENTINEL", "REPLICAS", MASTER_NAME)
                .split("\n");
        int good = 0;
        String flags = null;
        String link = null;
        long refresh = Long.MAX_VALUE;
        for (int i = 0; i + 1 < items.length; i++) {
            switch (items[i]) {
                case "name" -> {
                    good += good(flags, link, refresh) ? 1 : 0;
                    flags = null;
                    link = null;
                    refresh = Long.MAX_VALUE;
                }
                case "flags" -> flags = items[i + 1];
                case "master-link-status" -> link = items[i + 1];
                case "info-refresh" -> refresh = parseLong(items[i + 1]);
                default -> {}
            }
        }
        return good + (good(flags, link, refresh) ? 1 : 0);
    }

    private static boolean good(@Nullable String flags, @Nullable String link, long infoRefreshMillis) {
        return "slave".equals(flags) && "ok".equals(link) && infoRefreshMillis < 5000;
    }

    private static long parseLong(String s) {
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            return Long.MAX_VALUE;
        }
    }

    @Override
    public synchronized void close() {
        for (int i = processes.size() - 1; i >= 0; i--) {
            RedisServer.kill(processes.get(i));
        }
        processes.clear();
        tlsPorts.clear();
        Path d = dir;
        dir = null;
        if (d != null) {
            RedisServer.deleteTree(d);
        }
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        start();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        close();
    }
}
