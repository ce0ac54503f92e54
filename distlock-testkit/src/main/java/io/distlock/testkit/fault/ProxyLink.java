package io.distlock.testkit.fault;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * One client connection through a FaultProxy, and its connection to the target: two pump threads copy bytes, one per
 * direction, and consult the proxy's current faults for every chunk they read.
 *
 * Per chunk, in order: wait while a blackhole is in force (the chunk stays in the pump, later bytes stay in the
 * kernel's buffers, as packets a blackholed link keeps retransmitting); drop it if the link is silent (cut after N
 * bytes, half-open); for a reply while "drop replies" is in force, drop it and close both sockets; wait out the delay
 * (base plus a random jitter, never earlier than the previous chunk of the same direction, so bytes stay in order);
 * spend the byte budget of "drop after N bytes", forwarding only what fits and silencing the link when it runs out.
 *
 * End of stream: a FIN from one side becomes a FIN to the other (half-close), except on a silent link, which sends
 * nothing. Errors close both sockets.
 */
final class ProxyLink {
    private final FaultProxy proxy;
    final Socket client;
    private volatile @Nullable Socket server;
    /** Forwards nothing more and sends no FIN: the far side sees a connection that went quiet. */
    final AtomicBoolean silent = new AtomicBoolean();
    /** Made silent by a half-open fault: reset when it heals. */
    volatile boolean halfOpen;
    /** Made silent by a byte budget: reset when the fault heals. */
    volatile boolean cut;
    /** Bytes left before the link goes silent, or -1 for no budget. */
    final AtomicLong budget = new AtomicLong(-1);

    private final AtomicBoolean closed = new AtomicBoolean();
    private long lastUp;
    private long lastDown;

    ProxyLink(FaultProxy proxy, Socket client) {
        this.proxy = proxy;
        this.client = client;
    }

    /** Connects to the target (after any blackhole heals) and starts the pumps; runs on its own thread. */
    void open() {
        try {
            proxy.awaitNoBlackhole();
            if (proxy.halfOpenActive()) {
                halfOpen = true;
                silent.set(true);
                proxy.execute(() -> pump(client, null, true));
                return;
            }
            Socket s = new Socket();
            s.setTcpNoDelay(true);
            s.connect(new InetSocketAddress(proxy.targetHost(), proxy.targetPort()), 5_000);
            server = s;
            if (closed.get()) {
                s.close();
                return;
            }
            proxy.execute(() -> pump(client, s, true));
            proxy.execute(() -> pump(s, client, false));
        } catch (IOException e) {
            reset();
        }
    }

    private void pump(Socket from, @Nullable Socket to, boolean up) {
        byte[] buf = new byte[16 * 1024];
        try {
            InputStream in = from.getInputStream();
            OutputStream out = to == null ? null : to.getOutputStream();
            for (; ; ) {
                int n = in.read(buf);
                long readAt = System.nanoTime();
                if (n < 0) {
                    if (!silent.get() && to != null) {
                        to.shutdownOutput();
                    }
                    return;
                }
                proxy.awaitNoBlackhole();
                if (silent.get() || out == null) {
                    continue;
                }
                if (!up && proxy.dropRepliesActive()) {
                    proxy.countDroppedReply();
                    close();
                    return;
                }
                sleepUntil(deliveryTime(readAt, up));
                int forward = spend(n);
                if (forward > 0) {
                    out.write(buf, 0, forward);
                    out.flush();
                }
                if (forward < n) {
                    cut = true;
                    silent.set(true);
                }
            }
        } catch (IOException e) {
            if (!silent.get()) {
                close();
            }
        } finally {
            if (closed.get()) {
                proxy.forget(this);
            }
        }
    }

    private long deliveryTime(long readAt, boolean up) {
        long delay = proxy.delayNanos();
        long jitter = proxy.jitterNanos();
        if (delay == 0 && jitter == 0) {
            return readAt;
        }
        long at = readAt + delay + (jitter > 0 ? ThreadLocalRandom.current().nextLong(jitter + 1) : 0);
        synchronized (this) {
            if (up) {
                at = Math.max(at, lastUp);
                lastUp = at;
            } else {
                at = Math.max(at, lastDown);
                lastDown = at;
            }
        }
        return at;
    }

    private static void sleepUntil(long at) {
        for (long left = at - System.nanoTime(); left > 0; left = at - System.nanoTime()) {
            LockSupport.parkNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)));
        }
    }

    /** How many of {@code n} bytes the budget lets through. */
    private int spend(int n) {
        for (; ; ) {
            long left = budget.get();
            if (left < 0) {
                return n;
            }
            long take = Math.min(left, n);
            if (budget.compareAndSet(left, left - take)) {
                return (int) take;
            }
        }
    }

    /** Half-open: closes the target side (the server sees the client go away), leaves the client side quiet. */
    void makeHalfOpen() {
        halfOpen = true;
        silent.set(true);
        Socket s = server;
        if (s != null) {
            closeQuietly(s);
        }
    }

    /** Closes both sides with a normal close (FIN). */
    void close() {
        if (closed.compareAndSet(false, true)) {
            closeQuietly(client);
            Socket s = server;
            if (s != null) {
                closeQuietly(s);
            }
            proxy.forget(this);
        }
    }

    /** Closes both sides with a TCP reset (RST). */
    void reset() {
        if (closed.compareAndSet(false, true)) {
            rst(client);
            Socket s = server;
            if (s != null) {
                rst(s);
            }
            proxy.forget(this);
        }
    }

    static void rst(Socket s) {
        try {
            s.setSoLinger(true, 0);
        } catch (IOException e) {
            // closing anyway
        }
        closeQuietly(s);
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // closing anyway
        }
    }
}
