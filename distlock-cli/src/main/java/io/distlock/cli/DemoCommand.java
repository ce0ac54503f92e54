package io.distlock.cli;

import io.distlock.LockHold;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/*
 * Overview
 *
 * `distlock demo` starts --processes worker JVMs (DemoWorker, on this JVM's class path), each with --threads threads,
 * all connected to the same store: by default an H2 TCP server this process starts on a loopback port, with the JDBC
 * backend in TABLE mode; or any --backend. The protected resource is a counter in that same store (a row, a Redis
 * hash) holding a value and the highest fencing token it accepted a write with.
 *
 * Three phases, each on a fresh counter: (1) read-modify-write with no lock, (2) under a distlock lock with a fenced
 * write, (3) as (2), but first this process takes the lock with a 1 s fixed lease (no watchdog), reads the counter
 * and pauses (a simulated GC pause) past its lease until the workers have taken the lock over and written (at most
 * 10 s), then writes with its old token: the fenced counter must refuse it, and the release reports the hold lost.
 * The workers count the writes the counter accepted; this process compares their sum with the counter's final value:
 * the difference is the number of lost updates. Exit code 0 only if phase 2 lost nothing and phase 3's stale write
 * was rejected (and no worker failed).
 */
/** {@code distlock demo}: worker processes race on a shared counter without a lock, with one, and with a paused holder. */
@Command(
        name = "demo",
        mixinStandardHelpOptions = true,
        header = "Worker processes race on a shared counter: without a lock, with a lock, and past a paused holder.",
        description = {
            "Worker processes increment one shared counter by read-modify-write for a fixed time, three times:",
            "  1. without a lock: concurrent increments overwrite each other (lost updates);",
            "  2. under a distlock lock, writing with the hold's fencing token: no lost updates;",
            "  3. as 2, but first this process takes the lock with a 1 s lease, pauses past it (a simulated GC"
                    + " pause) while the workers take over, then writes: the counter rejects its stale token.",
            "Without --backend the workers share an embedded H2 database server (TCP, loopback) started by this"
                    + " command, with the JDBC lock table. Progress on stderr, the summary on stdout.",
            "Exits with 0 only if phase 2 lost no update and phase 3's stale write was rejected."
        })
final class DemoCommand implements Callable<Integer> {
    private static final long READY_TIMEOUT_MILLIS = 90_000;
    private static final long PHASE_GRACE_MILLIS = 60_000;
    static final long PAUSE_LEASE_MILLIS = 1000;
    private static final long PAUSE_BOUND_MILLIS = 10_000;

    private final Io io;

    @Spec
    CommandSpec spec = CommandSpec.create();

    @Mixin
    BackendOptions backend = new BackendOptions();

    @Option(
            names = "--processes",
            paramLabel = "N",
            defaultValue = "4",
            description = "Worker processes (JVMs), default: ${DEFAULT-VALUE}.")
    int processes = 4;

    @Option(
            names = "--threads",
            paramLabel = "N",
            defaultValue = "4",
            description = "Threads per worker process, default: ${DEFAULT-VALUE}.")
    int threads = 4;

    @Option(
            names = "--seconds",
            paramLabel = "S",
            defaultValue = "5",
            description = "Seconds per phase, default: ${DEFAULT-VALUE} (phase 3 runs at least 3 s).")
    int seconds = 5;

    @Option(names = "--json", description = "Print the summary as JSON instead of a table.")
    boolean json;

    DemoCommand(Io io) {
        this.io = io;
    }

    /** What phase 3's paused holder saw. */
    record Pause(long token, boolean written, long fenceSeen, long pauseMillis, boolean lostReported) {}

    /** The outcome of one phase, summed over the workers. */
    record Phase(
            int number,
            String title,
            long attempted,
            long accepted,
            long rejected,
            long errors,
            long finalValue,
            long millis,
            Histogram waits,
            @Nullable Pause pause,
            List<String> errorMessages) {

        long lost() {
            return accepted - finalValue;
        }

        double opsPerSecond() {
            return millis == 0 ? 0 : accepted * 1000.0 / millis;
        }
    }

    @Override
    public Integer call() throws InterruptedException {
        check(processes >= 1 && processes <= 32, "--processes must be between 1 and 32: " + processes);
        check(threads >= 1 && threads <= 64, "--threads must be between 1 and 64: " + threads);
        check(seconds >= 1 && seconds <= 600, "--seconds must be between 1 and 600: " + seconds);
        BackendSpec target = backend.spec(spec);
        check(
                !target.uri().toLowerCase(Locale.ROOT).startsWith("jdbc:h2:mem:"),
                "an H2 in-memory database (jdbc:h2:mem:) lives inside one process and cannot be shared by the worker"
                        + " processes: leave out --backend for the embedded H2 server, or give a jdbc:h2:tcp:// URL");
        String run = UUID.randomUUID().toString().substring(0, 8);
        try (Backend b = Backend.openForRun(target, 4)) {
            SharedCounter counter = b.counter();
            io.err()
                    .println("distlock demo: " + processes + " processes x " + threads + " threads, " + seconds
                            + " s per phase, on " + b.describe());
            io.err().flush();
            List<Phase> phases = new ArrayList<>();
            BlockingQueue<WorkerProcess.Line> lines = new LinkedBlockingQueue<>();
            List<WorkerProcess> workers = new ArrayList<>();
            try {
                startWorkers(b, workers, lines);
                String[] titles = {"no lock", "distlock lock", "lease lost in a pause"};
                for (int p = 1; p <= 3; p++) {
                    long millis = p == 3 ? Math.max(seconds * 1000L, 3000) : seconds * 1000L;
                    String counterId = "demo-" + run + "-" + p;
                    String lockName = "distlock-demo/" + run + "/phase" + p;
                    counter.reset(counterId);
                    Phase phase = runPhase(p, titles[p - 1], millis, counterId, lockName, b, workers, lines);
                    phases.add(phase);
                    counter.delete(counterId);
                }
            } finally {
                for (WorkerProcess w : workers) {
                    w.close();
                }
            }
            boolean ok = print(b, phases);
            return ok ? ExitCodes.OK : ExitCodes.FAILED;
        }
    }

    private void check(boolean condition, String message) {
        if (!condition) {
            throw new ParameterException(spec.commandLine(), message);
        }
    }

    private void startWorkers(Backend b, List<WorkerProcess> workers, BlockingQueue<WorkerProcess.Line> lines)
            throws InterruptedException {
        BackendSpec s = b.spec();
        List<String> args = new ArrayList<>(
                List.of("--backend", s.uri(), "--table", s.table(), "--threads", Integer.toString(threads)));
        String user = s.user();
        if (user != null) {
            args.addAll(List.of("--user", user));
        }
        Map<String, String> env = new HashMap<>();
        String password = s.password();
        if (password != null) {
            env.put("DISTLOCK_PASSWORD", password);
        }
        for (int i = 0; i < processes; i++) {
            workers.add(WorkerProcess.start(i, args, env, lines));
        }
        Progress progress = new Progress(io.err(), io.tty());
        int ready = 0;
        long start = System.nanoTime();
        while (ready < processes) {
            long waited = (System.nanoTime() - start) / 1_000_000;
            if (waited > READY_TIMEOUT_MILLIS) {
                throw new IllegalStateException("worker processes not ready after " + waited + " ms");
            }
            progress.update("starting worker JVMs", ready / (double) processes, ready + "/" + processes + " ready");
            WorkerProcess.Line line = lines.poll(100, TimeUnit.MILLISECONDS);
            if (line != null) {
                if (line.text().equals("READY")) {
                    ready++;
                } else if (line.text().startsWith("ERROR")) {
                    throw workerFailed(workers.get(line.worker()), line.text());
                }
            }
            for (WorkerProcess w : workers) {
                if (!w.isAlive()) {
                    throw workerFailed(w, "exited with " + w.exitCode() + " while starting");
                }
            }
        }
        List<Long> pids = new ArrayList<>();
        workers.forEach(w -> pids.add(w.pid()));
        progress.done("starting worker JVMs", processes + "/" + processes + " ready, pids " + pids);
    }

    private Phase runPhase(
            int number,
            String title,
            long millis,
            String counterId,
            String lockName,
            Backend b,
            List<WorkerProcess> workers,
            BlockingQueue<WorkerProcess.Line> lines)
            throws InterruptedException {
        SharedCounter counter = b.counter();
        Progress progress = new Progress(io.err(), io.tty());
        String label = "phase " + number + ": " + title;
        long[] progressByWorker = new long[workers.size()];
        String[] results = new String[workers.size()];
        List<String> errorMessages = new ArrayList<>();
        AtomicReference<@Nullable Pause> pauseResult = new AtomicReference<>();
        AtomicReference<@Nullable Throwable> pauseFailure = new AtomicReference<>();
        Thread pauser = null;
        if (number == 3) {
            // taken before the workers start, so this process is the first holder
            Optional<LockHold> taken =
                    b.client().lock(lockName).tryAcquire(Duration.ofSeconds(30), Duration.ofMillis(PAUSE_LEASE_MILLIS));
            if (taken.isEmpty()) {
                throw new IllegalStateException("could not take the fresh lock " + lockName + " within 30 s");
            }
            LockHold hold = taken.get();
            long read = counter.read(counterId);
            pauser = new Thread(
                    () -> {
                        try {
                            pauseResult.set(pauseAndWriteLate(hold, read, counter, counterId));
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        } catch (RuntimeException e) {
                            pauseFailure.set(e);
                        }
                    },
                    "demo-paused-holder");
            pauser.setDaemon(true);
            pauser.start();
        }
        for (WorkerProcess w : workers) {
            w.send("RUN " + number + " " + millis + " " + counterId + " " + lockName);
        }
        long start = System.nanoTime();
        int done = 0;
        while (done < workers.size()) {
            long elapsed = (System.nanoTime() - start) / 1_000_000;
            if (elapsed > millis + PHASE_GRACE_MILLIS) {
                throw new IllegalStateException("phase " + number + " did not end " + PHASE_GRACE_MILLIS
                        + " ms after its time; workers done: " + done + "/" + workers.size());
            }
            long sum = 0;
            for (long v : progressByWorker) {
                sum += v;
            }
            progress.update(
                    label,
                    elapsed / (double) millis,
                    String.format(
                            Locale.ROOT,
                            "%4.1f/%d s  %s increments",
                            elapsed / 1000.0,
                            millis / 1000,
                            Format.count(sum)));
            WorkerProcess.Line line = lines.poll(100, TimeUnit.MILLISECONDS);
            while (line != null) {
                String[] f = line.text().split(" ", -1);
                switch (f[0]) {
                    case "P" -> progressByWorker[line.worker()] = Long.parseLong(f[1]);
                    case "RESULT" -> {
                        results[line.worker()] = line.text();
                        done++;
                    }
                    case "ERROR" ->
                        errorMessages.add(
                                "worker " + line.worker() + ": " + line.text().substring(6));
                    default -> {
                        // anything else: informational
                    }
                }
                line = lines.poll();
            }
            for (WorkerProcess w : workers) {
                if (!w.isAlive() && results[w.index()] == null) {
                    throw workerFailed(w, "exited with " + w.exitCode() + " during phase " + number);
                }
            }
        }
        long attempted = 0;
        long accepted = 0;
        long rejected = 0;
        long errors = 0;
        long elapsedMax = 0;
        Histogram waits = new Histogram();
        for (String r : results) {
            String[] f = r.split(" ", -1);
            attempted += Long.parseLong(f[1]);
            accepted += Long.parseLong(f[2]);
            rejected += Long.parseLong(f[3]);
            errors += Long.parseLong(f[4]);
            elapsedMax = Math.max(elapsedMax, Long.parseLong(f[5]));
            waits.add(Histogram.decode(f[6]));
        }
        if (pauser != null) {
            pauser.join(PAUSE_BOUND_MILLIS + 30_000);
        }
        Throwable pf = pauseFailure.get();
        if (pf != null) {
            errorMessages.add("the paused holder failed: " + pf);
        }
        Pause pause = pauseResult.get();
        if (pause != null) {
            attempted++;
            if (pause.written()) {
                accepted++;
            } else {
                rejected++;
            }
        }
        if (number == 3 && pause == null) {
            errorMessages.add("the paused holder did not write");
        }
        long finalValue = counter.read(counterId);
        Phase phase = new Phase(
                number,
                title,
                attempted,
                accepted,
                rejected,
                errors,
                finalValue,
                elapsedMax,
                waits,
                pause,
                errorMessages);
        progress.done(
                label,
                Format.count(accepted) + " increments, final value " + Format.count(finalValue) + ", lost "
                        + Format.count(phase.lost()));
        return phase;
    }

    /**
     * Phase 3's paused holder: pauses past its lease until the workers have taken the lock over and written (bounded),
     * then writes with its old token and releases.
     */
    private static Pause pauseAndWriteLate(LockHold hold, long read, SharedCounter counter, String counterId)
            throws InterruptedException {
        long token = hold.fencingToken();
        long pauseStart = System.nanoTime();
        Thread.sleep(PAUSE_LEASE_MILLIS + 500);
        while (counter.fence(counterId) <= token && System.nanoTime() - pauseStart < PAUSE_BOUND_MILLIS * 1_000_000) {
            Thread.sleep(50);
        }
        long pauseMillis = (System.nanoTime() - pauseStart) / 1_000_000;
        long fenceSeen = counter.fence(counterId);
        boolean written = counter.writeFenced(counterId, read + 1, token);
        boolean lostReported;
        try {
            hold.release();
            lostReported = false;
        } catch (IllegalMonitorStateException e) { // LockLostException: the lease had ended
            lostReported = true;
        }
        return new Pause(token, written, fenceSeen, pauseMillis, lostReported);
    }

    private static IllegalStateException workerFailed(WorkerProcess w, String what) {
        StringBuilder sb = new StringBuilder("worker " + w.index() + " (pid " + w.pid() + ") " + what);
        List<String> tail = w.stderrTail();
        if (!tail.isEmpty()) {
            sb.append("; its last stderr lines:\n  ").append(String.join("\n  ", tail));
        }
        return new IllegalStateException(sb.toString());
    }

    /** Prints the summary; returns whether the demo's expectations held. */
    private boolean print(Backend b, List<Phase> phases) {
        Phase p2 = phases.get(1);
        Phase p3 = phases.get(2);
        Pause pause = p3.pause();
        boolean staleRejected = pause != null && !pause.written();
        long errors = phases.stream()
                .mapToLong(p -> p.errors() + p.errorMessages().size())
                .sum();
        boolean ok = p2.lost() == 0 && p3.lost() == 0 && staleRejected && errors == 0;
        PrintWriter out = io.out();
        if (json) {
            List<Object> items = Json.array();
            for (Phase p : phases) {
                boolean locked = p.number() > 1;
                Json.Obj o = Json.obj()
                        .put("phase", p.number())
                        .put("name", p.title())
                        .put("attempted", p.attempted())
                        .put("accepted", p.accepted())
                        .put("finalValue", p.finalValue())
                        .put("lostUpdates", p.lost())
                        .put("opsPerSecond", p.opsPerSecond())
                        .put("seconds", p.millis() / 1000.0)
                        .put(
                                "lockWaitP50Ms",
                                locked && p.waits().count() > 0
                                        ? Format.millis(p.waits().quantileNanos(0.5))
                                        : null)
                        .put(
                                "lockWaitP99Ms",
                                locked && p.waits().count() > 0
                                        ? Format.millis(p.waits().quantileNanos(0.99))
                                        : null)
                        .put("staleWritesRejected", locked ? p.rejected() : null)
                        .put("errors", p.errors())
                        .put("errorMessages", p.errorMessages());
                Pause pp = p.pause();
                if (pp != null) {
                    o.put(
                            "pausedHolder",
                            Json.obj()
                                    .put("token", pp.token())
                                    .put("leaseMs", PAUSE_LEASE_MILLIS)
                                    .put("pauseMs", pp.pauseMillis())
                                    .put("highestTokenSeenByCounter", pp.fenceSeen())
                                    .put("staleWriteRejected", !pp.written())
                                    .put("holdLostReported", pp.lostReported()));
                }
                items.add(o);
            }
            out.println(Json.obj()
                    .put("backend", b.describe())
                    .put("processes", processes)
                    .put("threads", threads)
                    .put("secondsPerPhase", seconds)
                    .put("phases", items)
                    .put("ok", ok));
            out.flush();
            return ok;
        }
        out.println("distlock demo: " + processes + " processes x " + threads + " threads, " + seconds
                + " s per phase, on " + b.describe());
        out.println();
        Format.Table t = new Format.Table(
                1,
                "phase",
                "attempted",
                "final value",
                "lost updates",
                "ops/s",
                "wait p50",
                "wait p99",
                "stale rejected");
        for (Phase p : phases) {
            boolean locked = p.number() > 1 && p.waits().count() > 0;
            t.row(
                    p.number() + ". " + p.title(),
                    Format.count(p.attempted()),
                    Format.count(p.finalValue()),
                    Format.count(p.lost()),
                    Format.rate(p.opsPerSecond()),
                    locked ? Format.nanos(p.waits().quantileNanos(0.5)) : "-",
                    locked ? Format.nanos(p.waits().quantileNanos(0.99)) : "-",
                    p.number() > 1 ? Format.count(p.rejected()) : "-");
        }
        out.print(t);
        out.println();
        Phase p1 = phases.get(0);
        out.println(String.format(
                Locale.ROOT,
                "phase 1: %s of %s increments lost (%.0f%%): without a lock, concurrent read-modify-writes overwrite"
                        + " each other.",
                Format.count(p1.lost()),
                Format.count(p1.accepted()),
                p1.accepted() == 0 ? 0.0 : 100.0 * p1.lost() / p1.accepted()));
        out.println("phase 2: " + Format.count(p2.lost()) + " lost updates: each increment ran under the lock and"
                + " wrote with its fencing token.");
        if (pause == null) {
            out.println("phase 3: the paused holder did not write (see the errors below).");
        } else {
            out.println("phase 3: the demo process took the lock first (fencing token " + pause.token() + ", "
                    + PAUSE_LEASE_MILLIS + " ms lease, no watchdog), read the counter and paused "
                    + pause.pauseMillis() + " ms; meanwhile the workers took the lock over and wrote (highest token "
                    + pause.fenceSeen() + "). Its late write with token " + pause.token() + " was "
                    + (pause.written() ? "ACCEPTED: the counter is not fenced!" : "rejected by the fenced counter")
                    + (pause.lostReported() ? "; its release reported the hold lost." : "."));
        }
        for (Phase p : phases) {
            for (String m : p.errorMessages()) {
                out.println("phase " + p.number() + " error: " + m);
            }
            if (p.errors() > 0) {
                out.println("phase " + p.number() + ": " + p.errors() + " operations failed");
            }
        }
        out.println();
        if (ok) {
            out.println("OK: no lost updates under the lock, and the stale write was rejected.");
        } else {
            List<String> why = new ArrayList<>();
            if (p2.lost() != 0) {
                why.add("phase 2 lost " + p2.lost() + " updates under the lock");
            }
            if (p3.lost() != 0) {
                why.add("phase 3 lost " + p3.lost() + " updates");
            }
            if (!staleRejected) {
                why.add("phase 3's stale write was not rejected");
            }
            if (errors > 0) {
                why.add(errors + " errors");
            }
            out.println("FAILED: " + String.join("; ", why) + ".");
        }
        out.flush();
        return ok;
    }
}
