package io.distlock.testkit.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A Redis Cluster of real {@code redis-server} processes on free loopback ports (masters, and optionally replicas of
 * each), created with {@code redis-cli --cluster create} and ready ({@code cluster_state:ok} on every node, every
 * replica's link to its master up) when {@link #start()} returns. A JUnit 5 extension like {@link RedisServer}.
 *
 * <p>Options, set before the start: {@link #withUser} adds an ACL user to every node, {@link #withTls} gives every node
 * a TLS port beside its plain one and runs the cluster bus and replication over TLS; a client that connects to {@link
 * #tlsUris(String)} is told the nodes' TLS ports by the Cluster (Redis 7 answers {@code CLUSTER SLOTS} and {@code CLUSTER
 * NODES} with the ports of the asking connection's kind). The plain ports keep the {@code default} user open for the
 * launcher's own checks.
 */
public final class RedisCluster implements BeforeAllCallback, AfterAllCallback, AutoCloseable {
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(20);

    private final int masters;
    private final int replicasPerMaster;
    private final List<Process> processes = new ArrayList<>();
    private final List<Integer> ports = new ArrayList<>();
    private final List<Integer> tlsPorts = new ArrayList<>();
    private final List<String> userArgs = new ArrayList<>();
    private @Nullable TestCertificates tls;
    private @Nullable Path dir;

    private RedisCluster(int masters, int replicasPerMaster) {
        if (masters < 3) {
            throw new IllegalArgumentException("a Redis Cluster needs at least 3 masters: " + masters);
        }
        if (replicasPerMaster < 0) {
            throw new IllegalArgumentException("replicasPerMaster must not be negative: " + replicasPerMaster);
        }
        this.masters = masters;
        this.replicasPerMaster = replicasPerMaster;
    }

    /** A cluster of {@code masters} masters, started before the test class or at {@link #start()}. */
    public static RedisCluster withMasters(int masters) {
        return new RedisCluster(masters, 0);
    }

    /** A cluster of {@code masters} masters with {@code replicasPerMaster} replicas each. */
    public static RedisCluster withMastersAndReplicas(int masters, int replicasPerMaster) {
        return new RedisCluster(masters, replicasPerMaster);
    }

    /**
     * Adds the ACL user {@code name} with {@code password} and the given rules ({@code "~distlock:*"}, {@code
     * "+eval"}, ...) to every node. Call before the start.
     */
    public synchronized RedisCluster withUser(String name, String password, String... rules) {
        notStarted();
        userArgs.addAll(List.of("--user", name, "on", ">" + password));
        userArgs.addAll(List.of(rules));
        return this;
    }

    /**
     * Gives every node a TLS port with the server certificate of {@code certs} (clients need no certificate), and runs
     * the cluster bus and replication over TLS. Call before the start.
     */
    public synchronized RedisCluster withTls(TestCertificates certs) {
        notStarted();
        this.tls = certs;
        return this;
    }

    private void notStarted() {
        if (!processes.isEmpty()) {
            throw new IllegalStateException("set the options before the start");
        }
    }

    /** The options of a TLS port, a TLS cluster bus on a port of its own and TLS replication, or none. */
    private List<String> tlsArgs() {
        TestCertificates certs = tls;
        if (certs == null) {
            return List.of();
        }
        int tlsPort = RedisServer.freePort();
        tlsPorts.add(tlsPort);
        return List.of(
                "--tls-port",
                Integer.toString(tlsPort),
                "--cluster-port", // the default, the TLS port + 10000, may be past 65535
                Integer.toString(RedisServer.freePort()),
                "--tls-cert-file",
                certs.serverCert().toString(),
                "--tls-key-file",
                certs.serverKey().toString(),
                "--tls-ca-cert-file",
                certs.caCert().toString(),
                "--tls-auth-clients",
                "no",
                "--tls-cluster",
                "yes",
                "--tls-replication",
                "yes");
    }

    public synchronized RedisCluster start() {
        if (!processes.isEmpty()) {
            return this;
        }
        try {
            Path d = Files.createTempDirectory("distlock-redis-cluster-");
            dir = d;
            for (int i = 0; i < masters * (1 + replicasPerMaster); i++) {
                int port = RedisServer.freePort();
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
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        d.resolve("nodes-" + port + ".conf").toString(),
                        "--cluster-node-timeout",
                        "2000",
                        "--dir",
                        d.toString(),
                        "--logfile",
                        d.resolve("redis-" + port + ".log").toString()));
                command.addAll(tlsArgs());
                command.addAll(userArgs);
                Process p = RedisServer.launch(command, d.resolve("redis-" + port + ".out"));
                processes.add(p);
                ports.add(port);
                if (!RedisServer.awaitPing(port, p, Duration.ofSeconds(10))) {
                    throw new IllegalStateException("cluster node did not start on port " + port + "; see " + d);
                }
            }
            List<String> create = new ArrayList<>(List.of(cli(), "--cluster", "create"));
            for (int port : ports) {
                create.add("127.0.0.1:" + port);
            }
            create.addAll(List.of("--cluster-replicas", Integer.toString(replicasPerMaster), "--cluster-yes"));
            Process p = new ProcessBuilder(create)
                    .redirectErrorStream(true)
                    .redirectOutput(d.resolve("cluster-create.out").toFile())
                    .start();
            if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                throw new IllegalStateException(
                        "redis-cli --cluster create failed: " + Files.readString(d.resolve("cluster-create.out")));
            }
            awaitReady();
            return this;
        } catch (IOException e) {
            close();
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            close();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    private void awaitReady() {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        for (int port : ports) {
            while (!RedisServer.command(port, "CLUSTER", "INFO").contains("cluster_state:ok")
                    || !replicaLinkedOrMaster(port)) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("cluster not ready within " + READY_TIMEOUT + " on port " + port);
                }
                RedisServer.sleep(100);
            }
        }
    }

    private static boolean replicaLinkedOrMaster(int port) {
        String replication = RedisServer.command(port, "INFO", "replication");
        return replication.contains("role:master") || replication.contains("master_link_status:up");
    }

    /**
     * Stops the node on {@code port} (SIGSTOP): it keeps its connections but answers nothing, neither clients nor its
     * master's replication stream, until {@link #resume}. A stopped node must be resumed before {@link #close}.
     */
    public void pause(int port) {
        signal(port, "-STOP");
    }

    /** Lets a node {@link #pause paused} run again (SIGCONT). */
    public void resume(int port) {
        signal(port, "-CONT");
    }

    private synchronized void signal(int port, String signal) {
        int i = ports.indexOf(port);
        if (i < 0) {
            throw new IllegalArgumentException("no node of this cluster on port " + port);
        }
        RedisServer.signal(processes.get(i), signal, "the node on port " + port);
    }

    /** The node ports, in creation order. */
    public List<Integer> ports() {
        return List.copyOf(ports);
    }

    /** {@code redis://127.0.0.1:<port>} of every node. */
    public List<String> uris() {
        List<String> uris = new ArrayList<>();
        for (int port : ports) {
            uris.add("redis://127.0.0.1:" + port);
        }
        return uris;
    }

    /**
     * With {@link #withTls}: {@code rediss://[userInfo@]127.0.0.1:<TLS port>} of every node, in creation order;
     * {@code userInfo} is {@code user:password}, or null for none.
     */
    public List<String> tlsUris(@Nullable String userInfo) {
        if (tls == null) {
            throw new IllegalStateException("started without withTls");
        }
        List<String> uris = new ArrayList<>();
        for (int port : tlsPorts) {
            uris.add("rediss://" + (userInfo == null ? "" : userInfo + "@") + "127.0.0.1:" + port);
        }
        return uris;
    }

    @Override
    public synchronized void close() {
        for (Process p : processes) {
            RedisServer.kill(p);
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

    static String cli() {
        return System.getProperty("distlock.redis.cli", "redis-cli");
    }
}
