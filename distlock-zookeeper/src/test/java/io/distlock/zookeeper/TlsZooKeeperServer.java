package io.distlock.zookeeper;

import io.distlock.testkit.server.RedisServer;
import io.distlock.testkit.server.TestCertificates;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.zookeeper.server.NettyServerCnxnFactory;
import org.apache.zookeeper.server.ServerConfig;
import org.apache.zookeeper.server.ZooKeeperServerMain;
import org.apache.zookeeper.server.quorum.QuorumPeerConfig;
import org.jspecify.annotations.Nullable;

/**
 * An in-process ZooKeeper server that listens on a TLS port only ({@code secureClientPort}, Netty), with a server
 * certificate from {@link TestCertificates} and, if asked, client certificates required ({@code ssl.clientAuth=need}).
 *
 * <p>ZooKeeper reads a server's TLS settings from {@code zookeeper.ssl.*} system properties, which the server's
 * clients would read as defaults too: they are set while the server runs and restored by {@link #close()}. Clients in
 * the tests configure every TLS store themselves ({@link ZooKeeperLockClient.Builder#tls}), so the server's keys are
 * never theirs.
 */
final class TlsZooKeeperServer implements AutoCloseable {
    private final Map<String, @Nullable String> saved = new HashMap<>();
    private final Main main = new Main();
    private final Thread thread;
    private final int port;

    private TlsZooKeeperServer(TestCertificates certs, boolean needClientCertificate) throws Exception {
        Path keyStore = pemKeyStore(certs.dir().resolve("zk-server.pem"), certs.serverKey(), certs.serverCert());
        set("zookeeper.serverCnxnFactory", NettyServerCnxnFactory.class.getName());
        set("zookeeper.admin.enableServer", "false");
        set("zookeeper.ssl.keyStore.location", keyStore.toString());
        set("zookeeper.ssl.keyStore.type", "PEM");
        set("zookeeper.ssl.trustStore.location", certs.caCert().toString());
        set("zookeeper.ssl.trustStore.type", "PEM");
        set("zookeeper.ssl.clientAuth", needClientCertificate ? "need" : "none");
        port = RedisServer.freeLoopbackPort();
        Properties p = new Properties();
        p.setProperty("tickTime", Integer.toString(ZooKeeperTestServers.TICK_MILLIS));
        p.setProperty("dataDir", Files.createTempDirectory("distlock-zk-tls-").toString());
        p.setProperty("secureClientPort", Integer.toString(port));
        p.setProperty("secureClientPortAddress", "127.0.0.1");
        QuorumPeerConfig quorum = new QuorumPeerConfig();
        quorum.parseProperties(p);
        ServerConfig config = new ServerConfig();
        config.readFrom(quorum);
        AtomicReference<Exception> failure = new AtomicReference<>();
        thread = new Thread(
                () -> {
                    try {
                        main.runFromConfig(config);
                    } catch (Exception e) {
                        failure.set(e);
                    }
                },
                "zk-tls-server");
        thread.setDaemon(true);
        thread.start();
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (!listening(port)) {
            if (failure.get() != null || System.nanoTime() - deadline > 0) {
                close();
                throw new IllegalStateException("the TLS ZooKeeper server did not start on " + port, failure.get());
            }
            Thread.sleep(50);
        }
    }

    /** A started server; clients must present a certificate signed by the authority when {@code need...} is true. */
    static TlsZooKeeperServer start(TestCertificates certs, boolean needClientCertificate) throws Exception {
        return new TlsZooKeeperServer(certs, needClientCertificate);
    }

    /** {@code 127.0.0.1:<secure port>}. */
    String connectString() {
        return "127.0.0.1:" + port;
    }

    /** The client's key and certificate in one PEM file, the form ZooKeeper's PEM key store reads. */
    static Path clientKeyStore(TestCertificates certs) {
        return pemKeyStore(certs.dir().resolve("zk-client.pem"), certs.clientKey(), certs.clientCert());
    }

    private static Path pemKeyStore(Path file, Path key, Path cert) {
        try {
            Files.writeString(
                    file,
                    Files.readString(key, StandardCharsets.UTF_8) + Files.readString(cert, StandardCharsets.UTF_8),
                    StandardCharsets.UTF_8);
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void set(String key, String value) {
        saved.putIfAbsent(key, System.getProperty(key));
        System.setProperty(key, value);
    }

    private static boolean listening(int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    @Override
    public void close() throws InterruptedException {
        main.stop();
        thread.join(10_000);
        saved.forEach((key, value) -> {
            if (value == null) {
                System.clearProperty(key);
            } else {
                System.setProperty(key, value);
            }
        });
    }

    /** ZooKeeper's standalone main, with its shutdown reachable. */
    private static final class Main extends ZooKeeperServerMain {
        void stop() {
            shutdown();
        }
    }
}
