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
 * A Redis Cluster of real {@code redis-server} processes on free loopback ports (masters only, no replicas), created
 * with {@code redis-cli --cluster create} and ready ({@code cluster_state:ok} on every node) when {@link #start()}
 * returns. A JUnit 5 extension like {@link RedisServer}.
 */
public final class RedisCluster implements BeforeAllCallback, AfterAllCallback, AutoCloseable {
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(20);

    private final int masters;
    private final List<Process> processes = new ArrayList<>();
    private final List<Integer> ports = new ArrayList<>();
    private @Nullable Path dir;

    private RedisCluster(int masters) {
        if (masters < 3) {
            throw new IllegalArgumentException("a Redis Cluster needs at least 3 masters: " + masters);
        }
        this.masters = masters;
    }

    /** A cluster of {@code masters} masters, started before the test class or at {@link #start()}. */
    public static RedisCluster withMasters(int masters) {
        return new RedisCluster(masters);
    }

    public synchronized RedisCluster start() {
        if (!processes.isEmpty()) {
            return this;
        }
        try {
            Path d = Files.createTempDirectory("distlock-redis-cluster-");
            dir = d;
            for (int i = 0; i < masters; i++) {
                int port = RedisServer.freePort();
                List<String> command = List.of(
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
                        d.resolve("redis-" + port + ".log").toString());
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
            create.addAll(List.of("--cluster-replicas", "0", "--cluster-yes"));
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
            while (!RedisServer.command(port, "CLUSTER", "INFO").contains("cluster_state:ok")) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("cluster not ready within " + READY_TIMEOUT + " on port " + port);
                }
                RedisServer.sleep(100);
            }
        }
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

    @Override
    public synchronized void close() {
        for (Process p : processes) {
            RedisServer.kill(p);
        }
        processes.clear();
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
