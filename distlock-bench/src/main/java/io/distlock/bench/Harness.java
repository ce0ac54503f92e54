package io.distlock.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * One phase = N platform threads that run a body in a loop: a warm-up (a fixed duration, then on until the JIT is
 * quiet: see warm()), then a measured window of fixed duration, then a stop flag. An operation counts when it started
 * inside the measured window; throughput is counted operations over the window's real length. Each thread keeps its
 * own latency samples (nanoseconds, in a growable long[]), merged and sorted after the phase for the percentiles: no
 * shared state on the hot path except the hand-off probe, which is only written under the lock being measured.
 *
 * Hand-off latency: the body calls probe.releasing(t) just before unlock() and probe.acquired(t) just after lock()
 * returns. When the thread that acquires is not the one that released last, the gap is one hand-off (release to next
 * holder's acquire). Both calls run while the benchmarked lock is held, so the probe needs no synchronization beyond
 * volatile visibility.
 *
 * Every phase is bounded: after the stop flag, threads get a drain deadline to finish their current operation; a
 * thread still blocked then is interrupted and reported as stuck (the phase's figures stay valid, the stuck count is
 * printed next to them).
 *
 * Alternating slices: phases that run one after another see whatever load other processes put on the (small, shared)
 * machine at the time, and the JIT warms up as they go, which can favour either side. alternating() runs several
 * implementations' threads in short slices that take turns (rotating who goes first), over clients opened once and
 * warmed up first; each rate is the operations of its own slices over the time those slices took.
 */
/** The phase runner: warm-up, a measured window of fixed duration, bounded shutdown. */
final class Harness {
    private static final int WARMUP = 0;
    private static final int MEASURE = 1;
    private static final int STOP = 2;

    static final Duration DRAIN = Duration.ofSeconds(15);

    /** One operation of one thread; {@code probe} marks acquire and release for the hand-off latency. */
    @FunctionalInterface
    interface Body {
        void run(int thread, Probe probe) throws Exception;
    }

    private Harness() {}

    /** The hand-off probe of one phase. */
    static final class Probe {
        private volatile boolean measuring;
        private volatile long releasedAt;
        private volatile int releasedBy = -1;
        private final LongList[] handOffs;
        private final long[] switches;

        Probe(int threads) {
            handOffs = new LongList[threads];
            for (int i = 0; i < threads; i++) {
                handOffs[i] = new LongList();
            }
            switches = new long[threads];
        }

        void acquired(int thread) {
            int by = releasedBy;
            if (measuring && by >= 0 && by != thread) {
                handOffs[thread].add(System.nanoTime() - releasedAt);
                switches[thread]++;
            }
        }

        void releasing(int thread) {
            releasedAt = System.nanoTime();
            releasedBy = thread;
        }
    }

    /** Runs one phase of {@code threads} threads. */
    static Result run(String label, int threads, Duration warmup, Duration measure, Body body) {
        return run(label, threads, warmup, measure, body, null, null);
    }

    /** Runs one phase; {@code atStart}/{@code atEnd} run on the calling thread at the window's edges. */
    static Result run(
            String label,
            int threads,
            Duration warmup,
            Duration measure,
            Body body,
            @Nullable Runnable atStart,
            @Nullable Runnable atEnd) {
        long[] ops = new long[threads];
        // every completed operation, whatever the stage: the server-side windows divide by these (see windowOps)
        java.util.concurrent.atomic.AtomicLongArray allOps = new java.util.concurrent.atomic.AtomicLongArray(threads);
        LongList[] latencies = new LongList[threads];
        Probe probe = new Probe(threads);
        AtomicReference<@Nullable Throwable> firstError = new AtomicReference<>();
        long[] errors = new long[threads];
        VolatileInt state = new VolatileInt();
        for (int t = 0; t < threads; t++) {
            latencies[t] = new LongList();
        }
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> workers = startWorkers(threads, "bench-" + label.replaceAll("\\W+", "-"), go, t -> {
            LongList lat = latencies[t];
            while (true) {
                int s = state.value;
                if (s == STOP) {
                    return;
                }
                long t0 = System.nanoTime();
                try {
                    body.run(t, probe);
                } catch (InterruptedException e) {
                    return;
                } catch (Throwable e) {
                    if (tooManyErrors(errors, firstError, t, e)) {
                        return;
                    }
                    continue;
                }
                allOps.lazySet(t, allOps.get(t) + 1);
                if (s == MEASURE) {
                    lat.add(System.nanoTime() - t0);
                    ops[t]++;
                }
            }
        });
        try {
            go.countDown();
            warm(warmup, Harness::sleep);
            long before = sum(allOps);
            if (atStart != null) {
                atStart.run();
            }
            probe.measuring = true;
            long start = System.nanoTime();
            state.value = MEASURE;
            sleep(measure);
            // the server-side window closes while the workers still run, as it opened (and their threads' counters,
            // such as allocated bytes, are still there to read)
            if (atEnd != null) {
                atEnd.run();
            }
            long windowOps = sum(allOps) - before;
            state.value = STOP;
            long window = System.nanoTime() - start;
            probe.measuring = false;
            int stuck = drain(workers);
            return Result.of(
                    label,
                    threads,
                    window,
                    ops,
                    latencies,
                    probe,
                    errors,
                    firstError.get(),
                    stuck,
                    windowOps,
                    List.of());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            for (Thread w : workers) {
                w.interrupt();
            }
            throw new IllegalStateException("interrupted in phase " + label, e);
        }
    }

    /**
     * Starts {@code threads} daemon threads named {@code name-<index>} that wait for {@code go} and then run {@code
     * loop} with their index; returns once all of them are waiting.
     */
    private static List<Thread> startWorkers(
            int threads, String name, CountDownLatch go, java.util.function.IntConsumer loop) {
        CountDownLatch ready = new CountDownLatch(threads);
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            int t = i;
            Thread w = new Thread(
                    () -> {
                        ready.countDown();
                        try {
                            go.await();
                        } catch (InterruptedException e) {
                            return;
                        }
                        loop.accept(t);
                    },
                    name + "-" + t);
            w.setDaemon(true);
            workers.add(w);
            w.start();
        }
        try {
            if (!ready.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("bench threads did not start: " + name);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            workers.forEach(Thread::interrupt);
            throw new IllegalStateException("interrupted while starting " + name, e);
        }
        return workers;
    }

    /**
     * Counts a failed operation of thread {@code t} (and keeps the first error); true when the thread has failed more
     * than 1,000 times and should give up.
     */
    private static boolean tooManyErrors(
            long[] errors, AtomicReference<@Nullable Throwable> first, int t, Throwable e) {
        errors[t]++;
        first.compareAndSet(null, e);
        return errors[t] > 1000;
    }

    private static long sum(java.util.concurrent.atomic.AtomicLongArray a) {
        long n = 0;
        for (int i = 0; i < a.length(); i++) {
            n += a.get(i);
        }
        return n;
    }

    static void sleep(Duration d) throws InterruptedException {
        Thread.sleep(Math.max(0, d.toMillis()));
    }

    /** How long the JIT must have finished no compilation for a warm-up to end (see {@link #warm}). */
    static final Duration JIT_QUIET = Duration.ofMillis(500);

    /** The most a warm-up goes on past its fixed length while the JIT still compiles. */
    static final Duration JIT_WAIT = Duration.ofSeconds(30);

    /** Runs a body (or lets running workers go on) for a given time. */
    @FunctionalInterface
    interface Warming {
        void run(Duration d) throws InterruptedException;
    }

    /**
     * A warm-up: {@code warming} for {@code length}, then on in steps of {@link #JIT_QUIET} until a step passes in which
     * the JIT finished no compilation, or {@link #JIT_WAIT} more has passed. A fixed warm-up alone measured distlock's
     * engine half-compiled: in an interleaved uncontended run each implementation does a few hundred operations a
     * second, and C2 compiled LockEngine.acquire only 21 s into a run (-XX:+PrintCompilation), so the window measured
     * profiling C1 code there, against reference locks whose path is almost all Lettuce code that every row keeps hot.
     */
    static void warm(Duration length, Warming warming) throws InterruptedException {
        warm(length, warming, Harness::jitMillis, JIT_WAIT);
    }

    /** {@link #warm(Duration, Warming)} with the JIT's clock ({@link #jitMillis}) and the bound given. */
    static void warm(Duration length, Warming warming, java.util.function.LongSupplier jit, Duration most)
            throws InterruptedException {
        warming.run(length);
        long giveUp = System.nanoTime() + most.toNanos();
        long compiled = jit.getAsLong();
        while (compiled >= 0 && System.nanoTime() - giveUp < 0) {
            warming.run(JIT_QUIET);
            long now = jit.getAsLong();
            if (now == compiled) {
                break;
            }
            compiled = now;
        }
    }

    /** {@link #warm}, for a caller that cannot throw InterruptedException: interrupted, it ends the run. */
    private static void warmOrStop(Duration length, Warming warming) {
        try {
            warm(length, warming);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while warming up", e);
        }
    }

    /** The JIT's total compilation time so far in milliseconds, or -1 when the JVM does not tell. */
    static long jitMillis() {
        java.lang.management.CompilationMXBean jit = java.lang.management.ManagementFactory.getCompilationMXBean();
        return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : -1;
    }

    private static final class VolatileInt {
        volatile int value;
    }

    /**
     * Waits up to {@link #DRAIN} in all for the workers (told to stop) to end; interrupts those still running and
     * returns how many they were.
     */
    static int drain(List<Thread> workers) throws InterruptedException {
        long drainUntil = System.nanoTime() + DRAIN.toNanos();
        int stuck = 0;
        for (Thread w : workers) {
            long left = drainUntil - System.nanoTime();
            if (left > 0) {
                w.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            }
            if (w.isAlive()) {
                stuck++;
                w.interrupt();
            }
        }
        return stuck;
    }

    /** The row labelled {@code label}: rows are looked up by label, so adding a row cannot shift another's place. */
    static Result row(List<Result> rows, String label) {
        for (Result r : rows) {
            if (r.label().equals(label)) {
                return r;
            }
        }
        throw new IllegalStateException("no row '" + label + "' among "
                + rows.stream().map(Result::label).toList());
    }

    /** The ops/s of the row labelled {@code label}. */
    static double ops(List<Result> rows, String label) {
        return row(rows, label).opsPerSec();
    }

    /**
     * As {@link #interleaved(List, List, Scenarios.Timing)}, after the given bodies one lock()+unlock() of each factory
     * on the lock {@code name} (labelled with the factory's name), over a provider opened for the run.
     */
    static List<Result> interleavedLocks(
            List<String> labels,
            List<Body> bodies,
            List<LockProvider.Factory> factories,
            String name,
            Scenarios.Timing timing) {
        List<String> allLabels = new ArrayList<>(labels);
        List<Body> all = new ArrayList<>(bodies);
        List<LockProvider> open = new ArrayList<>();
        try {
            for (LockProvider.Factory f : factories) {
                LockProvider provider = f.open();
                open.add(provider);
                java.util.concurrent.locks.Lock lock = provider.lock(name);
                allLabels.add(f.name());
                all.add((t, p) -> {
                    lock.lock();
                    lock.unlock();
                });
            }
            return interleaved(allLabels, all, timing);
        } finally {
            for (LockProvider provider : open) {
                provider.close();
            }
        }
    }

    /**
     * Runs the bodies one operation of each in turn, in a new random order every round, for the warm-up and then the
     * measured window, on the calling thread; each result's rate is its operations over the time spent in them, so load
     * that comes and goes hits all of them alike. A failed operation is counted as an error (during the measured window)
     * and not timed.
     *
     * <p>The order is shuffled, not rotated: with a rotation each body follows the same body in all but one round of
     * n, so whatever its predecessor leaves behind (its client's threads still finishing, an event loop awake or asleep,
     * the caches it filled) is charged to it alone, the same way in every run. Shuffled, every body follows each other
     * body about equally often. The seed is fixed, so two runs see the same orders.
     */
    static List<Result> interleaved(List<String> labels, List<Body> bodies, Scenarios.Timing timing) {
        int n = bodies.size();
        LongList[] lat = new LongList[n];
        long[] spent = new long[n];
        long[] errors = new long[n];
        Throwable[] firstError = new Throwable[n];
        for (int i = 0; i < n; i++) {
            lat[i] = new LongList();
        }
        Probe probe = new Probe(1);
        // each alone first, until the JIT is done with it; then the interleaved warm-up below
        for (int i = 0; i < n; i++) {
            Body b = bodies.get(i);
            warmOrStop(timing.warmup(), d -> {
                long until = System.nanoTime() + d.toNanos();
                while (System.nanoTime() - until < 0) {
                    try {
                        b.run(0, probe);
                    } catch (InterruptedException e) {
                        throw e;
                    } catch (Exception e) {
                        // counted in the measured window only
                    }
                }
            });
        }
        long warmEnd = System.nanoTime() + timing.warmup().toNanos();
        long end = warmEnd + timing.measure().toNanos();
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        SplittableRandom random = new SplittableRandom(INTERLEAVE_SEED);
        for (; ; ) {
            long now = System.nanoTime();
            if (now - end >= 0) {
                break;
            }
            boolean measuring = now - warmEnd >= 0;
            shuffle(order, random);
            for (int i : order) {
                long start = System.nanoTime();
                try {
                    bodies.get(i).run(0, probe);
                } catch (Exception e) {
                    if (measuring) {
                        errors[i]++;
                        if (firstError[i] == null) {
                            firstError[i] = e;
                        }
                    }
                    continue;
                }
                long took = System.nanoTime() - start;
                if (measuring) {
                    lat[i].add(took);
                    spent[i] += took;
                }
            }
        }
        List<Result> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            long ops = lat[i].size();
            out.add(Result.of(
                    labels.get(i),
                    1,
                    Math.max(1, spent[i]),
                    new long[] {ops},
                    new LongList[] {lat[i]},
                    new Probe(1),
                    new long[] {errors[i]},
                    firstError[i],
                    0,
                    ops,
                    List.of()));
        }
        return out;
    }

    /** The report section title of an {@link #interleaved} uncontended phase. */
    static final String INTERLEAVED_SECTION =
            "Uncontended, interleaved: one operation of each in turn, in a random order each round, 1 thread";

    /** The seed of {@link #interleaved}'s orders. */
    static final long INTERLEAVE_SEED = 0x5EED_0F_0DE5L;

    /** Fisher-Yates: every order of {@code a} equally likely. */
    static void shuffle(int[] a, SplittableRandom random) {
        for (int i = a.length - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
    }

    /** One acquire+release by one thread of a slice in {@link #alternating}. */
    @FunctionalInterface
    interface SliceBody {
        void run(int thread, ThreadLocalRandom random);
    }

    /**
     * Runs on the calling thread around each slice of {@link #alternating}, outside the slice's timed part (e.g. to
     * read a server's counters); {@code implementation} is the index of the slice's implementation.
     */
    interface SliceHook {
        void before(int implementation);

        void after(int implementation);
    }

    /**
     * Slices per implementation in {@link #alternating}: one per second of the measured duration. Shorter slices follow
     * the load more closely but cost more in transitions (threads started and stopped; state a client keeps while
     * threads wait, such as a watch, may be dropped at a slice's end and made again at the next one's start).
     */
    static int slices(Scenarios.Timing timing) {
        return (int) Math.max(1, Math.min(20, timing.measure().toMillis() / 1000));
    }

    static Duration sliceLength(Scenarios.Timing timing) {
        return timing.measure().dividedBy(slices(timing));
    }

    /** The report's note under a table of {@link #alternating} results; {@code keys} says which keys it used. */
    static String slicesNote(Scenarios.Timing timing, int threads, int implementations, String keys) {
        return String.format(
                java.util.Locale.ROOT,
                "Each implementation runs its %d threads in %d slices of %d ms, taking turns with the %s (rotating"
                        + " who goes first), each over one client opened once and warmed up first; ops/s = operations"
                        + " / the time spent in its own slices. %s",
                threads,
                slices(timing),
                sliceLength(timing).toMillis(),
                implementations > 2 ? "others" : "other",
                keys);
    }

    /**
     * {@link #alternating(List, List, int, Scenarios.Timing, SliceHook)} over one client per factory, opened for the
     * run and closed after it; each factory's body is what {@code bodies} makes for its client, its label the factory's
     * name.
     */
    static List<Result> alternatingLocks(
            List<LockProvider.Factory> factories,
            int threads,
            Scenarios.Timing timing,
            java.util.function.Function<LockProvider, SliceBody> bodies,
            @Nullable SliceHook hook) {
        List<String> labels = new ArrayList<>();
        List<SliceBody> body = new ArrayList<>();
        List<LockProvider> open = new ArrayList<>();
        try {
            for (LockProvider.Factory f : factories) {
                LockProvider p = f.open();
                open.add(p);
                labels.add(f.name());
                body.add(bodies.apply(p));
            }
            return alternating(labels, body, threads, timing, hook);
        } finally {
            for (LockProvider p : open) {
                p.close();
            }
        }
    }

    /**
     * {@code threads} threads per body, the bodies taking turns slice by slice ({@link #slices} slices of
     * {@link #sliceLength} each, rotating who goes first), each first warmed up alone for {@link
     * Scenarios.Timing#warmup()}; each result counts the operations of its own slices over the time they took, from
     * the threads' start to the last one's end (operations in flight at a slice's end included). {@code hook}, when
     * given, runs around every measured slice.
     */
    static List<Result> alternating(
            List<String> labels,
            List<SliceBody> bodies,
            int threads,
            Scenarios.Timing timing,
            @Nullable SliceHook hook) {
        int n = bodies.size();
        int slices = slices(timing);
        Duration slice = sliceLength(timing);
        Slices[] all = new Slices[n];
        for (int i = 0; i < n; i++) {
            all[i] = new Slices(threads);
            Slices discard = new Slices(threads);
            SliceBody b = bodies.get(i);
            warmOrStop(timing.warmup(), d -> discard.run(b, d));
        }
        for (int round = 0; round < slices; round++) {
            for (int j = 0; j < n; j++) {
                int i = (j + round) % n;
                if (hook != null) {
                    hook.before(i);
                }
                var unused = all[i].run(bodies.get(i), slice);
                if (hook != null) {
                    hook.after(i);
                }
            }
        }
        List<Result> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Slices s = all[i];
            out.add(Result.of(
                    labels.get(i),
                    threads,
                    Math.max(1, s.nanos),
                    s.ops,
                    s.latencies,
                    new Probe(threads),
                    s.errors,
                    s.error.get(),
                    s.stuck,
                    Arrays.stream(s.ops).sum(),
                    s.rates));
        }
        return out;
    }

    /**
     * The ratio {@code a ÷ b} of each round of {@link #alternating} (the two implementations' slices of one round run
     * back to back, so they saw about the same load), sorted; empty when either result has no slices.
     */
    static double[] roundRatios(Result a, Result b) {
        int rounds = Math.min(a.sliceRates().size(), b.sliceRates().size());
        double[] r = new double[rounds];
        for (int i = 0; i < rounds; i++) {
            r[i] = a.sliceRates().get(i) / b.sliceRates().get(i);
        }
        Arrays.sort(r);
        return r;
    }

    /** What one implementation's slices added up to; each slice's threads start after the previous ones ended. */
    private static final class Slices {
        final long[] ops;
        final LongList[] latencies;
        final long[] errors;
        final AtomicReference<@Nullable Throwable> error = new AtomicReference<>();
        /** ops/s of each slice, in the order run. */
        final List<Double> rates = new ArrayList<>();

        long nanos;
        int stuck;

        Slices(int threads) {
            ops = new long[threads];
            latencies = new LongList[threads];
            for (int t = 0; t < threads; t++) {
                latencies[t] = new LongList();
            }
            errors = new long[threads];
        }

        /** Runs one slice of {@code length}; returns the operations it completed. */
        long run(SliceBody body, Duration length) {
            int threads = ops.length;
            AtomicBoolean stop = new AtomicBoolean();
            CountDownLatch go = new CountDownLatch(1);
            long[] done = new long[threads];
            List<Thread> workers = startWorkers(threads, "bench-slice", go, me -> {
                ThreadLocalRandom random = ThreadLocalRandom.current();
                while (!stop.get()) {
                    long t0 = System.nanoTime();
                    try {
                        body.run(me, random);
                    } catch (RuntimeException e) {
                        if (tooManyErrors(errors, error, me, e)) {
                            return;
                        }
                        continue;
                    }
                    latencies[me].add(System.nanoTime() - t0);
                    done[me]++;
                }
            });
            try {
                long start = System.nanoTime();
                go.countDown();
                sleep(length);
                stop.set(true);
                stuck += drain(workers);
                long took = System.nanoTime() - start;
                nanos += took;
                long sliceOps = 0;
                for (long d : done) {
                    sliceOps += d;
                }
                rates.add(sliceOps / (Math.max(1, took) / 1e9));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                workers.forEach(Thread::interrupt);
                throw new IllegalStateException("interrupted in a slice", e);
            }
            long total = 0;
            for (int t = 0; t < threads; t++) {
                ops[t] += done[t];
                total += done[t];
            }
            return total;
        }
    }

    /** A growable array of longs. */
    static final class LongList {
        private long[] values = new long[1024];
        private int size;

        void add(long v) {
            if (size == values.length) {
                values = Arrays.copyOf(values, size * 2);
            }
            values[size++] = v;
        }

        int size() {
            return size;
        }

        static long[] merge(LongList[] lists) {
            int n = 0;
            for (LongList l : lists) {
                n += l.size;
            }
            long[] all = new long[n];
            int at = 0;
            for (LongList l : lists) {
                System.arraycopy(l.values, 0, all, at, l.size);
                at += l.size;
            }
            Arrays.sort(all);
            return all;
        }
    }

    /**
     * The figures of one phase. Latencies in microseconds; NaN where there is nothing to report. {@code windowOps}
     * counts the operations completed from just before the window's start hook to just after its end hook, the
     * span over which server-side counters are read (so that a slow counter read does not inflate per-operation
     * counts); it equals {@code ops} up to the operations in flight at the edges.
     */
    record Result(
            String label,
            int threads,
            double seconds,
            long ops,
            double opsPerSec,
            double p50Micros,
            double p99Micros,
            long handOffs,
            double handOffP50Micros,
            double handOffP99Micros,
            double busiestToIdlest,
            long errors,
            @Nullable String firstError,
            int stuck,
            long windowOps,
            List<Double> sliceRates) {

        static Result of(
                String label,
                int threads,
                long windowNanos,
                long[] ops,
                LongList[] latencies,
                Probe probe,
                long[] errors,
                @Nullable Throwable firstError,
                int stuck,
                long windowOps,
                List<Double> sliceRates) {
            long total = Arrays.stream(ops).sum();
            double seconds = windowNanos / 1e9;
            long[] lat = LongList.merge(latencies);
            long[] ho = LongList.merge(probe.handOffs);
            long max = Arrays.stream(ops).max().orElse(0);
            long min = Arrays.stream(ops).min().orElse(0);
            double ratio = threads < 2 ? Double.NaN : min == 0 ? Double.POSITIVE_INFINITY : (double) max / min;
            return new Result(
                    label,
                    threads,
                    seconds,
                    total,
                    total / seconds,
                    percentileMicros(lat, 0.50),
                    percentileMicros(lat, 0.99),
                    ho.length,
                    percentileMicros(ho, 0.50),
                    percentileMicros(ho, 0.99),
                    ratio,
                    Arrays.stream(errors).sum(),
                    firstError == null ? null : firstError.toString(),
                    stuck,
                    windowOps,
                    List.copyOf(sliceRates));
        }

        static double percentileMicros(long[] sorted, double q) {
            if (sorted.length == 0) {
                return Double.NaN;
            }
            int i = (int) Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
            return sorted[i] / 1000.0;
        }
    }
}
