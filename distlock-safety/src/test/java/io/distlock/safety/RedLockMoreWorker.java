package io.distlock.safety;

import io.distlock.DistributedLockException;
import io.distlock.LockClient;
import io.distlock.testkit.history.FencedResourceClient;
import io.distlock.testkit.history.HistoryWriter;
import io.distlock.testkit.history.RecordedHold;
import io.distlock.testkit.history.RecordedLock;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The {@code split-vote} mode of {@link SafetyWorker} (L4r): after {@code READY} the worker waits for the barrier file
 * the scenario writes into the history directory (a {@link System#nanoTime} instant: CLOCK_MONOTONIC, shared by every
 * JVM of the machine), then, at the barrier and every {@code PERIOD} ms after it, {@code ROUNDS} times (both from the
 * environment), tries once to take the lock waiting at most WAIT_MS; with a hold it checks it, reads the counter,
 * sleeps THINK_MS, checks again, writes the value plus one and releases. Prints {@code DONE <grants>}.
 */
final class RedLockMoreWorker {
    static final String SPLIT_VOTE = "split-vote";
    static final String ROUNDS = "SAFETY_ROUNDS";
    static final String PERIOD = "SAFETY_PERIOD_MS";
    private static final String BARRIER_FILE = "barrier";

    private RedLockMoreWorker() {}

    /** Writes the barrier instant for the workers of the scenario whose histories are in {@code dir}. */
    static void writeBarrier(Path dir, long nanos) {
        try {
            Path tmp = dir.resolve(BARRIER_FILE + ".tmp");
            Files.writeString(tmp, Long.toString(nanos), StandardCharsets.UTF_8);
            Files.move(tmp, dir.resolve(BARRIER_FILE), StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void splitVote(
            LockClient client,
            HistoryWriter history,
            Path dir,
            String key,
            int resourcePort,
            Duration wait,
            Duration think)
            throws InterruptedException, IOException {
        int rounds = Integer.parseInt(System.getenv(ROUNDS));
        long period = Long.parseLong(System.getenv(PERIOD)) * 1_000_000;
        System.out.println("READY");
        System.out.flush();
        Path file = dir.resolve(BARRIER_FILE);
        while (!Files.exists(file)) {
            Thread.sleep(2);
        }
        long barrier =
                Long.parseLong(Files.readString(file, StandardCharsets.UTF_8).strip());
        RecordedLock lock = new RecordedLock(client.lock(key), history);
        int grants = 0;
        try (FencedResourceClient resource =
                new FencedResourceClient(Workload.RESOURCE_HOST, resourcePort, Duration.ofSeconds(5))) {
            for (int r = 0; r < rounds; r++) {
                long at = barrier + r * period;
                long left;
                while ((left = at - System.nanoTime()) > 0) {
                    LockSupport.parkNanos(left);
                }
                Optional<RecordedHold> h;
                try {
                    h = lock.tryAcquire(wait);
                } catch (DistributedLockException e) {
                    continue;
                }
                if (h.isEmpty()) {
                    continue;
                }
                grants++;
                RecordedHold hold = h.get();
                if (hold.check()) {
                    OptionalLong v = resource.read(hold);
                    LockSupport.parkNanos(think.toNanos());
                    if (v.isPresent() && hold.check()) {
                        var unused = resource.write(hold, v.getAsLong() + 1);
                    }
                }
                var released = hold.release();
            }
        }
        System.out.println("DONE " + grants);
        System.out.flush();
    }
}
