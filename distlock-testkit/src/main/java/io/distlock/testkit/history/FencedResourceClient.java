package io.distlock.testkit.history;

import io.distlock.testkit.history.ClientEvent.Op;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * A client of the {@link FencedResourceServer} that records each request in its process's history: {@code read} and
 * {@code write} events, {@code ok} when accepted, {@code fail} when refused, {@code info} when the answer did not come
 * (timeout, broken connection: the request may have been applied). One connection, used by one request at a time;
 * reconnects after a failure.
 */
public final class FencedResourceClient implements AutoCloseable {
    private final String host;
    private final int port;
    private final Duration timeout;
    private final ReentrantLock lock = new ReentrantLock();
    private @Nullable Socket socket;
    private @Nullable BufferedReader in;

    /** A client of the resource at {@code host:port}, waiting at most {@code timeout} for each answer. */
    public FencedResourceClient(String host, int port, Duration timeout) {
        this.host = host;
        this.port = port;
        this.timeout = timeout;
    }

    /** Reads counter {@code hold.key()} under the hold; empty if refused or unanswered. */
    public OptionalLong read(RecordedHold hold) {
        HistoryWriter h = hold.history();
        long op = h.nextOp();
        h.client(hold.key(), hold.acq(), op, Op.READ, ClientEvent.Type.INVOKE, hold.token(), null, null);
        String answer =
                call(hold, "R " + hold.key() + " " + hold.token() + " " + hold.acq() + " " + h.process() + " " + op);
        return outcome(hold, op, Op.READ, null, answer);
    }

    /** Writes {@code value} to counter {@code hold.key()} under the hold; whether it was accepted. */
    public boolean write(RecordedHold hold, long value) {
        HistoryWriter h = hold.history();
        long op = h.nextOp();
        h.client(hold.key(), hold.acq(), op, Op.WRITE, ClientEvent.Type.INVOKE, hold.token(), value, null);
        String answer = call(
                hold,
                "W " + hold.key() + " " + hold.token() + " " + hold.acq() + " " + h.process() + " " + op + " " + value);
        return outcome(hold, op, Op.WRITE, value, answer).isPresent();
    }

    private OptionalLong outcome(RecordedHold hold, long op, Op f, @Nullable Long value, String answer) {
        HistoryWriter h = hold.history();
        if (answer.startsWith("OK ")) {
            long v = Long.parseLong(answer.substring(3).trim());
            h.client(
                    hold.key(),
                    hold.acq(),
                    op,
                    f,
                    ClientEvent.Type.OK,
                    hold.token(),
                    f == Op.READ ? Long.valueOf(v) : value,
                    null);
            return OptionalLong.of(v);
        }
        if (answer.startsWith("NO ")) {
            h.client(
                    hold.key(),
                    hold.acq(),
                    op,
                    f,
                    ClientEvent.Type.FAIL,
                    hold.token(),
                    value,
                    answer.substring(3).trim());
        } else {
            h.client(hold.key(), hold.acq(), op, f, ClientEvent.Type.INFO, hold.token(), value, answer);
        }
        return OptionalLong.empty();
    }

    private String call(RecordedHold hold, String request) {
        HistoryWriter.checkWord("key", hold.key());
        lock.lock();
        try {
            try {
                if (socket == null || in == null) {
                    Socket s = new Socket();
                    s.connect(new InetSocketAddress(host, port), (int) timeout.toMillis());
                    s.setSoTimeout((int) timeout.toMillis());
                    s.setTcpNoDelay(true);
                    socket = s;
                    in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
                }
                socket.getOutputStream().write((request + "\n").getBytes(StandardCharsets.UTF_8));
                String line = in.readLine();
                if (line == null) {
                    throw new IOException("connection closed");
                }
                return line;
            } catch (IOException e) {
                closeSocket();
                return "unanswered: " + e;
            }
        } finally {
            lock.unlock();
        }
    }

    private void closeSocket() {
        Socket s = socket;
        socket = null;
        in = null;
        if (s != null) {
            try {
                s.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
    }

    @Override
    public void close() {
        lock.lock();
        try {
            closeSocket();
        } finally {
            lock.unlock();
        }
    }
}
