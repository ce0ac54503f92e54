package io.distlock.testkit.server;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real {@code redis-server} process on a free loopback port, for tests: no persistence, no protected mode, its own
 * temporary directory. Use it as a JUnit 5 extension ({@code @RegisterExtension static final RedisServer redis =
 * RedisServer.onFreePort();} starts it before the class and stops it after), or start and close it by hand.
 *
 * <p>The binary is {@code redis-server} on the {@code PATH} (Debian's {@code /usr/bin/redis-server}), or the system
 * property {@code distlock.redis.server}.
 */
public final class RedisServer implements BeforeAllCallback, AfterAllCallback, AutoCloseable {
    private static final Duration START_TIMEOUT = Duration.ofSeconds(10);

    private final List<String> extraArgs;
    private @Nullable Path dir;
    private @Nullable Process process;
    private int port;

    private RedisServer(List<String> extraArgs) {
        this.extraArgs = List.copyOf(extraArgs);
    }

    /** A server that starts before the test class (as an extension) or at {@link #start()}. */
    public static RedisServer onFreePort(String... extraArgs) {
        return new RedisServer(List.of(extraArgs));
    }

    /** Starts a server now; extra arguments are {@code redis-server} options such as {@code "--appendonly", "yes"}. */
    public static RedisServer started(String... extraArgs) {
        RedisServer s = new RedisServer(List.of(extraArgs));
        s.start();
        return s;
    }

    /** Starts the server (on a new free port the first time, on the same port after {@link #stop()}). Idempotent. */
    public synchronized RedisServer start() {
        if (process != null) {
            return this;
        }
        try {
            if (dir == null) {
                dir = Files.createTempDirectory("distlock-redis-");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Path workDir = dir;
        boolean keepPort = port != 0;
        for (int attempt = 0; ; attempt++) {
            if (!keepPort) {
                port = freePort();
            }
            List<String> command = new ArrayList<>(List.of(
                    binary(),
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
                    "--dir",
                    workDir.toString(),
                    "--daemonize",
                    "no",
                    "--logfile",
                    workDir.resolve("redis-" + port + ".log").toString()));
            command.addAll(extraArgs);
            Process p = launch(command, workDir.resolve("redis-" + port + ".out"));
            if (awaitPing(port, p, START_TIMEOUT)) {
                process = p;
                return this;
            }
            kill(p);
            if (keepPort || attempt >= 3) {
                throw new IllegalStateException("redis-server did not start on port " + port + "; see " + workDir);
            }
        }
    }

    /** Stops the process (SIGTERM, then SIGKILL); {@link #start()} restarts it on the same port. */
    public synchronized void stop() {
        Process p = process;
        process = null;
        if (p != null) {
            kill(p);
        }
    }

    /**
     * Stops the server (SIGSTOP): it keeps its connections but answers nothing until {@link #resume}, like a server
     * that hangs. A stopped server must be resumed before {@link #stop} or {@link #close}.
     */
    public synchronized void pause() {
        signal(running(), "-STOP", "redis-server on port " + port);
    }

    /** Lets a {@link #pause paused} server run again (SIGCONT). */
    public synchronized void resume() {
        signal(running(), "-CONT", "redis-server on port " + port);
    }

    private Process running() {
        Process p = process;
        if (p == null || !p.isAlive()) {
            throw new IllegalStateException("the server is not running");
        }
        return p;
    }

    /** Sends {@code signal} ({@code -STOP}, {@code -CONT}) to a server process; {@code what} names it in errors. */
    static void signal(Process p, String signal, String what) {
        try {
            Process kill = new ProcessBuilder("kill", signal, Long.toString(p.pid()))
                    .redirectErrorStream(true)
                    .start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill " + signal + " of " + what + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** Stops and starts again on the same port (data survives only if the extra arguments enable persistence). */
    public void restart() {
        stop();
        start();
    }

    public int port() {
        if (port == 0) {
            throw new IllegalStateException("the server was never started");
        }
        return port;
    }

    /** {@code redis://127.0.0.1:<port>}. */
    public String uri() {
        return "redis://127.0.0.1:" + port();
    }

    public boolean isRunning() {
        Process p = process;
        return p != null && p.isAlive();
    }

    /** Sends one command and returns the reply as text (see {@link #command(int, String...)}). */
    public String command(String... args) {
        return command(port(), args);
    }

    @Override
    public synchronized void close() {
        stop();
        Path d = dir;
        dir = null;
        if (d != null) {
            deleteTree(d);
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

    @Override
    public String toString() {
        return "RedisServer[" + (port == 0 ? "not started" : uri()) + "]";
    }

    // ---------------------------------------------------------------- shared with the other Redis launchers

    static String binary() {
        return System.getProperty("distlock.redis.server", "redis-server");
    }

    static Process launch(List<String> command, Path output) {
        try {
            Process p = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(output.toFile())
                    .start();
            Runtime.getRuntime().addShutdownHook(new Thread(p::destroyForcibly));
            return p;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + command.get(0) + " (is redis-server installed?)", e);
        }
    }

    static void kill(Process p) {
        p.destroy();
        try {
            if (!p.waitFor(5, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** A port on 127.0.0.1 that was free a moment ago, for an extra listener (e.g. {@code --tls-port}). */
    public static int freeLoopbackPort() {
        return freePort();
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static boolean awaitPing(int port, @Nullable Process p, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() - deadline < 0) {
            if (p != null && !p.isAlive()) {
                return false;
            }
            try {
                String reply = command(port, "PING");
                if (reply.equals("PONG") || reply.startsWith("-NOAUTH")) { // up, and asking for a password
                    return true;
                }
            } catch (RuntimeException e) {
                // not listening yet
            }
            sleep(50);
        }
        return false;
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    static void deleteTree(Path root) {
        try (Stream<Path> paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> {
                try {
                    Files.deleteIfExists(path);
                } catch (IOException e) {
                    // best effort
                }
            });
        } catch (IOException e) {
            // best effort
        }
    }

    /**
     * Sends one command to {@code 127.0.0.1:port} on a fresh connection and returns the reply as text: a status or
     * bulk reply as is, an integer as digits, an error as {@code "-ERR ..."}, an array as its elements joined by
     * newlines, nil as the empty string.
     */
    public static String command(int port, String... args) {
        return command(InetAddress.getLoopbackAddress(), port, args);
    }

    /** As {@link #command(int, String...)}, to the server at {@code host:port}. */
    public static String command(InetAddress host, int port, String... args) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), 1000);
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            ByteArrayOutputStream request = new ByteArrayOutputStream();
            request.writeBytes(("*" + args.length + "\r\n").getBytes(StandardCharsets.UTF_8));
            for (String a : args) {
                byte[] bytes = a.getBytes(StandardCharsets.UTF_8);
                request.writeBytes(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.UTF_8));
                request.writeBytes(bytes);
                request.writeBytes("\r\n".getBytes(StandardCharsets.UTF_8));
            }
            out.write(request.toByteArray());
            out.flush();
            return readReply(new BufferedInputStream(socket.getInputStream()));
        } catch (IOException e) {
            throw new UncheckedIOException("Redis on " + host.getHostAddress() + ":" + port + ": " + e.getMessage(), e);
        }
    }

    private static String readReply(InputStream in) throws IOException {
        String line = readLine(in);
        if (line.isEmpty()) {
            throw new IOException("empty reply");
        }
        char type = line.charAt(0);
        String rest = line.substring(1);
        switch (type) {
            case '+':
            case ':':
                return rest;
            case '-':
                return line;
            case '$': {
                int n = Integer.parseInt(rest);
                if (n < 0) {
                    return "";
                }
                byte[] data = in.readNBytes(n + 2);
                return new String(data, 0, n, StandardCharsets.UTF_8);
            }
            case '*': {
                int n = Integer.parseInt(rest);
                List<String> items = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    items.add(readReply(in));
                }
                return String.join("\n", items);
            }
            default:
                throw new IOException("unexpected reply: " + line);
        }
    }

    private static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != -1) {
            if (c == '\r') {
                int next = in.read();
                if (next == '\n') {
                    break;
                }
                line.write(c);
                if (next == -1) {
                    break;
                }
                line.write(next);
                continue;
            }
            line.write(c);
        }
        return line.toString(StandardCharsets.UTF_8);
    }
}
