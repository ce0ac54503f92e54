package io.distlock.cli;

import io.distlock.DistributedLock;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code distlock bench}: a quick benchmark of one backend from this machine: uncontended lock+unlock latency and
 * rate from one thread, then the rate of several threads of one client on one key.
 */
@Command(
        name = "bench",
        mixinStandardHelpOptions = true,
        description = {
            "A quick benchmark of the chosen backend (default: the embedded H2 server, reached over TCP): lock+unlock"
                    + " latency p50/p99 and ops/s from 1 thread on a free key, then ops/s of --threads threads"
                    + " taking turns on one key. About 2 x --seconds plus a 1 s warm-up."
        })
final class BenchCommand implements Callable<Integer> {
    private final Io io;

    @Spec
    CommandSpec spec = CommandSpec.create();

    @Mixin
    BackendOptions backend = new BackendOptions();

    @Option(
            names = "--seconds",
            paramLabel = "S",
            defaultValue = "5",
            description = "Seconds per measurement, default: ${DEFAULT-VALUE}.")
    int seconds = 5;

    @Option(
            names = "--threads",
            paramLabel = "N",
            defaultValue = "8",
            description = "Threads on the one key, default: ${DEFAULT-VALUE}.")
    int threads = 8;

    @Option(names = "--json", description = "Print JSON instead of text.")
    boolean json;

    BenchCommand(Io io) {
        this.io = io;
    }

    /** One measurement. */
    record Run(String name, int threads, long ops, long nanos, Histogram latency) {
        double opsPerSecond() {
            return ops * 1e9 / nanos;
        }
    }

    @Override
    public Integer call() throws InterruptedException {
        if (seconds < 1 || seconds > 300) {
            throw new ParameterException(spec.commandLine(), "--seconds must be between 1 and 300: " + seconds);
        }
        if (threads < 1 || threads > 256) {
            throw new ParameterException(spec.commandLine(), "--threads must be between 1 and 256: " + threads);
        }
        BackendSpec target = backend.spec(spec);
        Progress progress = new Progress(io.err(), io.tty());
        String run = UUID.randomUUID().toString().substring(0, 8);
        try (Backend b = Backend.openForRun(target, threads + 4)) {
            io.err().println("distlock bench on " + b.describe());
            io.err().flush();
            measure(b, "warm-up", "distlock-bench/" + run + "/warm", 1, 1000, progress);
            Run solo =
                    measure(b, "1 thread, free key", "distlock-bench/" + run + "/solo", 1, seconds * 1000L, progress);
            Run shared = measure(
                    b,
                    threads + " threads, one key",
                    "distlock-bench/" + run + "/shared",
                    threads,
                    seconds * 1000L,
                    progress);
            print(b, List.of(solo, shared));
            return ExitCodes.OK;
        }
    }

    private Run measure(Backend b, String label, String lockName, int threadCount, long millis, Progress progress)
            throws InterruptedException {
        DistributedLock lock = b.client().lock(lockName);
        AtomicLong ops = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Histogram> histograms = new ArrayList<>();
        List<Thread> workers = new ArrayList<>();
        CountDownLatch gate = new CountDownLatch(1);
        long[] deadline = new long[1];
        for (int t = 0; t < threadCount; t++) {
            Histogram h = new Histogram();
            histograms.add(h);
            Thread w = new Thread(
                    () -> {
                        try {
                            gate.await();
                            while (System.nanoTime() < deadline[0] && failure.get() == null) {
                                long t0 = System.nanoTime();
                                lock.lock();
                                lock.unlock();
                                h.record(System.nanoTime() - t0);
                                ops.incrementAndGet();
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        } catch (RuntimeException e) {
                            failure.compareAndSet(null, e);
                        }
                    },
                    "bench-" + t);
            w.setDaemon(true);
            workers.add(w);
            w.start();
        }
        long start = System.nanoTime();
        deadline[0] = start + millis * 1_000_000;
        gate.countDown();
        while (System.nanoTime() < deadline[0] && failure.get() == null) {
            long elapsed = System.nanoTime() - start;
            progress.update(label, elapsed / (millis * 1e6), Format.count(ops.get()) + " ops");
            Thread.sleep(100);
        }
        for (Thread w : workers) {
            w.join(60_000);
        }
        long nanos = System.nanoTime() - start;
        Throwable f = failure.get();
        if (f instanceof RuntimeException re) {
            throw re;
        }
        Histogram all = new Histogram();
        histograms.forEach(all::add);
        Run r = new Run(label, threadCount, ops.get(), nanos, all);
        progress.done(label, Format.count(r.ops()) + " ops, " + Format.rate(r.opsPerSecond()) + " ops/s");
        return r;
    }

    private void print(Backend b, List<Run> runs) {
        if (json) {
            List<Object> items = Json.array();
            for (Run r : runs) {
                items.add(Json.obj()
                        .put("name", r.name())
                        .put("threads", r.threads())
                        .put("ops", r.ops())
                        .put("seconds", r.nanos() / 1e9)
                        .put("opsPerSecond", r.opsPerSecond())
                        .put(
                                "lockUnlockP50Ms",
                                r.latency().count() == 0
                                        ? null
                                        : Format.millis(r.latency().quantileNanos(0.5)))
                        .put(
                                "lockUnlockP99Ms",
                                r.latency().count() == 0
                                        ? null
                                        : Format.millis(r.latency().quantileNanos(0.99))));
            }
            io.out().println(Json.obj().put("backend", b.describe()).put("runs", items));
        } else {
            io.out().println("distlock bench: " + b.describe());
            io.out().println();
            Format.Table t = new Format.Table(1, "run", "threads", "ops", "ops/s", "lock+unlock p50", "p99");
            for (Run r : runs) {
                boolean any = r.latency().count() > 0;
                t.row(
                        r.name(),
                        Integer.toString(r.threads()),
                        Format.count(r.ops()),
                        Format.rate(r.opsPerSecond()),
                        any ? Format.nanos(r.latency().quantileNanos(0.5)) : "-",
                        any ? Format.nanos(r.latency().quantileNanos(0.99)) : "-");
            }
            io.out().print(t);
            io.out()
                    .println(String.format(
                            Locale.ROOT,
                            "%nlock+unlock: one lock() and one unlock() on the store; with %d threads the latency includes"
                                    + " the wait for the other threads.",
                            runs.get(runs.size() - 1).threads()));
        }
        io.out().flush();
    }
}
