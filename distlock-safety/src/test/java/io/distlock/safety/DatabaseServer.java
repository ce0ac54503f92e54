package io.distlock.safety;

import io.distlock.testkit.fault.ProcessFaults;
import io.distlock.testkit.server.RedisServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * A MariaDB or PostgreSQL server of the suite's own, so that it can be killed, restarted and run on a fake clock
 * without touching the machine's shared servers: a data directory under a temporary directory, a free loopback port,
 * a socket in the same directory. MariaDB runs as root ({@code --user=root}); PostgreSQL refuses root, so it runs as
 * the {@code postgres} user through {@code setpriv} (which execs, so the process this JVM started is the server).
 * {@code environment} is added to the server's (libfaketime's variables, say); for PostgreSQL it is set by {@code env}
 * after the user switch, so that only the server's own processes load a preloaded library.
 *
 * <p>Each server has an admin identity with an empty password (MariaDB {@code root}, PostgreSQL {@code postgres}
 * trusted) and a database {@code test}, as the machine's servers have. {@link #close()} kills it and deletes its
 * directory.
 */
final class DatabaseServer implements AutoCloseable {
    private static final Path MARIADBD = Path.of("/usr/sbin/mariadbd");
    private static final Path INSTALL_DB = Path.of("/usr/bin/mariadb-install-db");
    private static final Path POSTGRES = Path.of("/usr/local/bin/postgres");
    private static final Path INITDB = Path.of("/usr/local/bin/initdb");

    final JdbcStores.Db db;
    final int port;
    final Path dir;
    private final Map<String, String> environment;
    private @Nullable Process process;
    private int launches;

    private DatabaseServer(JdbcStores.Db db, Path dir, Map<String, String> environment) {
        this.db = db;
        this.dir = dir;
        this.environment = Map.copyOf(environment);
        this.port = RedisServer.freeLoopbackPort();
    }

    /** Whether this machine has what a server of {@code db} needs. */
    static boolean available(JdbcStores.Db db) {
        return switch (db) {
            case MARIADB -> Files.isExecutable(MARIADBD) && Files.isExecutable(INSTALL_DB);
            case POSTGRESQL -> Files.isExecutable(POSTGRES) && Files.isExecutable(INITDB);
            case H2 -> false;
        };
    }

    /** Creates the data directory, starts the server and waits (up to {@code timeout}) until it answers. */
    static DatabaseServer start(JdbcStores.Db db, Map<String, String> environment, Duration timeout) {
        Path dir;
        try {
            dir = Files.createTempDirectory("distlock-" + db.name().toLowerCase(java.util.Locale.ROOT) + "-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        DatabaseServer s = new DatabaseServer(db, dir, environment);
        try {
            s.initialise();
            s.launch();
            s.awaitReady(timeout);
            s.admin(db == JdbcStores.Db.MARIADB ? "CREATE DATABASE IF NOT EXISTS test" : "CREATE DATABASE test");
            return s;
        } catch (RuntimeException e) {
            s.close();
            throw e;
        }
    }

    private void initialise() {
        if (db == JdbcStores.Db.MARIADB) {
            run(
                    List.of(
                            INSTALL_DB.toString(),
                            "--no-defaults",
                            "--datadir=" + dir.resolve("data"),
                            "--user=root",
                            "--auth-root-authentication-method=normal",
                            "--skip-test-db"),
                    Duration.ofSeconds(120));
        } else {
            run(List.of("chown", "postgres:postgres", dir.toString()), Duration.ofSeconds(10));
            run(
                    asPostgres(List.of(
                            INITDB.toString(),
                            "-D",
                            dir.resolve("data").toString(),
                            "-U",
                            "postgres",
                            "--auth=trust",
                            "-E",
                            "UTF8",
                            "--no-sync")),
                    Duration.ofSeconds(120));
        }
    }

    private static List<String> asPostgres(List<String> command) {
        List<String> c = new ArrayList<>(
                List.of("setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "/usr/bin/env"));
        c.addAll(command);
        return c;
    }

    private List<String> serverCommand() {
        if (db == JdbcStores.Db.MARIADB) {
            return List.of(
                    MARIADBD.toString(),
                    "--no-defaults",
                    "--datadir=" + dir.resolve("data"),
                    "--port=" + port,
                    "--bind-address=127.0.0.1",
                    "--socket=" + dir.resolve("mariadb.sock"),
                    "--pid-file=" + dir.resolve("mariadb.pid"),
                    "--user=root",
                    "--innodb-buffer-pool-size=32M",
                    "--max-connections=200",
                    "--log-error=" + dir.resolve("error.log"));
        }
        List<String> c = new ArrayList<>(
                List.of("setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "/usr/bin/env"));
        environment.forEach((k, v) -> c.add(k + "=" + v));
        c.addAll(List.of(
                POSTGRES.toString(),
                "-D",
                dir.resolve("data").toString(),
                "-p",
                Integer.toString(port),
                "-k",
                dir.toString(),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "shared_buffers=16MB",
                "-c",
                "max_connections=100"));
        return c;
    }

    private void launch() {
        ProcessBuilder b = new ProcessBuilder(serverCommand())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(
                        dir.resolve("server.log").toFile()));
        if (db == JdbcStores.Db.MARIADB) {
            b.environment().putAll(environment);
        }
        try {
            process = b.start();
            launches++;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + db + " in " + dir, e);
        }
    }

    /** The server's process id (PostgreSQL: the postmaster). */
    long pid() {
        Process p = process;
        if (p == null || !p.isAlive()) {
            throw new IllegalStateException(db + " on port " + port + " is not running");
        }
        return p.pid();
    }

    /** Kills the server and every process it started with SIGKILL, and waits until they are gone: a crash. */
    void kill9() {
        Process p = process;
        if (p == null) {
            return;
        }
        List<ProcessHandle> all = new ArrayList<>(p.descendants().toList());
        all.add(0, p.toHandle());
        for (ProcessHandle h : all) {
            if (h.isAlive()) {
                h.destroyForcibly();
            }
        }
        for (ProcessHandle h : all) {
            try {
                h.onExit().get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new IllegalStateException("process " + h.pid() + " of " + db + " did not die", e);
            }
        }
        process = null;
    }

    /**
     * Stops the server the way an operator does, ending every session and shutting down cleanly: SIGTERM for MariaDB,
     * SIGINT for PostgreSQL (its "fast" shutdown; its SIGTERM waits for every client to disconnect, which a pool
     * never does). Waits up to 60 s, then kills whatever is left.
     */
    void stop() {
        Process p = process;
        if (p == null) {
            return;
        }
        if (db == JdbcStores.Db.POSTGRESQL) {
            ProcessFaults.signal(p.pid(), "-INT");
        } else {
            p.destroy();
        }
        try {
            p.waitFor(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        kill9();
    }

    /**
     * Starts the server again with its data (after {@link #kill9()} or {@link #stop()}), retrying while the old server's lock files and
     * shared memory are still being let go, and waits until it answers.
     */
    void restart(Duration timeout) {
        long end = System.nanoTime() + timeout.toNanos();
        while (true) {
            launch();
            try {
                awaitReady(Duration.ofNanos(Math.max(0, end - System.nanoTime())));
                return;
            } catch (IllegalStateException e) {
                if (System.nanoTime() - end > 0) {
                    throw e;
                }
                kill9();
            }
        }
    }

    /** Waits until the server answers a query on its socket, or its process ends. */
    private void awaitReady(Duration timeout) {
        long end = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() - end < 0) {
            if (probe()) {
                return;
            }
            Process p = process;
            if (p == null || !p.isAlive()) {
                throw new IllegalStateException(db + " ended while starting (launch " + launches + "); see "
                        + dir.resolve("server.log") + ": " + tail());
            }
            sleep(200);
        }
        throw new IllegalStateException(db + " not ready within " + timeout + "; see " + dir);
    }

    private boolean probe() {
        try {
            admin("SELECT 1");
            return true;
        } catch (IllegalStateException e) {
            return false;
        }
    }

    /** Runs {@code sql} as the admin identity through the command-line client, on the server's socket. */
    void admin(String sql) {
        List<String> command = db == JdbcStores.Db.MARIADB
                ? List.of("mariadb", "--no-defaults", "--socket=" + dir.resolve("mariadb.sock"), "-uroot", "-e", sql)
                : List.of(
                        "psql",
                        "-h",
                        dir.toString(),
                        "-p",
                        Integer.toString(port),
                        "-U",
                        "postgres",
                        "-d",
                        "postgres",
                        "-v",
                        "ON_ERROR_STOP=1",
                        "-Atc",
                        sql);
        run(command, Duration.ofSeconds(20));
    }

    private static String run(List<String> command, Duration timeout) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(command.get(0) + " did not end within " + timeout);
            }
            String text = new String(out, StandardCharsets.UTF_8);
            if (p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed: " + text);
            }
            return text;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private String tail() {
        try {
            List<String> lines = Files.readAllLines(dir.resolve("server.log"), StandardCharsets.UTF_8);
            return String.join(" | ", lines.subList(Math.max(0, lines.size() - 5), lines.size()));
        } catch (IOException e) {
            return "";
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** Whether the server runs now. */
    boolean isRunning() {
        Process p = process;
        return p != null && p.isAlive();
    }

    @Override
    public void close() {
        kill9();
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            // best effort: a temporary directory
        }
    }

    @Override
    public String toString() {
        return db.name().toLowerCase(java.util.Locale.ROOT) + " server on 127.0.0.1:" + port + " in " + dir;
    }
}
