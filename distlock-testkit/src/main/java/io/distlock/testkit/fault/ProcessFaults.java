package io.distlock.testkit.fault;

import io.distlock.testkit.server.EtcdCluster;
import io.distlock.testkit.server.RedisServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Process faults: pause (SIGSTOP, then SIGCONT when the fault heals), kill -9, and crash-then-restart with or without
 * the data, for the servers the testkit launches and for any process by pid (a client JVM, a server this JVM
 * started).
 *
 * <p>A paused process keeps its sockets and answers nothing, as a server in a long GC or a frozen VM; a paused client
 * JVM stops its watchdog too, which is the faithful "holder stop-the-world" (an in-thread sleep is not: the watchdog
 * keeps renewing). Servers this JVM started are found by the port in their command line.
 */
public final class ProcessFaults {
    private ProcessFaults() {}

    /** How a crashed server comes back: after {@code downtime}, with its data or from an empty directory. */
    public record Restart(Duration downtime, boolean keepData) {
        public Restart {
            Objects.requireNonNull(downtime, "downtime");
            if (downtime.isNegative()) {
                throw new IllegalArgumentException("downtime must not be negative: " + downtime);
            }
        }

        /** Back at once, with its data. */
        public static Restart immediately() {
            return new Restart(Duration.ZERO, true);
        }
    }

    /** Pauses process {@code pid} (SIGSTOP) for {@code duration}, then lets it run again (SIGCONT). */
    public static Fault pause(long pid, String target, Duration duration, FaultLog log) {
        return Fault.start("pause", target, duration, () -> signal(pid, "-STOP"), () -> signal(pid, "-CONT"), log);
    }

    /** Pauses the server this JVM started that listens on {@code port}, for {@code duration}. */
    public static Fault pauseServerOn(int port, Duration duration, FaultLog log) {
        return pause(pidOfServerOn(port), "server:" + port, duration, log);
    }

    /** Kills process {@code pid} with SIGKILL, as a crash: no shutdown hooks, no goodbyes to the store. */
    public static Fault kill(long pid, String target, FaultLog log) {
        return Fault.oneShot("kill", target, () -> kill9(pid), log);
    }

    /**
     * Crashes a {@link RedisServer} with SIGKILL and restarts it on the same port when the fault heals: after {@code
     * restart.downtime()}, with its data (what its persistence settings kept) or with its directory emptied.
     */
    public static Fault crash(RedisServer server, Restart restart, FaultLog log) {
        Objects.requireNonNull(server, "server");
        Objects.requireNonNull(restart, "restart");
        int port = server.port();
        long pid = pidOfServerOn(port);
        Optional<Path> dir = argumentAfter(pid, "--dir").map(Path::of);
        return Fault.start(
                restart.keepData() ? "crash" : "crash-wipe",
                "redis:" + port,
                restart.downtime(),
                () -> kill9(pid),
                () -> {
                    server.stop(); // forgets the dead process
                    if (!restart.keepData()) {
                        dir.ifPresent(ProcessFaults::wipeRedisData);
                    }
                    server.start();
                },
                log);
    }

    /** Crashes member {@code member} of an {@link EtcdCluster} (SIGKILL) and restarts it with its data after {@code downtime}. */
    public static Fault crash(EtcdCluster cluster, int member, Duration downtime, FaultLog log) {
        Objects.requireNonNull(cluster, "cluster");
        return Fault.start(
                "crash",
                "etcd:" + cluster.name(member),
                downtime,
                () -> cluster.kill(member),
                () -> cluster.restart(member),
                log);
    }

    /**
     * Crashes process {@code pid} (SIGKILL) and runs {@code restart} when the fault heals, after {@code downtime}: for
     * servers launched by other means.
     */
    public static Fault crash(long pid, String target, Duration downtime, Runnable restart, FaultLog log) {
        return Fault.start("crash", target, downtime, () -> kill9(pid), restart, log);
    }

    /**
     * The pid of the process, started by this JVM (a descendant), whose command line names {@code port}: as an
     * argument of its own ({@code --port 6380}), in a URL ({@code http://127.0.0.1:2379}) or in a file name ({@code
     * sentinel-26380.conf}).
     *
     * A process whose parent also names the port is that process's fork, not another server.
     *
     * @throws IllegalStateException if no such process runs, or more than one
     */
    public static long pidOfServerOn(int port) {
        String p = Integer.toString(port);
        Pattern named = Pattern.compile("(?:^|.*[:=])" + p + "(?:\\D.*)?|.*-" + p + "\\..*");
        List<ProcessHandle> matching = ProcessHandle.current()
                .descendants()
                .filter(ProcessHandle::isAlive)
                .filter(h -> commandLine(h).anyMatch(a -> named.matcher(a).matches()))
                .toList();
        // a fork of the server (a shell's child before its exec, redis-server's BGSAVE child) shares its command line
        // for a moment: the server is the one whose parent does not match
        Set<Long> pids = new HashSet<>();
        matching.forEach(h -> pids.add(h.pid()));
        List<ProcessHandle> found = matching.stream()
                .filter(h ->
                        h.parent().map(parent -> !pids.contains(parent.pid())).orElse(true))
                .toList();
        if (found.isEmpty()) {
            throw new IllegalStateException("no process of this JVM serves port " + port);
        }
        if (found.size() > 1) {
            throw new IllegalStateException(found.size() + " processes of this JVM name port " + port + ": "
                    + found.stream().map(ProcessHandle::pid).toList());
        }
        return found.get(0).pid();
    }

    /**
     * The words of a process's command line: its arguments, and on Linux the words of {@code /proc/<pid>/cmdline},
     * which is where a server that retitles itself keeps them (redis-server rewrites its arguments to one title such
     * as {@code "redis-server 127.0.0.1:6380"}, and the JDK then sees no arguments).
     */
    private static Stream<String> commandLine(ProcessHandle h) {
        Stream<String> args = h.info().arguments().stream().flatMap(Stream::of);
        Path proc = Path.of("/proc", Long.toString(h.pid()), "cmdline");
        try {
            String raw = new String(Files.readAllBytes(proc), StandardCharsets.UTF_8);
            return Stream.concat(args, Stream.of(raw.split("[\\x00\\s]+")));
        } catch (IOException | UnsupportedOperationException e) {
            return args; // not Linux, or the process just ended
        }
    }

    /** Sends SIGKILL to {@code pid} and waits (up to 10 s) until it is gone. */
    public static void kill9(long pid) {
        signal(pid, "-KILL");
        Optional<ProcessHandle> h = ProcessHandle.of(pid);
        if (h.isPresent()) {
            try {
                h.get().onExit().get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new IllegalStateException("process " + pid + " did not die after SIGKILL", e);
            }
        }
    }

    /** Sends {@code signal} ({@code -STOP}, {@code -CONT}, {@code -KILL}, {@code -TERM}) to {@code pid}. */
    public static void signal(long pid, String signal) {
        try {
            Process kill = new ProcessBuilder("kill", signal, Long.toString(pid))
                    .redirectErrorStream(true)
                    .start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill " + signal + " " + pid + " failed: "
                        + new String(kill.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while signalling " + pid, e);
        }
    }

    private static Optional<String> argumentAfter(long pid, String flag) {
        Optional<String[]> args = ProcessHandle.of(pid).flatMap(h -> h.info().arguments());
        if (args.isEmpty()) {
            return Optional.empty();
        }
        String[] a = args.get();
        for (int i = 0; i + 1 < a.length; i++) {
            if (a[i].equals(flag)) {
                return Optional.of(a[i + 1]);
            }
        }
        return Optional.empty();
    }

    private static void wipeRedisData(Path dir) {
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.toList()) {
                String n = f.getFileName().toString();
                if (n.endsWith(".rdb") || n.startsWith("appendonly")) {
                    deleteTree(f);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot wipe " + dir, e);
        }
    }

    private static void deleteTree(Path p) throws IOException {
        if (Files.isDirectory(p)) {
            try (Stream<Path> s = Files.list(p)) {
                for (Path c : s.toList()) {
                    deleteTree(c);
                }
            }
        }
        Files.deleteIfExists(p);
    }
}
