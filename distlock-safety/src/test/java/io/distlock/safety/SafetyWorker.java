package io.distlock.safety;

import io.distlock.LockClient;
import io.distlock.testkit.history.FencedResourceClient;
import io.distlock.testkit.history.HistoryWriter;
import io.distlock.testkit.history.RecordedHold;
import io.distlock.testkit.history.RecordedLock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The client JVM of the multi-process scenarios. Arguments: {@code MODE PROCESS HISTORY_DIR SPEC RESOURCE_PORT KEY
 * THREADS DURATION_MS WAIT_MS THINK_MS SEED}. Modes:
 *
 * <ul>
 *   <li>{@code w1}: runs the fenced-counter {@link Workload} for the duration, prints {@code READY} when its client is
 *       connected and {@code DONE <increments>} at the end;
 *   <li>{@code w1-slow}: the same, every hold lasting the whole THINK_MS (a holder a fault can hit);
 *   <li>{@code wait-once}: prints {@code WAITING}, tries once to take the lock waiting up to WAIT_MS, and if it got it
 *       increments the counter under it and releases; prints {@code DONE acquired} or {@code DONE not-acquired};
 *   <li>{@code split-vote}: see {@link RedLockMoreWorker}.
 *   <li>the modes of {@link ClientFaultWorker} ({@code x2-thread-dies}, {@code g10-waiters}).
 *   <li>{@code hold-fixed}: takes the lock with a fixed lease of THINK_MS (waiting up to WAIT_MS), prints {@code
 *       HELD}, reads the counter, checks its hold every 10 ms until the check says lost (a holder that neither renews
 *       nor releases; stopping the JVM stops the checks too), prints {@code LOST}, writes the counter it read plus
 *       one (a stale write the fence refuses) and releases.
 * </ul>
 *
 * Everything it does goes to {@code HISTORY_DIR/PROCESS.jsonl}.
 */
public final class SafetyWorker {
    private SafetyWorker() {}

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        String process = args[1];
        Path dir = Path.of(args[2]);
        String spec = args[3];
        int resourcePort = Integer.parseInt(args[4]);
        String key = args[5];
        int threads = Integer.parseInt(args[6]);
        Duration duration = Duration.ofMillis(Long.parseLong(args[7]));
        Duration wait = Duration.ofMillis(Long.parseLong(args[8]));
        Duration think = Duration.ofMillis(Long.parseLong(args[9]));
        long seed = Long.parseLong(args[10]);
        try (HistoryWriter history = HistoryWriter.open(dir.resolve(process + ".jsonl"), process);
                LockClient client = Clients.create(spec)) {
            var unused = client.lock(key).isLocked(); // connected
            switch (mode) {
                case "w1", "w1-slow" -> {
                    print("READY");
                    Workload w = new Workload(client, history, key, threads, wait, think, resourcePort, seed);
                    if (mode.equals("w1-slow")) {
                        w.fixedThink();
                    }
                    w.start(duration);
                    w.join(duration.plusSeconds(60));
                    print(w.failure() == null ? "DONE " + w.increments() : "FAILED " + w.failure());
                }
                case "wait-once" -> {
                    RecordedLock lock = new RecordedLock(client.lock(key), history);
                    print("WAITING");
                    Optional<RecordedHold> h = lock.tryAcquire(wait);
                    if (h.isPresent()) {
                        try (FencedResourceClient resource =
                                new FencedResourceClient(Workload.RESOURCE_HOST, resourcePort, Duration.ofSeconds(5))) {
                            RecordedHold hold = h.get();
                            if (hold.check()) {
                                OptionalLong v = resource.read(hold);
                                if (v.isPresent() && hold.check()) {
                                    var written = resource.write(hold, v.getAsLong() + 1);
                                }
                            }
                            var released = hold.release();
                        }
                    }
                    print(h.isPresent() ? "DONE acquired" : "DONE not-acquired");
                }
                case "hold-fixed" -> {
                    RecordedLock lock = new RecordedLock(client.lock(key), history);
                    RecordedHold hold = lock.tryAcquire(wait, think).orElseThrow();
                    try (FencedResourceClient resource =
                            new FencedResourceClient(Workload.RESOURCE_HOST, resourcePort, Duration.ofSeconds(5))) {
                        OptionalLong v = resource.read(hold);
                        print("HELD");
                        while (hold.check()) {
                            Thread.sleep(10);
                        }
                        print("LOST");
                        if (v.isPresent()) {
                            var stale = resource.write(hold, v.getAsLong() + 1);
                        }
                        var released = hold.release();
                    }
                    print("DONE");
                }
                case RedLockMoreWorker.SPLIT_VOTE ->
                    RedLockMoreWorker.splitVote(client, history, dir, key, resourcePort, wait, think);
                default ->
                    ClientFaultWorker.run(
                            mode, process, dir, history, client, key, threads, duration, wait, think, resourcePort);
            }
        }
        System.exit(0);
    }

    private static void print(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
