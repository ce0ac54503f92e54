package io.distlock.testkit.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.NullMarked;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real single-member {@code etcd} process on free loopback ports, for tests, with its data in a temporary directory
 * (on {@code /dev/shm} where it exists, so fsync costs nothing). Use it as a JUnit 5 extension ({@code
 * @RegisterExtension static final EtcdServer etcd = EtcdServer.onFreePort();} starts it before the class and stops it
 * after), or start and close it by hand.
 *
 * <p>The binary is {@code etcd} on the {@code PATH} (Debian's {@code etcd-server}, 3.4), or the system property {@code
 * distlock.etcd.server}; {@link #etcdctl} runs {@code etcdctl} (Debian's {@code etcd-client}) or the system property
 * {@code distlock.etcdctl}. The member runs with a 50 ms heartbeat and a 500 ms election timeout, so etcd's minimum
 * lease TTL is one second.
 */
@NullMarked
public final class EtcdServer implements BeforeAllCallback, AfterAllCallback, AutoCloseable {
    static final Duration START_TIMEOUT = Duration.ofSeconds(20);

    private @Nullable Member member;
    // the test class whose beforeAll started the server as an extension: only its afterAll stops it
    private @Nullable Class<?> ownerClass;
    private final @Nullable TestCertificates tls;
    private final boolean clientCertAuth;

    private EtcdServer(@Nullable TestCertificates tls, boolean clientCertAuth) {
        this.tls = tls;
        this.clientCertAuth = clientCertAuth;
    }

    /** A server that starts before the test class (as an extension) or at {@link #start()}. */
    public static EtcdServer onFreePort() {
        return new EtcdServer(null, false);
    }

    /**
     * A server that also serves clients over TLS with the given certificate, on a port of its own ({@link
     * #tlsEndpoints()}); it starts before the test class (as an extension) or at {@link #start()}.
     */
    public static EtcdServer withTls(TestCertificates certificates) {
        return new EtcdServer(Objects.requireNonNull(certificates, "certificates"), false);
    }

    /**
     * Like {@link #withTls}, and TLS clients must present a certificate signed by the authority of {@code
     * certificates} ({@code --client-cert-auth}).
     */
    public static EtcdServer withClientCertificates(TestCertificates certificates) {
        return new EtcdServer(Objects.requireNonNull(certificates, "certificates"), true);
    }

    /** Starts a server now. */
    public static EtcdServer started() {
        EtcdServer s = new EtcdServer(null, false);
        s.start();
        return s;
    }

    /** Starts the server (on new free ports the first time, on the same ports after {@link #stop()}). Idempotent. */
    public synchronized EtcdServer start() {
        Member m = member;
        if (m == null) {
            for (int attempt = 0; ; attempt++) {
                m = Member.create("default", RedisServer.freePort(), RedisServer.freePort(), tempDir());
                if (tls != null) {
                    m.tls = tls;
                    m.tlsPort = RedisServer.freePort();
                    m.clientCertAuth = clientCertAuth;
                }
                m.initialCluster = m.name + "=" + m.peerUrl();
                try {
                    m.start();
                    m.awaitHealthy(START_TIMEOUT);
                    member = m;
                    return this;
                } catch (IllegalStateException e) {
                    m.close();
                    if (attempt >= 2) {
                        throw e;
                    }
                }
            }
        }
        if (!m.isRunning()) {
            m.start();
            m.awaitHealthy(START_TIMEOUT);
        }
        return this;
    }

    /** Stops the process (SIGTERM, then SIGKILL); {@link #start()} restarts it on the same ports with its data. */
    public synchronized void stop() {
        Member m = member;
        if (m != null) {
            m.stop();
        }
    }

    /** Kills the process (SIGKILL), as a crash; {@link #start()} restarts it with its data. */
    public synchronized void kill() {
        Member m = member;
        if (m != null) {
            m.kill();
        }
    }

    /** Stops and starts again on the same ports; the data survives. */
    public void restart() {
        stop();
        start();
    }

    public boolean isRunning() {
        Member m = member;
        return m != null && m.isRunning();
    }

    /** {@code http://127.0.0.1:<client port>}. */
    public String endpoints() {
        Member m = member;
        if (m == null) {
            throw new IllegalStateException("the server was never started");
        }
        return m.clientUrl();
    }

    /** {@code https://127.0.0.1:<TLS client port>}, for a server made by {@link #withTls}. */
    public String tlsEndpoints() {
        Member m = member;
        if (m == null || m.tls == null) {
            throw new IllegalStateException("the server was never started, or without TLS");
        }
        return "https://127.0.0.1:" + m.tlsPort;
    }

    /** Runs {@code etcdctl} (v3 API) against this server and returns its standard output. */
    public String etcdctl(String... args) {
        return etcdctlAt(endpoints(), args);
    }

    @Override
    public synchronized void close() {
        Member m = member;
        member = null;
        if (m != null) {
            m.close();
        }
    }

    /**
     * Starts the server before the test class that registered it. JUnit calls this for each {@code @Nested} class too;
     * the server then is already running.
     */
    @Override
    public synchronized void beforeAll(ExtensionContext context) {
        if (ownerClass == null) {
            ownerClass = context.getRequiredTestClass();
        }
        start();
    }

    /**
     * Stops the server after the test class that registered it; not after a {@code @Nested} class of it, whose
     * afterAll JUnit calls too while the outer class still has tests to run against the same server.
     */
    @Override
    public synchronized void afterAll(ExtensionContext context) {
        if (context.getRequiredTestClass() == ownerClass) {
            ownerClass = null;
            close();
        }
    }

    @Override
    public String toString() {
        Member m = member;
        return "EtcdServer[" + (m == null ? "not started" : m.clientUrl()) + "]";
    }

    // ---------------------------------------------------------------- shared with EtcdCluster

    static Path tempDir() {
        try {
            Path shm = Path.of("/dev/shm");
            if (Files.isDirectory(shm) && Files.isWritable(shm)) {
                return Files.createTempDirectory(shm, "distlock-etcd-");
            }
            return Files.createTempDirectory("distlock-etcd-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Runs {@code etcdctl} with the v3 API against {@code endpoints} (comma-separated) and returns its standard
     * output.
     *
     * @throws IllegalStateException if it exits with an error or takes longer than 20 s
     */
    public static String etcdctlAt(String endpoints, String... args) {
        List<String> command = new ArrayList<>();
        command.add(System.getProperty("distlock.etcdctl", "etcdctl"));
        command.add("--endpoints=" + endpoints);
        command.add("--command-timeout=10s");
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().put("ETCDCTL_API", "3");
        try {
            Process p = pb.start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("etcdctl did not finish: " + command);
            }
            String text = new String(out, StandardCharsets.UTF_8);
            if (p.exitValue() != 0) {
                throw new IllegalStateException("etcdctl failed (" + p.exitValue() + "): " + command + "\n" + text);
            }
            return text;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run etcdctl (is etcd-client installed?)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** One etcd member: its ports, data directory and process. */
    static final class Member {
        private static final HttpClient HTTP =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

        final String name;
        final int clientPort;
        final int peerPort;
        final Path home;
        String initialCluster = "";

        @Nullable
        TestCertificates tls;

        int tlsPort;
        boolean clientCertAuth;
        String clusterState = "new";
        private @Nullable Process process;

        private Member(String name, int clientPort, int peerPort, Path home) {
            this.name = name;
            this.clientPort = clientPort;
            this.peerPort = peerPort;
            this.home = home;
        }

        static Member create(String name, int clientPort, int peerPort, Path home) {
            return new Member(name, clientPort, peerPort, home);
        }

        String clientUrl() {
            return "http://127.0.0.1:" + clientPort;
        }

        String peerUrl() {
            return "http://127.0.0.1:" + peerPort;
        }

        synchronized void start() {
            if (process != null && process.isAlive()) {
                return;
            }
            String clientUrls = tls == null ? clientUrl() : clientUrl() + ",https://127.0.0.1:" + tlsPort;
            List<String> command = new ArrayList<>(List.of(
                    System.getProperty("distlock.etcd.server", "etcd"),
                    "--name",
                    name,
                    "--data-dir",
                    home.resolve(name + ".etcd").toString(),
                    "--listen-client-urls",
                    clientUrls,
                    "--advertise-client-urls",
                    clientUrls,
                    "--listen-peer-urls",
                    peerUrl(),
                    "--initial-advertise-peer-urls",
                    peerUrl(),
                    "--initial-cluster",
                    initialCluster,
                    "--initial-cluster-state",
                    clusterState,
                    "--initial-cluster-token",
                    "distlock-" + home.getFileName(),
                    "--heartbeat-interval",
                    "50",
                    "--election-timeout",
                    "500",
                    "--log-level",
                    "warn"));
            TestCertificates certs = tls;
            if (certs != null) {
                command.addAll(List.of(
                        "--cert-file",
                        certs.serverCert().toString(),
                        "--key-file",
                        certs.serverKey().toString()));
                if (clientCertAuth) {
                    command.addAll(List.of(
                            "--client-cert-auth",
                            "--trusted-ca-file",
                            certs.caCert().toString()));
                }
            }
            try {
                Process p = new ProcessBuilder(command)
                        .redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.appendTo(
                                home.resolve(name + ".log").toFile()))
                        .start();
                Runtime.getRuntime().addShutdownHook(new Thread(p::destroyForcibly));
                process = p;
            } catch (IOException e) {
                throw new UncheckedIOException("cannot start etcd (is etcd-server installed?)", e);
            }
        }

        /** Waits until the member answers its health check with a leader elected. */
        void awaitHealthy(Duration timeout) {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (System.nanoTime() - deadline < 0) {
                Process p = process;
                if (p == null || !p.isAlive()) {
                    throw new IllegalStateException("etcd member " + name + " exited; see " + log());
                }
                if (healthy()) {
                    return;
                }
                RedisServer.sleep(50);
            }
            throw new IllegalStateException(
                    "etcd member " + name + " not healthy within " + timeout + "; see " + log());
        }

        boolean healthy() {
            try {
                HttpResponse<String> r = HTTP.send(
                        HttpRequest.newBuilder(URI.create(clientUrl() + "/health"))
                                .timeout(Duration.ofSeconds(2))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                return r.statusCode() == 200 && r.body().replace(" ", "").contains("\"health\":\"true\"");
            } catch (IOException e) {
                return false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }

        Path log() {
            return home.resolve(name + ".log");
        }

        synchronized boolean isRunning() {
            Process p = process;
            return p != null && p.isAlive();
        }

        synchronized void stop() {
            Process p = process;
            process = null;
            if (p != null) {
                RedisServer.kill(p);
            }
        }

        synchronized void kill() {
            Process p = process;
            process = null;
            if (p != null) {
                p.destroyForcibly();
                try {
                    p.waitFor(5, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        synchronized void close() {
            stop();
            RedisServer.deleteTree(home);
        }
    }
}
