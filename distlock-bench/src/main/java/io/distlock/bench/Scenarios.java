package io.distlock.bench;

import io.distlock.bench.Harness.Result;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.Lock;

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

    /** lock()+unlock() of one key from one thread, nobody else on it. */
    static Result uncontended(LockProvider.Factory f, String key, Timing t) {
        try (LockProvider p = f.open()) {
            Lock lock = p.lock(key);
            return Harness.run(f.name(), 1, t.warmup(), t.measure(), (thread, probe) -> {
                lock.lock();
                lock.unlock();
            });
        }
    }

    /** {@code threads} threads on one key, sharing one client. */
    static Result oneKeyOneClient(LockProvider.Factory f, String key, int threads, Timing t) {
        try (LockProvider p = f.open()) {
            Lock[] locks = new Lock[threads];
            for (int i = 0; i < threads; i++) {
                locks[i] = p.lock(key);
            }
            return Harness.run(f.name(), threads, t.warmup(), t.measure(), (thread, probe) -> {
                Lock lock = locks[thread];
                lock.lock();
                probe.acquired(thread);
                probe.releasing(thread);
                lock.unlock();
            });
        }
    }

    /** {@code threads} threads on one key, each with its own client. */
    static Result oneKeyManyClients(LockProvider.Factory f, String key, int threads, Timing t) {
        List<LockProvider> clients = new ArrayList<>();
        try {
            Lock[] locks = new Lock[threads];
            for (int i = 0; i < threads; i++) {
                LockProvider p = f.open();
                clients.add(p);
                locks[i] = p.lock(key);
            }
            return Harness.run(f.name(), threads, t.warmup(), t.measure(), (thread, probe) -> {
                Lock lock = locks[thread];
                lock.lock();
                probe.acquired(thread);
                probe.releasing(thread);
                lock.unlock();
            });
        } finally {
            clients.forEach(LockProvider::close);
        }
    }

    /** {@code threads} threads of one client, each operation on a key drawn at random from {@code keys}. */
    static Result manyKeys(LockProvider.Factory f, String prefix, int keys, int threads, Timing t) {
        String[] names = new String[keys];
        for (int i = 0; i < keys; i++) {
            names[i] = prefix + i;
        }
        try (LockProvider p = f.open()) {
            return Harness.run(f.name(), threads, t.warmup(), t.measure(), (thread, probe) -> {
                Lock lock = p.lock(names[ThreadLocalRandom.current().nextInt(keys)]);
                lock.lock();
                lock.unlock();
            });
        }
    }
}
