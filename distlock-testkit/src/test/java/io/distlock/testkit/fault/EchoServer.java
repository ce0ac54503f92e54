package io.distlock.testkit.fault;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/** A TCP echo server on loopback that counts what it received and the connections that ended. */
final class EchoServer implements AutoCloseable {
    final ServerSocket socket;
    final AtomicLong received = new AtomicLong();
    final AtomicInteger ended = new AtomicInteger();
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "echo");
        t.setDaemon(true);
        return t;
    });

    EchoServer() throws IOException {
        socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        threads.execute(() -> {
            while (!socket.isClosed()) {
                try {
                    Socket c = socket.accept();
                    threads.execute(() -> echo(c));
                } catch (IOException e) {
                    return;
                }
            }
        });
    }

    int port() {
        return socket.getLocalPort();
    }

    private void echo(Socket c) {
        try (c) {
            InputStream in = c.getInputStream();
            OutputStream out = c.getOutputStream();
            byte[] buf = new byte[4096];
            int n;
            while ((n = in.read(buf)) >= 0) {
                received.addAndGet(n);
                out.write(buf, 0, n);
                out.flush();
            }
        } catch (IOException e) {
            // the proxy reset it
        } finally {
            ended.incrementAndGet();
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
        threads.shutdownNow();
    }
}
