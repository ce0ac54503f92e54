package io.distlock.safety;

import io.distlock.testkit.server.RedisServer;
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
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A ZooKeeper ensemble of real server processes on loopback: each member is a JVM running {@code QuorumPeerMain} from
 * this JVM's class path (the ZooKeeper jar the backend uses), with its own data directory, so members can be paused,
 * killed and restarted like any server. Tick 200 ms: sessions may last 0.4 s to 4 s.
 */
final class ZooKeeperEnsemble implements AutoCloseable {
    static final int TICK_MILLIS = 200;

    /**
     * How often the leader reaps empty container nodes. The server reads it as the system property {@code
     * znode.container.checkIntervalMs} only: a zoo.cfg line of that name turns into {@code
     * zookeeper.znode.container.checkIntervalMs} (QuorumPeerConfig prefixes every key it does not know), which nothing
     * reads, and the default is a minute.
     */
    static final int CONTAINER_CHECK_MILLIS = 1000;

    private final int size;
    private final Path dir;
    private final int[] clientPorts;
    private final int[] quorumPorts;
    private final int[] electionPorts;
    private final @Nullable Process[] processes;
    private final List<Map<String, String>> environments = new ArrayList<>();

    ZooKeeperEnsemble(int size) {
        this.size = size;
        try {
            this.dir = Files.createTempDirectory("distlock-zk-ensemble-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        clientPorts = new int[size];
        quorumPorts = new int[size];
        electionPorts = new int[size];
        processes = new Process[size];
        for (int i = 0; i < size; i++) {
            environments.add(Map.of());
        }
        for (int i = 0; i < size; i++) {
            clientPorts[i] = RedisServer.freeLoopbackPort();
            quorumPorts[i] = RedisServer.freeLoopbackPort();
            electionPorts[i] = RedisServer.freeLoopbackPort();
        }
    }

    /** Adds {@code environment} to member {@code i}'s process from its next launch on (libfaketime's, say). */
    ZooKeeperEnsemble environment(int i, Map<String, String> environment) {
        environments.set(i, Map.copyOf(environment));
        return this;
    }

    ZooKeeperEnsemble start(Duration timeout) {
        try {
            for (int i = 0; i < size; i++) {
                writeConfig(i);
            }
            for (int i = 0; i < size; i++) {
                launch(i);
            }
            awaitServing(timeout);
            return this;
        } catch (IOException e) {
            close();
            throw new UncheckedIOException(e);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    private void writeConfig(int i) throws IOException {
        Path data = dir.resolve("m" + i);
        Files.createDirectories(data);
        Files.writeString(data.resolve("myid"), Integer.toString(i + 1));
        List<String> lines = new ArrayList<>(List.of(
                "tickTime=" + TICK_MILLIS,
                "initLimit=25",
                "syncLimit=10",
                "dataDir=" + data,
                "clientPort=" + clientPorts[i],
                "clientPortAddress=127.0.0.1",
                "maxClientCnxns=0",
                "admin.enableServer=false",
                "4lw.commands.whitelist=*",
                "standaloneEnabled=false",
                "reconfigEnabled=false"));
        for (int j = 0; j < size; j++) {
            lines.add("server." + (j + 1) + "=127.0.0.1:" + quorumPorts[j] + ":" + electionPorts[j]);
        }
        Files.write(data.resolve("zoo.cfg"), lines);
    }

    private void launch(int i) throws IOException {
        Path data = dir.resolve("m" + i);
        List<String> command = List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx192m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-Dzookeeper.admin.enableServer=false",
                "-Dznode.container.checkIntervalMs=" + CONTAINER_CHECK_MILLIS,
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-cp",
                System.getProperty("java.class.path"),
                "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                data.resolve("zoo.cfg").toString());
        ProcessBuilder b = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(
                        data.resolve("server.log").toFile()));
        b.environment().putAll(environments.get(i));
        processes[i] = b.start();
    }

    /** Waits until every running member answers {@code srvr} as leader or follower. */
    void awaitServing(Duration timeout) {
        long end = System.nanoTime() + timeout.toNanos();
        for (int i = 0; i < size; i++) {
            Process p = processes[i];
            if (p == null || !p.isAlive()) {
                continue;
            }
            while (!mode(i).matches("leader|follower")) {
                if (System.nanoTime() - end > 0) {
                    throw new IllegalStateException("ZooKeeper member " + i + " not serving within " + timeout
                            + " (mode " + mode(i) + "); see " + dir);
                }
                sleep(100);
            }
        }
    }

    /** The member's {@code Mode:} as {@code srvr} reports it, or {@code down}. */
    String mode(int i) {
        String out = fourLetters(clientPorts[i], "srvr");
        for (String line : out.split("\n")) {
            if (line.startsWith("Mode: ")) {
                return line.substring(6).trim();
            }
        }
        return "down";
    }

    /** The member that is leader now, or -1. */
    int leader() {
        for (int i = 0; i < size; i++) {
            if (isRunning(i) && mode(i).equals("leader")) {
                return i;
            }
        }
        return -1;
    }

    private static String fourLetters(int port, String word) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 500);
            s.setSoTimeout(1000);
            OutputStream out = s.getOutputStream();
            out.write(word.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    List<Integer> clientPorts() {
        List<Integer> ports = new ArrayList<>();
        for (int p : clientPorts) {
            ports.add(p);
        }
        return ports;
    }

    String connectString() {
        StringJoiner j = new StringJoiner(",");
        for (int p : clientPorts) {
            j.add("127.0.0.1:" + p);
        }
        return j.toString();
    }

    long pid(int i) {
        Process p = processes[i];
        if (p == null) {
            throw new IllegalStateException("member " + i + " is not running");
        }
        return p.pid();
    }

    boolean isRunning(int i) {
        Process p = processes[i];
        return p != null && p.isAlive();
    }

    /** Kills member {@code i} with SIGKILL. */
    void kill(int i) {
        Process p = processes[i];
        if (p != null) {
            p.destroyForcibly();
            try {
                p.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Deletes the snapshots and transaction logs of member {@code i} (its {@code version-2} directory), keeping its
     * {@code myid} and configuration; the member must be stopped and must have data.
     */
    void wipeData(int i) {
        if (isRunning(i)) {
            throw new IllegalStateException("member " + i + " still runs: stop it before wiping its data");
        }
        Path v2 = dir.resolve("m" + i).resolve("version-2");
        if (!Files.isDirectory(v2)) {
            throw new IllegalStateException("member " + i + " has no data to wipe: no " + v2);
        }
        try (var files = Files.walk(v2)) {
            for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException("cannot wipe " + v2, e);
        }
    }

    /** Starts member {@code i} again with its data and waits until it serves. */
    void restart(int i, Duration timeout) {
        restart(List.of(i), timeout);
    }

    /**
     * Starts {@code members} again with their data, all at once, and waits until every running member serves: the way
     * back from a crash of a majority or of the whole ensemble, where no member serves until enough of them run.
     */
    void restart(List<Integer> members, Duration timeout) {
        members.forEach(this::kill);
        try {
            for (int i : members) {
                launch(i);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        awaitServing(timeout);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    @Override
    public void close() {
        for (int i = 0; i < size; i++) {
            Process p = processes[i];
            if (p != null) {
                try {
                    new ProcessBuilder("kill", "-CONT", Long.toString(p.pid()))
                            .start()
                            .waitFor(5, TimeUnit.SECONDS);
                } catch (IOException e) {
                    // killing it anyway
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            kill(i);
        }
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder())
                    .forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            // best effort
        }
    }
}
