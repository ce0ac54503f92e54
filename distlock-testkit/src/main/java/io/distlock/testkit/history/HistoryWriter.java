package io.distlock.testkit.history;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * Appends the events of one process to its JSONL history file.
 *
 * <p>Durability: each event is one {@code write()} of one whole line on a file opened for appending, with no buffer
 * in the JVM, so a process killed with SIGKILL loses at most the event it was writing; the kernel keeps what was
 * written (only a machine crash would need {@code fsync}).
 *
 * <p>Time: events carry {@link System#nanoTime()}, which HotSpot reads from {@code CLOCK_MONOTONIC}, shared by every
 * process of one Linux machine: histories of different JVMs merge into one timeline.
 */
public final class HistoryWriter implements AutoCloseable {
    private final FileChannel channel;
    private final String process;
    private final AtomicLong ops = new AtomicLong();
    private final ReentrantLock lock = new ReentrantLock();

    private HistoryWriter(FileChannel channel, String process) {
        this.channel = channel;
        this.process = process;
    }

    /**
     * Opens {@code file} for appending (creating it and its directory) for events of {@code process}.
     *
     * @throws IllegalArgumentException if {@code process} is blank or contains whitespace
     */
    public static HistoryWriter open(Path file, String process) {
        Objects.requireNonNull(file, "file");
        checkWord("process", process);
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            return new HistoryWriter(
                    FileChannel.open(
                            file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND),
                    process);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open history file " + file, e);
        }
    }

    static void checkWord(String what, String value) {
        Objects.requireNonNull(value, what);
        if (value.isEmpty() || value.chars().anyMatch(Character::isWhitespace)) {
            throw new IllegalArgumentException(what + " must be a non-empty word without whitespace: '" + value + "'");
        }
    }

    public String process() {
        return process;
    }

    /** A new operation id, unique in this writer. */
    public long nextOp() {
        return ops.incrementAndGet();
    }

    /** Records a client event of this process, timestamped now. */
    public ClientEvent client(
            String key,
            String acq,
            long op,
            ClientEvent.Op f,
            ClientEvent.Type type,
            @Nullable Long token,
            @Nullable Long value,
            @Nullable String error) {
        ClientEvent e = new ClientEvent(
                System.nanoTime(),
                System.currentTimeMillis(),
                process,
                Thread.currentThread().getName(),
                key,
                acq,
                op,
                f,
                type,
                token,
                value,
                error);
        append(e.toJson());
        return e;
    }

    public void resource(ResourceEvent e) {
        append(e.toJson());
    }

    /** Records the start or end of a fault, timestamped now. */
    public NemesisEvent nemesis(
            String fault, String target, NemesisEvent.Phase phase, String key, NemesisEvent.Effect effect) {
        NemesisEvent e = new NemesisEvent(System.nanoTime(), fault, target, phase, key, effect);
        append(e.toJson());
        return e;
    }

    /** Records a fact about the run (scenario, seed, backend, bounds), read back by {@link History#meta()}. */
    public void meta(String name, String value) {
        append(new Json.Line()
                .put("kind", "meta")
                .put("t", System.nanoTime())
                .put("name", name)
                .put("value", value)
                .end());
    }

    private void append(String line) {
        ByteBuffer buf = ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.UTF_8));
        lock.lock();
        try {
            while (buf.hasRemaining()) {
                var unused = channel.write(buf);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot append to the history of " + process, e);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void close() {
        try {
            channel.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
