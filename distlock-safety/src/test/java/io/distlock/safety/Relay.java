package io.distlock.safety;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP relay from {@code host:<port>} to a port on this JVM's loopback: how a worker JVM in a network namespace of
 * its own reaches the fenced resource, which listens on the loopback only. It relays bytes both ways and nothing else;
 * closing it closes every connection it made.
 */
final class Relay implements AutoCloseable {
    private final ServerSocket server;
    private final int target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();

    private Relay(ServerSocket server, int target) {
        this.server = server;
        this.target = target;
        Thread accept = new Thread(this::accept, "relay-" + server.getLocalPort());
        accept.setDaemon(true);
        accept.start();
    }

    /** A relay listening on {@code host} (an address of this namespace) to {@code 127.0.0.1:target}. */
    static Relay start(String host, int target) {
        try {
            ServerSocket s = new ServerSocket();
            s.bind(new InetSocketAddress(InetAddress.getByName(host), 0), 100);
            return new Relay(s, target);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on " + host, e);
        }
    }

    String host() {
        return server.getInetAddress().getHostAddress();
    }

    int port() {
        return server.getLocalPort();
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket in = server.accept();
                Socket out = new Socket();
                sockets.add(in);
                sockets.add(out);
                try {
                    out.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), target), 2000);
                } catch (IOException e) {
                    in.close();
                    out.close();
                    continue;
                }
                pump(in, out);
                pump(out, in);
            } catch (IOException e) {
                // closed, or one failed connection: the loop condition tells which
            }
        }
    }

    private static void pump(Socket from, Socket to) {
        Thread t = new Thread(
                () -> {
                    byte[] buffer = new byte[8192];
                    try (InputStream in = from.getInputStream();
                            OutputStream out = to.getOutputStream()) {
                        int n;
                        while ((n = in.read(buffer)) >= 0) {
                            out.write(buffer, 0, n);
                            out.flush();
                        }
                    } catch (IOException e) {
                        // the other side closed
                    } finally {
                        close(from);
                        close(to);
                    }
                },
                "relay-pump");
        t.setDaemon(true);
        t.start();
    }

    private static void close(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // closing anyway
        }
    }

    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException e) {
            // closing anyway
        }
        sockets.forEach(Relay::close);
    }
}
