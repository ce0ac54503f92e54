package io.distlock.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.OptionalLong;

/**
 * {@link FencedResource}'s rules on a file, so that several processes share one fenced counter: each operation is
 * atomic under an OS file lock (the resource's own integrity, as a database row's would be), and checks the token.
 * The file holds one line: {@code highestToken acquisition value acceptedWrites rejected}.
 */
public final class FileFencedCounter {
    private final Path file;

    public FileFencedCounter(Path file) {
        this.file = file;
    }

    /** The state of the counter. */
    public record State(long highestToken, String acquisition, long value, long acceptedWrites, long rejected) {}

    public OptionalLong read(long token, String acquisition) {
        long[] out = new long[1];
        boolean ok = update(token, acquisition, s -> {
            out[0] = s.value;
            return s;
        });
        return ok ? OptionalLong.of(out[0]) : OptionalLong.empty();
    }

    public boolean write(long token, String acquisition, long newValue) {
        return update(
                token,
                acquisition,
                s -> new State(s.highestToken, s.acquisition, newValue, s.acceptedWrites + 1, s.rejected));
    }

    public State state() {
        try (FileChannel ch = FileChannel.open(
                        file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
                FileLock ignored = ch.lock()) {
            return read(ch);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private boolean update(long token, String acquisition, java.util.function.UnaryOperator<State> op) {
        try (FileChannel ch = FileChannel.open(
                        file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
                FileLock ignored = ch.lock()) {
            State s = read(ch);
            boolean stale = token < s.highestToken || (token == s.highestToken && !acquisition.equals(s.acquisition));
            State next = stale
                    ? new State(s.highestToken, s.acquisition, s.value, s.acceptedWrites, s.rejected + 1)
                    : op.apply(new State(token, acquisition, s.value, s.acceptedWrites, s.rejected));
            byte[] bytes = (next.highestToken + " " + next.acquisition + " " + next.value + " " + next.acceptedWrites
                            + " " + next.rejected + "\n")
                    .getBytes(StandardCharsets.UTF_8);
            ch.truncate(0);
            ch.write(ByteBuffer.wrap(bytes), 0);
            ch.force(false);
            return !stale;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static State read(FileChannel ch) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate((int) Math.max(1, ch.size()));
        ch.read(buf, 0);
        String line = new String(buf.array(), 0, buf.position(), StandardCharsets.UTF_8).trim();
        if (line.isEmpty()) {
            return new State(Long.MIN_VALUE, "-", 0, 0, 0);
        }
        String[] f = line.split(" ");
        return new State(Long.parseLong(f[0]), f[1], Long.parseLong(f[2]), Long.parseLong(f[3]), Long.parseLong(f[4]));
    }
}
