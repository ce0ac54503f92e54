package io.distlock.bench;

import io.distlock.bench.Harness.Result;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.Lock;
import org.jspecify.annotations.Nullable;

/** The lock scenarios every backend shares: uncontended, one key from many threads, many keys. */
final class Scenarios {
    private Scenarios() {}

    /** Phase lengths of a run. */
    record Timing(Duration warmup, Duration measure) {
        static Timing of(Duration measure) {
            long ms = Math.max(500, Math.min(3000, measure.toMillis() / 2));
            return new Timing(Duration.ofMillis(ms), measure);
        }
    }

    /** Something counted on the server over a phase's measured window (requests, commands). */
    interface Window {
        void start();

        void end();
    }

    private static @Nullable Runnable start(@Nullable Window w) {
        return w == null ? null : w::start;
    }

    private static @Nullable Runnable end(@Nullable Window w) {
        return w == null ? null : w::end;
    }

    /** lock()+unlock() of one key from one thread, nobody else on it. */
    static Result uncontended(LockProvider.Factory f, String key, Timing t) {
        return uncontended(f, key, t, null);
    }

    /** {@link #uncontended}, with {@code window} opened and closed at the measured window's edges. */
    static Result uncontended(LockProvider.Factory f, String key, Timing t, @Nullable Window window) {
        try (LockProvider p = f.open()) {
            Lock lock = p.lock(key);
            return Harness.run(
                    f.name(),
                    1,
                    t.warmup(),
                    t.measure(),
                    (thread, probe) -> {
                        lock.lock();
                        lock.unlock();
                    },
                    start(window),
                    end(window));
        }
    }

    /** {@code threads} threads on one key, sharing one client. */
    static Result oneKeyOneClient(LockProvider.Factory f, String key, int threads, Timing t) {
        return oneKeyOneClient(f, key, threads, t, null);
    }

    /** {@link #oneKeyOneClient}, with {@code window} opened and closed at the measured window's edges. */
    static Result oneKeyOneClient(LockProvider.Factory f, String key, int threads, Timing t, @Nullable Window window) {
        try (LockProvider p = f.open()) {
            Lock[] locks = new Lock[threads];
            for (int i = 0; i < threads; i++) {
                locks[i] = p.lock(key);
            }
            return Harness.run(
                    f.name(),
                    threads,
                    t.warmup(),
                    t.measure(),
                    (thread, probe) -> {
                        Lock lock = locks[thread];
                        lock.lock();
                        probe.acquired(thread);
                        probe.releasing(thread);
                        lock.unlock();
                    },
                    start(window),
                    end(window));
        }
    }

    /** {@code threads} threads on one key, each with its own client. */
    static Result oneKeyManyClients(LockProvider.Factory f, String key, int threads, Timing t) {
        return oneKeyManyClients(f, key, threads, t, null);
    }

    /** {@link #oneKeyManyClients}, with {@code window} opened and closed at the measured window's edges. */
    static Result oneKeyManyClients(
            LockProvider.Factory f, String key, int threads, Timing t, @Nullable Window window) {
        List<LockProvider> clients = new ArrayList<>();
        try {
            Lock[] locks = new Lock[threads];
            for (int i = 0; i < threads; i++) {
                LockProvider p = f.open();
                clients.add(p);
                locks[i] = p.lock(key);
            }
            return Harness.run(
                    f.name(),
                    threads,
                    t.warmup(),
                    t.measure(),
                    (thread, probe) -> {
                        Lock lock = locks[thread];
                        lock.lock();
                        probe.acquired(thread);
                        probe.releasing(thread);
                        lock.unlock();
                    },
                    start(window),
                    end(window));
        } finally {
            clients.forEach(LockProvider::close);
        }
    }

    /** {@code threads} threads of one client, each operation on a key drawn at random from {@code keys}. */
    static Result manyKeys(LockProvider.Factory f, String prefix, int keys, int threads, Timing t) {
        return manyKeys(f, prefix, keys, threads, t, null);
    }

    /** {@link #manyKeys}, with {@code window} opened and closed at the measured window's edges. */
    static Result manyKeys(
            LockProvider.Factory f, String prefix, int keys, int threads, Timing t, @Nullable Window window) {
        String[] names = new String[keys];
        for (int i = 0; i < keys; i++) {
            names[i] = prefix + i;
        }
        try (LockProvider p = f.open()) {
            return Harness.run(
                    f.name(),
                    threads,
                    t.warmup(),
                    t.measure(),
                    (thread, probe) -> {
                        Lock lock = p.lock(names[ThreadLocalRandom.current().nextInt(keys)]);
                        lock.lock();
                        lock.unlock();
                    },
                    start(window),
                    end(window));
        }
    }
}
