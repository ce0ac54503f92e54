package io.distlock.cli;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.sql.SQLException;
import org.h2.tools.Server;

/**
 * The embedded default backend: an H2 TCP server started inside this process on a free loopback port, serving one
 * in-memory database. Worker processes connect to it over TCP like any database client, so the locks they take are
 * shared through a real database by real OS processes; the database disappears when the server stops.
 */
final class EmbeddedH2 implements AutoCloseable {
    private final Server server;
    private final String url;

    private EmbeddedH2(Server server, String url) {
        this.server = server;
        this.url = url;
    }

    /**
     * Starts the server.
     *
     * @throws BackendUnreachableException if no port could be bound
     */
    static EmbeddedH2 start(String database) {
        // bind to loopback only; must be set before the first H2 class reads its system properties
        if (System.getProperty("h2.bindAddress") == null) {
            System.setProperty("h2.bindAddress", "127.0.0.1");
        }
        SQLException last = null;
        for (int attempt = 0; attempt < 5; attempt++) {
            int port = freePort();
            try {
                Server server = Server.createTcpServer("-tcpPort", Integer.toString(port), "-ifNotExists")
                        .start();
                String url = "jdbc:h2:tcp://127.0.0.1:" + server.getPort() + "/mem:" + database + ";DB_CLOSE_DELAY=-1";
                return new EmbeddedH2(server, url);
            } catch (SQLException e) {
                last = e; // the port was taken between probing and binding: try another
            }
        }
        throw new BackendUnreachableException("cannot start the embedded H2 server", last);
    }

    /** The JDBC URL the workers and the command use. */
    String url() {
        return url;
    }

    @Override
    public void close() {
        server.stop();
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new BackendUnreachableException("no free loopback port for the embedded H2 server", e);
        }
    }
}
