package io.distlock.safety;

import io.distlock.DistributedLock;
import io.distlock.DistributedLockException;
import io.distlock.LockClient;
import io.distlock.testkit.history.ClientEvent;
import io.distlock.testkit.history.FencedResourceClient;
import io.distlock.testkit.history.HistoryWriter;
import io.distlock.testkit.history.NemesisEvent;
import io.distlock.testkit.history.RecordedHold;
import io.distlock.testkit.history.RecordedLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The worker modes of the client-fault scenarios ({@link ClientFaultScenarios}), run by {@link SafetyWorker} with its
 * arguments:
 *
 * <ul>
 *   <li>{@code x2-thread-dies}: one thread takes the lock through the {@code Lock} view (renewed by the watchdog),
 *       prints {@code HOLDING <token>}, holds it for THINK_MS, records a nemesis event {@code thread-death} (effect
 *       HOLDER_DOWN) and dies of an uncaught exception without unlocking; the JVM and its client then live on for
 *       DURATION_MS and print {@code DONE};
 *   <li>{@code g10-waiters}: THREADS threads each wait for the lock once (up to WAIT_MS) from the moment the file
 *       {@code HISTORY_DIR/go} appears, hold it for THINK_MS doing a fenced increment, and release; prints {@code READY}
 *       when every thread waits for the file and {@code DONE acquired=<n> missed=<n> errors=<n>} at the end.
 * </ul>
 */
final class ClientFaultWorker {
    private ClientFaultWorker() {}

    static void run(
            String mode,
            String process,
            Path dir,
            HistoryWriter history,
            LockClient client,
            String key,
            int threads,
            Duration duration,
            Duration wait,
            Duration think,
            int resourcePort)
            throws Exception {
        switch (mode) {
            case "x2-thread-dies" -> threadDies(process, history, client, key, duration, think);
            case "g10-waiters" -> waiters(process, dir, history, client, key, threads, wait, think, resourcePort);
            default -> throw new IllegalArgumentException("mode: " + mode);
        }
    }

    private static void threadDies(
            String process, HistoryWriter history, LockClient client, String key, Duration duration, Duration think)
            throws InterruptedException {
        DistributedLock lock = client.lock(key);
        Thread t = new Thread(
                () -> {
                    String acq = process + "-x2";
                    long op = history.nextOp();
                    history.client(key, acq, op, ClientEvent.Op.ACQUIRE, ClientEvent.Type.INVOKE, null, null, null);
                    lock.lock();
                    long token = lock.fencingToken();
                    history.client(key, acq, op, ClientEvent.Op.ACQUIRE, ClientEvent.Type.OK, token, null, null);
                    print("HOLDING " + token);
                    long end = System.nanoTime() + think.toNanos();
                    while (System.nanoTime() - end < 0) {
                        check(history, key, acq, token, lock.isHeldByCurrentThread());
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
                    }
                    check(history, key, acq, token, lock.isHeldByCurrentThread());
                    history.nemesis(
                            "thread-death", process, NemesisEvent.Phase.START, key, NemesisEvent.Effect.HOLDER_DOWN);
                    throw new IllegalStateException("x2: the worker thread fails while holding " + key);
                },
                process + "-dies");
        t.setUncaughtExceptionHandler((th, e) -> print("DIED " + e.getMessage()));
        t.start();
        t.join();
        long end = System.nanoTime() + duration.toNanos();
        while (System.nanoTime() - end < 0) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
        }
        history.nemesis("thread-death", process, NemesisEvent.Phase.END, key, NemesisEvent.Effect.HOLDER_DOWN);
        print("DONE");
    }

    private static void check(HistoryWriter history, String key, String acq, long token, boolean held) {
        history.client(
                key,
                acq,
                history.nextOp(),
                ClientEvent.Op.CHECK,
                held ? ClientEvent.Type.OK : ClientEvent.Type.FAIL,
                token,
                null,
                null);
    }

    private static void waiters(
            String process,
            Path dir,
            HistoryWriter history,
            LockClient client,
            String key,
            int threads,
            Duration wait,
            Duration think,
            int resourcePort)
            throws InterruptedException {
        Path go = dir.resolve("go");
        AtomicInteger acquired = new AtomicInteger();
        AtomicInteger missed = new AtomicInteger();
        AtomicInteger errors = new AtomicInteger();
        AtomicInteger ready = new AtomicInteger();
        List<Thread> all = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            RecordedLock lock = new RecordedLock(client.lock(key), history);
            Thread t = new Thread(
                    () -> {
                        ready.incrementAndGet();
                        while (!Files.exists(go)) {
                            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
                        }
                        try (FencedResourceClient resource =
                                new FencedResourceClient(Workload.RESOURCE_HOST, resourcePort, Duration.ofSeconds(5))) {
                            Optional<RecordedHold> h = lock.tryAcquire(wait);
                            if (h.isEmpty()) {
                                missed.incrementAndGet();
                                return;
                            }
                            acquired.incrementAndGet();
                            RecordedHold hold = h.get();
                            if (hold.check()) {
                                OptionalLong v = resource.read(hold);
                                LockSupport.parkNanos(think.toNanos());
                                if (v.isPresent() && hold.check()) {
                                    var written = resource.write(hold, v.getAsLong() + 1);
                                }
                            }
                            var released = hold.release();
                        } catch (InterruptedException e) {
                            errors.incrementAndGet();
                        } catch (DistributedLockException | IllegalStateException e) {
                            errors.incrementAndGet();
                            print("ERROR " + e);
                        }
                    },
                    process + "-waiter-" + i);
            t.setDaemon(true);
            all.add(t);
            t.start();
        }
        while (ready.get() < threads) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
        print("READY");
        for (Thread t : all) {
            t.join(wait.plusSeconds(60).toMillis());
        }
        print("DONE acquired=" + acquired.get() + " missed=" + missed.get() + " errors=" + errors.get());
    }

    private static void print(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
