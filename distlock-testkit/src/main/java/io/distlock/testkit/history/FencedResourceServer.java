package io.distlock.testkit.history;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The fenced resource of the safety suite: named counters behind a TCP port on loopback, so that client processes
 * reach it through the network (and through a fault proxy), and every request it received is logged.
 *
 * <p>The fencing rule: every request, reads included, carries {@code (token, acquisitionId)}. Per counter the
 * resource keeps the highest token it accepted and the acquisition that presented it; it refuses a lower token
 * ({@code stale}) and an equal token from another acquisition ({@code duplicate}, which only a store that issues a
 * token twice can cause), and raises the mark on every request it accepts, reads included, so that a stale holder
 * cannot write between the new holder's read and write. An {@linkplain #startUnfenced unfenced} resource accepts
 * everything and logs what the rule would have refused with reason {@code unfenced}: the raw overlap of holders
 * (S4), and the increments lost without fencing.
 *
 * <p>Protocol, one line per request and per answer (words without whitespace):
 *
 * <pre>
 * R key token acq process op        -&gt; OK value | NO reason
 * W key token acq process op value  -&gt; OK value | NO reason
 * </pre>
 */
public final class FencedResourceServer implements AutoCloseable {
    private final ServerSocket socket;
    private final HistoryWriter log;
    private final boolean fenced;
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "fenced-resource");
        t.setDaemon(true);
        return t;
    });
    private final ReentrantLock lock = new ReentrantLock();
    private final Map<String, Counter> counters = new HashMap<>();

    /** The state of one counter. */
    public record Counter(long highestToken, String highestAcq, long value, long acceptedWrites, long refused) {}

    private FencedResourceServer(ServerSocket socket, HistoryWriter log, boolean fenced) {
        this.socket = socket;
        this.log = log;
        this.fenced = fenced;
        threads.execute(this::accept);
    }

    /** A fenced resource on a free loopback port, logging to {@code logFile}. */
    public static FencedResourceServer start(Path logFile) {
        return start(logFile, true);
    }

    /** A resource that accepts every request, for measuring raw overlaps; logs to {@code logFile}. */
    public static FencedResourceServer startUnfenced(Path logFile) {
        return start(logFile, false);
    }

    private static FencedResourceServer start(Path logFile, boolean fenced) {
        try {
            ServerSocket s = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
            return new FencedResourceServer(s, HistoryWriter.open(logFile, "resource"), fenced);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the fenced resource", e);
        }
    }

    public int port() {
        return socket.getLocalPort();
    }

    public boolean fenced() {
        return fenced;
    }

    /** The state of counter {@code key} (all zero if never used). */
    public Counter counter(String key) {
        lock.lock();
        try {
            return counters.getOrDefault(key, new Counter(Long.MIN_VALUE, "-", 0, 0, 0));
        } finally {
            lock.unlock();
        }
    }

    private void accept() {
        while (!socket.isClosed()) {
            try {
                Socket c = socket.accept();
                threads.execute(() -> serve(c));
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void serve(Socket c) {
        try (c;
                BufferedReader in =
                        new BufferedReader(new InputStreamReader(c.getInputStream(), StandardCharsets.UTF_8))) {
            OutputStream out = c.getOutputStream();
            String line;
            while ((line = in.readLine()) != null) {
                out.write((answer(line) + "\n").getBytes(StandardCharsets.UTF_8));
                out.flush();
            }
        } catch (IOException | RuntimeException e) {
            // the client went away or sent garbage: drop the connection
        }
    }

    String answer(String line) {
        String[] w = line.trim().split(" ");
        boolean write = w[0].equals("W");
        if (!(write || w[0].equals("R")) || w.length != (write ? 7 : 6)) {
            return "NO malformed";
        }
        String key = w[1];
        long token = Long.parseLong(w[2]);
        String acq = w[3];
        String process = w[4];
        long op = Long.parseLong(w[5]);
        lock.lock();
        try {
            long now = System.nanoTime();
            Counter c = counters.getOrDefault(key, new Counter(Long.MIN_VALUE, "-", 0, 0, 0));
            String reason = token < c.highestToken()
                    ? "stale"
                    : token == c.highestToken() && !acq.equals(c.highestAcq()) ? "duplicate" : "";
            boolean accepted = reason.isEmpty() || !fenced;
            if (!reason.isEmpty() && !fenced) {
                reason = "unfenced";
            }
            long before = c.value();
            Counter next;
            if (!accepted) {
                next = new Counter(c.highestToken(), c.highestAcq(), before, c.acceptedWrites(), c.refused() + 1);
            } else {
                boolean raise = token >= c.highestToken();
                long high = raise ? token : c.highestToken();
                String highAcq = raise ? acq : c.highestAcq();
                next = write
                        ? new Counter(high, highAcq, Long.parseLong(w[6]), c.acceptedWrites() + 1, c.refused())
                        : new Counter(high, highAcq, before, c.acceptedWrites(), c.refused());
            }
            counters.put(key, next);
            log.resource(new ResourceEvent(
                    now, key, token, acq, process, op, write, accepted, reason, before, next.value()));
            return accepted ? "OK " + next.value() : "NO " + reason;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException e) {
            // closing anyway
        }
        threads.shutdownNow();
        log.close();
    }
}
