package io.distlock.testkit.fault;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Wall-clock faults for processes this JVM starts, through libfaketime (Debian's package {@code faketime}): a {@link
 * FakeClock} is a file that the processes started with its {@link FakeClock#environment()} read on every wall-clock
 * call, and {@link FakeClock#jump} moves their wall clock by an offset, then back. Their monotonic clock ({@code
 * System.nanoTime()}, {@code CLOCK_MONOTONIC}) is left alone, as a real NTP step or operator's {@code date -s} leaves
 * it: a lock that measures leases and waits with it should not notice the jump.
 */
public final class ClockFaults {
    private static final List<Path> LIBRARIES = List.of(
            Path.of("/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"),
            Path.of("/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1"),
            Path.of("/usr/lib/faketime/libfaketimeMT.so.1"),
            Path.of("/usr/local/lib/faketime/libfaketimeMT.so.1"));

    private ClockFaults() {}

    /** libfaketime's multi-threaded library, if it is installed. */
    public static Optional<Path> library() {
        return LIBRARIES.stream().filter(Files::isReadable).findFirst();
    }

    /**
     * A fake clock that starts at the true time, for processes named {@code target} in the fault log.
     *
     * @throws IllegalStateException if libfaketime is not installed (Debian: {@code apt-get install faketime})
     */
    public static FakeClock fakeClock(String target) {
        Objects.requireNonNull(target, "target");
        Path lib = library()
                .orElseThrow(() -> new IllegalStateException(
                        "clock faults need libfaketime, which is not installed: apt-get install faketime"));
        try {
            Path file = Files.createTempFile("distlock-clock-", ".rc");
            FakeClock clock = new FakeClock(target, lib, file);
            clock.write(Duration.ZERO);
            return clock;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** One fake wall clock, shared by the processes started with its {@link #environment()}. */
    public static final class FakeClock implements AutoCloseable {
        private final String target;
        private final Path library;
        private final Path file;

        private FakeClock(String target, Path library, Path file) {
            this.target = target;
            this.library = library;
            this.file = file;
        }

        /** What a process needs in its environment to run on this clock (for {@code ProcessBuilder.environment()}). */
        public Map<String, String> environment() {
            return Map.of(
                    "LD_PRELOAD",
                    library.toString(),
                    "FAKETIME_TIMESTAMP_FILE",
                    file.toString(),
                    "FAKETIME_NO_CACHE",
                    "1",
                    "FAKETIME_DONT_FAKE_MONOTONIC",
                    "1");
        }

        /**
         * Moves the wall clock of this clock's processes by {@code offset} now, and back to the true time after
         * {@code duration}.
         *
         * @throws IllegalArgumentException if {@code duration} is negative
         */
        public Fault jump(Duration offset, Duration duration, FaultLog log) {
            Objects.requireNonNull(offset, "offset");
            String name =
                    "clock" + (offset.isNegative() ? "-" : "+") + offset.abs().toSeconds() + "s";
            return Fault.start(name, target, duration, () -> write(offset), () -> write(Duration.ZERO), log);
        }

        /** Writes the offset libfaketime reads: whole seconds with a sign, replaced atomically. */
        private void write(Duration offset) {
            String text = (offset.isNegative() ? "-" : "+") + offset.abs().toSeconds() + "\n";
            try {
                Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
                Files.writeString(tmp, text, StandardCharsets.US_ASCII);
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** Deletes the clock's file; processes still running on it keep the true time. */
        @Override
        public void close() {
            try {
                Files.deleteIfExists(file);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public String toString() {
            return "FakeClock[" + target + ", " + file + "]";
        }
    }
}
