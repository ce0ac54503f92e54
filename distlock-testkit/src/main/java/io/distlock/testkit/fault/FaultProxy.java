package io.distlock.testkit.fault;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A TCP proxy on loopback between a client and its store, with network faults on demand. Point the client at {@link
 * #port()} instead of the store; each client connection gets its own connection to the target.
 *
 * <pre>{@code
 * try (FaultProxy proxy = FaultProxy.start("redis", "127.0.0.1", redis.port(), FaultLog.NONE);
 *      LockClient client = RedisLockClient.create("redis://127.0.0.1:" + proxy.port())) {
 *     ...
 *     proxy.blackhole(Duration.ofSeconds(6));   // heals by itself after 6 s
 * }
 * }</pre>
 *
 * <h2>Faults</h2>
 *
 * <p>Each lasts the given duration, then heals by itself (or at {@link Fault#close()}); one fault of each kind at a
 * time, and different kinds may overlap.
 *
 * <ul>
 *   <li>{@link #delay}: every chunk waits a base delay plus a random jitter, in order.
 *   <li>{@link #blackhole}: nothing is forwarded either way and no FIN is sent; new connections are accepted but not
 *       connected. Bytes wait (as a blackholed TCP link retransmits) and flow again when it heals, unless a side gave
 *       up first.
 *   <li>{@link #reset}: every open connection is reset (RST both ways), and new ones are reset on accept.
 *   <li>{@link #halfOpen}: the target side of every connection is closed (the server sees the client go away), the
 *       client side stays open and hears nothing, not even a FIN; when it heals the client side is reset.
 *   <li>{@link #dropReplies}: requests are forwarded, the first reply on each connection is dropped and the
 *       connection closed: the store did the work, the client never learns it (Curator's ChaosMonkey).
 *   <li>{@link #dropAfterBytes}: each connection forwards N more bytes, then goes silent (mid-message, no FIN); when
 *       it heals, silenced connections are reset.
 * </ul>
 */
public final class FaultProxy implements AutoCloseable {
    private final String name;
    private final String targetHost;
    private final int targetPort;
    private final FaultLog log;
    private final ServerSocket socket;
    private final ExecutorService threads;
    private final Set<ProxyLink> links = ConcurrentHashMap.newKeySet();
    private final ReentrantLock gateLock = new ReentrantLock();
    private final Condition opened = gateLock.newCondition();
    private final AtomicLong droppedReplies = new AtomicLong();

    private volatile boolean blackhole;
    private volatile boolean resetting;
    private volatile boolean halfOpen;
    private volatile boolean dropReplies;
    private volatile long dropAfter = -1;
    private volatile long delayNanos;
    private volatile long jitterNanos;

    private FaultProxy(String name, String targetHost, int targetPort, FaultLog log, ServerSocket socket) {
        this.name = name;
        this.targetHost = targetHost;
        this.targetPort = targetPort;
        this.log = log;
        this.socket = socket;
        this.threads = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "fault-proxy-" + name);
            t.setDaemon(true);
            return t;
        });
        threads.execute(this::accept);
    }

    /**
     * Starts a proxy named {@code name} on a free port of 127.0.0.1 in front of {@code targetHost:targetPort}; faults
     * are reported to {@code log} with the proxy's name as their target.
     *
     * @throws IllegalArgumentException if the port is out of range
     */
    public static FaultProxy start(String name, String targetHost, int targetPort, FaultLog log) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(targetHost, "targetHost");
        Objects.requireNonNull(log, "log");
        if (targetPort <= 0 || targetPort > 65_535) {
            throw new IllegalArgumentException("targetPort out of range: " + targetPort);
        }
        try {
            ServerSocket s = new ServerSocket(0, 100, InetAddress.getLoopbackAddress());
            return new FaultProxy(name, targetHost, targetPort, log, s);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the fault proxy " + name, e);
        }
    }

    /** A proxy in front of {@code 127.0.0.1:targetPort} that logs nothing. */
    public static FaultProxy start(int targetPort) {
        return start("proxy-" + targetPort, "127.0.0.1", targetPort, FaultLog.NONE);
    }

    public String name() {
        return name;
    }

    /** The port clients connect to, on 127.0.0.1. */
    public int port() {
        return socket.getLocalPort();
    }

    /** {@code 127.0.0.1:<port>}. */
    public String address() {
        return "127.0.0.1:" + port();
    }

    /** Connections open now. */
    public int connections() {
        return links.size();
    }

    /** Replies dropped by {@link #dropReplies} so far. */
    public long droppedReplies() {
        return droppedReplies.get();
    }

    /** Delays every chunk by {@code base} plus a uniform random part of {@code jitter}, for {@code duration}. */
    public Fault delay(Duration base, Duration jitter, Duration duration) {
        Objects.requireNonNull(base, "base");
        Objects.requireNonNull(jitter, "jitter");
        if (base.isNegative() || jitter.isNegative()) {
            throw new IllegalArgumentException("delay must not be negative: " + base + " + " + jitter);
        }
        return Fault.start(
                "delay " + base.toMillis() + "+" + jitter.toMillis() + "ms",
                name,
                duration,
                () -> {
                    if (delayNanos != 0 || jitterNanos != 0) {
                        throw new IllegalStateException("a delay is already in force on " + name);
                    }
                    delayNanos = base.toNanos();
                    jitterNanos = jitter.toNanos();
                },
                () -> {
                    delayNanos = 0;
                    jitterNanos = 0;
                },
                log);
    }

    /** Forwards nothing either way and sends no FIN, for {@code duration}. */
    public Fault blackhole(Duration duration) {
        return Fault.start(
                "blackhole",
                name,
                duration,
                () -> {
                    if (blackhole) {
                        throw new IllegalStateException("a blackhole is already in force on " + name);
                    }
                    blackhole = true;
                },
                () -> {
                    gateLock.lock();
                    try {
                        blackhole = false;
                        opened.signalAll();
                    } finally {
                        gateLock.unlock();
                    }
                },
                log);
    }

    /** Resets every connection now, and every new one for {@code duration}. */
    public Fault reset(Duration duration) {
        return Fault.start(
                "reset",
                name,
                duration,
                () -> {
                    resetting = true;
                    List.copyOf(links).forEach(ProxyLink::reset);
                },
                () -> resetting = false,
                log);
    }

    /** Closes the target side of every connection and keeps the client side open and quiet, for {@code duration}. */
    public Fault halfOpen(Duration duration) {
        return Fault.start(
                "half-open",
                name,
                duration,
                () -> {
                    halfOpen = true;
                    List.copyOf(links).forEach(ProxyLink::makeHalfOpen);
                },
                () -> {
                    halfOpen = false;
                    for (ProxyLink l : List.copyOf(links)) {
                        if (l.halfOpen) {
                            l.reset();
                        }
                    }
                },
                log);
    }

    /** Forwards requests, drops the first reply of each connection and closes it, for {@code duration}. */
    public Fault dropReplies(Duration duration) {
        return Fault.start("drop-replies", name, duration, () -> dropReplies = true, () -> dropReplies = false, log);
    }

    /**
     * Lets each connection forward {@code bytes} more bytes (both directions counted), then silences it, for {@code
     * duration}; silenced connections are reset when it heals.
     *
     * @throws IllegalArgumentException if {@code bytes} is negative
     */
    public Fault dropAfterBytes(long bytes, Duration duration) {
        if (bytes < 0) {
            throw new IllegalArgumentException("bytes must not be negative: " + bytes);
        }
        return Fault.start(
                "drop-after-" + bytes + "-bytes",
                name,
                duration,
                () -> {
                    dropAfter = bytes;
                    links.forEach(l -> l.budget.set(bytes));
                },
                () -> {
                    dropAfter = -1;
                    for (ProxyLink l : List.copyOf(links)) {
                        l.budget.set(-1);
                        if (l.cut) {
                            l.reset();
                        }
                    }
                },
                log);
    }

    /** Resets every open connection now (the clients reconnect); no lasting fault. */
    public void resetConnections() {
        List.copyOf(links).forEach(ProxyLink::reset);
    }

    private void accept() {
        while (!socket.isClosed()) {
            Socket c;
            try {
                c = socket.accept();
                c.setTcpNoDelay(true);
            } catch (IOException e) {
                return; // closed
            }
            if (resetting) {
                ProxyLink.rst(c);
                continue;
            }
            ProxyLink l = new ProxyLink(this, c);
            l.budget.set(dropAfter);
            links.add(l);
            threads.execute(l::open);
        }
    }

    void awaitNoBlackhole() {
        if (!blackhole) {
            return;
        }
        gateLock.lock();
        try {
            while (blackhole) {
                opened.awaitUninterruptibly();
            }
        } finally {
            gateLock.unlock();
        }
    }

    boolean halfOpenActive() {
        return halfOpen;
    }

    boolean dropRepliesActive() {
        return dropReplies;
    }

    void countDroppedReply() {
        droppedReplies.incrementAndGet();
    }

    long delayNanos() {
        return delayNanos;
    }

    long jitterNanos() {
        return jitterNanos;
    }

    String targetHost() {
        return targetHost;
    }

    int targetPort() {
        return targetPort;
    }

    void execute(Runnable r) {
        threads.execute(r);
    }

    void forget(ProxyLink l) {
        links.remove(l);
    }

    /** Stops accepting and closes every connection. */
    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException e) {
            // closing anyway
        }
        gateLock.lock();
        try {
            blackhole = false;
            opened.signalAll();
        } finally {
            gateLock.unlock();
        }
        List.copyOf(links).forEach(ProxyLink::close);
        threads.shutdownNow();
    }

    @Override
    public String toString() {
        return "FaultProxy[" + name + " " + address() + " -> " + targetHost + ":" + targetPort + "]";
    }
}
