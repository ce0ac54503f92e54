package io.distlock.cli;

import io.distlock.DistributedLock;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/*
 * Overview
 *
 * One worker OS process of `distlock demo`. The parent starts it as `java -cp <the CLI's class path>
 * io.distlock.cli.DemoWorker --backend URI --threads N --worker I` (password in DISTLOCK_PASSWORD), and talks to it
 * line by line:
 *
 *   worker -> parent   READY
 *   parent -> worker   RUN <phase> <millis> <counter id> <lock name>
 *   worker -> parent   P <accepted increments so far>                        every 200 ms
 *                      ERROR <message>                                      first failure of a phase
 *                      RESULT <attempted> <accepted> <rejected> <errors> <millis> <wait histogram>
 *   parent -> worker   EXIT
 *
 * Each of the N threads increments the shared counter by read-modify-write until the phase's time is up:
 *   phase 1: read, write value+1, no lock (concurrent increments overwrite each other: lost updates);
 *   phase 2 and 3: lock(), read, fenced write of value+1 with the hold's token, unlock(). (In phase 3 the parent
 *   holds the lock at the start with a short lease and pauses past it; see DemoCommand.)
 * "accepted" counts writes the counter took; the parent compares their sum with the counter's final value.
 */
/** A worker process of {@code distlock demo}; see the overview comment for its protocol. */
public final class DemoWorker {
    private final Backend backend;
    private final int threads;
    private final int worker;
    private final PrintStream out;

    private DemoWorker(Backend backend, int threads, int worker, PrintStream out) {
        this.backend = backend;
        this.threads = threads;
        this.worker = worker;
        this.out = out;
    }

    /** Runs the worker; see the overview comment for its arguments and protocol. */
    public static void main(String[] args) throws Exception {
        String uri = null;
        String user = null;
        String table = "distlock";
        int threads = 1;
        int worker = 0;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--backend" -> uri = args[i + 1];
                case "--user" -> user = args[i + 1];
                case "--table" -> table = args[i + 1];
                case "--threads" -> threads = Integer.parseInt(args[i + 1]);
                case "--worker" -> worker = Integer.parseInt(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown worker argument: " + args[i]);
            }
        }
        if (uri == null) {
            throw new IllegalArgumentException("--backend is required");
        }
        BackendSpec spec = BackendSpec.parse(uri, user, System.getenv("DISTLOCK_PASSWORD"), table);
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        int code;
        try (Backend backend = Backend.open(spec, threads + 4, false)) {
            backend.counter();
            code = new DemoWorker(backend, threads, worker, out).serve();
        }
        System.exit(code);
    }

    private int serve() throws IOException, InterruptedException {
        say("READY");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] cmd = line.trim().split(" ");
            if (cmd[0].equals("EXIT")) {
                return 0;
            }
            if (cmd[0].equals("RUN") && cmd.length == 5) {
                runPhase(Integer.parseInt(cmd[1]), Long.parseLong(cmd[2]), cmd[3], cmd[4]);
            } else {
                say("ERROR unknown command: " + line);
            }
        }
        return 0; // the parent went away
    }

    private void runPhase(int phase, long millis, String counterId, String lockName) throws InterruptedException {
        SharedCounter counter = backend.counter();
        DistributedLock lock = backend.client().lock(lockName);
        AtomicLong attempted = new AtomicLong();
        AtomicLong accepted = new AtomicLong();
        AtomicLong rejected = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        AtomicBoolean errorSaid = new AtomicBoolean();
        List<Histogram> waits = new ArrayList<>();
        List<Thread> running = new ArrayList<>();
        CountDownLatch gate = new CountDownLatch(1);
        long start = System.nanoTime();
        long deadline = start + millis * 1_000_000;
        for (int t = 0; t < threads; t++) {
            Histogram wait = new Histogram();
            waits.add(wait);
            running.add(thread("worker-" + worker + "-" + t, () -> {
                gate.await();
                while (System.nanoTime() < deadline) {
                    try {
                        if (phase == 1) {
                            long v = counter.read(counterId);
                            counter.write(counterId, v + 1);
                            attempted.incrementAndGet();
                            accepted.incrementAndGet();
                        } else {
                            long t0 = System.nanoTime();
                            lock.lock();
                            wait.record(System.nanoTime() - t0);
                            try {
                                long token = lock.fencingToken();
                                long v = counter.read(counterId);
                                attempted.incrementAndGet();
                                if (counter.writeFenced(counterId, v + 1, token)) {
                                    accepted.incrementAndGet();
                                } else {
                                    rejected.incrementAndGet();
                                }
                            } finally {
                                lock.unlock();
                            }
                        }
                    } catch (RuntimeException e) {
                        errors.incrementAndGet();
                        if (errorSaid.compareAndSet(false, true)) {
                            say("ERROR " + oneLine(e));
                        }
                        Thread.sleep(20);
                    }
                }
            }));
        }
        Thread reporter = thread("worker-" + worker + "-progress", () -> {
            while (!Thread.currentThread().isInterrupted()) {
                Thread.sleep(200);
                say("P " + accepted.get());
            }
        });
        gate.countDown();
        for (Thread t : running) {
            t.join();
        }
        reporter.interrupt();
        reporter.join();
        long elapsed = (System.nanoTime() - start) / 1_000_000;
        Histogram all = new Histogram();
        waits.forEach(all::add);
        say("RESULT " + attempted.get() + " " + accepted.get() + " " + rejected.get() + " " + errors.get() + " "
                + elapsed + " " + all.encode());
    }

    private void say(String line) {
        synchronized (out) {
            out.println(line);
        }
    }

    private static String oneLine(Throwable e) {
        return (e.getClass().getSimpleName() + ": " + Backend.rootMessage(e)).replace('\n', ' ');
    }

    /** A body that may be interrupted or fail; a failure is reported, not thrown. */
    private interface Body {
        void run() throws InterruptedException;
    }

    private Thread thread(String name, Body body) {
        Thread t = new Thread(
                () -> {
                    try {
                        body.run();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } catch (RuntimeException e) {
                        say("ERROR " + oneLine(e));
                    }
                },
                name);
        t.setDaemon(true);
        t.start();
        return t;
    }
}
