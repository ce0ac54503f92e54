package io.distlock.safety;

import static io.distlock.testkit.history.Property.L3;
import static io.distlock.testkit.history.Property.L4;
import static io.distlock.testkit.history.Property.L5;
import static io.distlock.testkit.history.Property.LIN;
import static io.distlock.testkit.history.Property.S1;
import static io.distlock.testkit.history.Property.S2;
import static io.distlock.testkit.history.Property.S3;

import io.distlock.testkit.Timing;
import io.distlock.testkit.fault.Fault;
import io.distlock.testkit.history.CheckReport;
import io.distlock.testkit.history.NemesisEvent.Effect;
import io.distlock.testkit.server.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/*
 * Overview
 *
 * R1 of FAULTS.md: a standalone Redis of the scenario's own with maxmemory 2 MB and an evicting maxmemory-policy
 * (volatile-lru or allkeys-lru), under the fenced-counter workload of three client JVMs (one thread each, 1 s holds).
 *
 * Start-up check: each client JVM logs at WARN (its log level) what it found when it connected; the scenario asserts
 * that every client warned about the policy (MUST), then goes on: the check only warns, so nothing needs overriding.
 *
 * Memory pressure: before the clients start, filler keys (outside the scenario's prefix, 4 kB each, with a TTL so that
 * volatile-* may evict them) fill the server to its limit; a filler thread keeps writing new ones for the whole run,
 * so Redis evicts all the time. Keyspace notifications of evictions ("Ee") name every lock key that went.
 *
 * Squeezes: the filler stream alone rarely evicts a lock key (they are hotter than the fillers), so three times, while
 * a client holds the lock, the scenario lowers maxmemory to 1 byte: the next command makes Redis evict everything its
 * policy allows (volatile-lru: every key with a TTL, the hold among them, never the fence counter; allkeys-lru: every
 * key, the fence counter too) and then refuse every write with OOM. The squeeze is logged as a one-shot fault that
 * removes the hold (HOLD_REMOVED) from before the limit drops until the hold key is gone, so the checker judges L5 on
 * it. Then maxmemory goes back to 2 MB: at once (the lock is free again while its holder still believes in it: S1 is
 * DOC), or after 1.5 s of a full server (acquires and renewals get OOM or find nothing).
 *
 * Judged: S3, L3, L4, L5 MUST; S1, S2 and LIN DOC (allkeys-* evicts the fence counter, so tokens start again).
 */
/** R1 (eviction) on a standalone Redis with a small maxmemory and an evicting policy. */
final class RedisEvictionScenarios {
    static final String MAXMEMORY = "2mb";
    private static final int FILLER_BYTES = 4096;

    private RedisEvictionScenarios() {}

    static CheckReport r1Eviction(long seed, String policy) throws InterruptedException {
        String variant = policy.startsWith("allkeys") ? "-allkeys" : "-volatile";
        try (RedisStores.Standalone store = new RedisStores.Standalone(
                "--maxmemory", MAXMEMORY, "--maxmemory-policy", policy, "--notify-keyspace-events", "Ee")) {
            int port = store.server.port();
            try (Scenario s = new Scenario(
                    "R1" + variant, "eviction under maxmemory " + MAXMEMORY + ", " + policy, "tier2", store, seed)) {
                s.note("maxmemory "
                        + RedisServer.command(port, "CONFIG", "GET", "maxmemory")
                                .replace('\n', '=') + ", policy " + policy);
                long filled = fill(port, 0);
                s.note("filled with " + filled + " filler keys of " + FILLER_BYTES + " B; evicted so far "
                        + info(port, "evicted_keys"));
                EvictionWatch watch = EvictionWatch.start(port, s);
                AtomicBoolean filling = new AtomicBoolean(true);
                AtomicLong written = new AtomicLong(filled);
                Thread filler = new Thread(
                        () -> {
                            while (filling.get()) {
                                // OOM while a squeeze holds memory full: the filler just goes on
                                RedisServer.command(
                                        port, "SET", "filler:" + written.incrementAndGet(), filler(), "EX", "600");
                                Timing.sleep(Duration.ofMillis(10));
                            }
                        },
                        "r1-filler");
                filler.setDaemon(true);
                filler.start();
                List<String> names = List.of("c1", "c2", "c3");
                List<WorkerProcess> workers = new ArrayList<>();
                Duration run = Timing.seconds(18);
                try {
                    for (String c : names) {
                        workers.add(s.worker(
                                c, "w1-slow", s.spec(c, false), 1, run, Tier1Scenarios.WAIT, Duration.ofSeconds(1)));
                    }
                    for (WorkerProcess w : workers) {
                        w.awaitLine("READY", Timing.seconds(60));
                    }
                    Timing.sleep(Duration.ofSeconds(2));
                    squeeze(s, port, names, Duration.ZERO);
                    Timing.sleep(Duration.ofSeconds(3));
                    squeeze(s, port, names, Duration.ofMillis(1500));
                    Timing.sleep(Duration.ofSeconds(3));
                    squeeze(s, port, names, Duration.ZERO);
                    s.endWorkloads();
                } finally {
                    filling.set(false);
                    filler.join(5000);
                    watch.close();
                }
                s.measure("fillerKeysWritten", written.get());
                s.measure("evictedKeys", Long.parseLong(info(port, "evicted_keys")));
                s.measure("lockKeysEvicted", watch.lockKeys());
                s.note("evicted keys " + info(port, "evicted_keys") + ", of them lock keys " + watch.lockKeys() + " ("
                        + watch.holdKeys() + " holds)");
                // check (i): every client JVM warned at start-up about the policy
                String expected = "maxmemory-policy is '" + policy + "'";
                List<String> silent = new ArrayList<>();
                for (WorkerProcess w : workers) {
                    boolean warned = w.lines().stream().anyMatch(l -> l.contains("WARN") && l.contains(expected));
                    if (!warned) {
                        silent.add(w.name);
                    }
                }
                s.measure("startupWarnings", (workers.size() - silent.size()) + " of " + workers.size());
                s.note("start-up warning about " + policy + ": " + (workers.size() - silent.size()) + " of "
                        + workers.size() + " clients");
                if (!silent.isEmpty()) {
                    throw new AssertionError("R1 check (i): no WARN \"" + expected + "\" from " + silent);
                }
                // lift the limit for the probes and the leftover scan: they must judge the lock, not the fillers
                RedisServer.command(port, "CONFIG", "SET", "maxmemory", "0");
                s.probe(List.of("c1", "c2", "c3"), store.expiry().plusSeconds(3));
                s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
                return s.finish(Scenario.expect(List.of(S3, L3, L4, L5), List.of(S1, S2, LIN)));
            }
        }
    }

    /**
     * Waits for a fresh hold, lowers maxmemory to 1 byte so that Redis evicts every key its policy allows (logged as a
     * one-shot fault that removes the hold, until the hold key is gone), keeps the server full for {@code full}, then
     * gives the limit back.
     */
    private static void squeeze(Scenario s, int port, List<String> names, Duration full) throws InterruptedException {
        String holder = s.awaitHolder(names, Timing.seconds(20));
        String holdKey = s.prefix + "{" + s.key() + "}:hold";
        s.effect(Effect.HOLD_REMOVED);
        Fault.oneShot(
                "evict",
                "redis:" + port + " (maxmemory 1 B, " + holder + " holding)",
                () -> {
                    RedisServer.command(port, "CONFIG", "SET", "maxmemory", "1");
                    long end = System.nanoTime() + Duration.ofSeconds(5).toNanos();
                    // every command makes Redis evict first; EXISTS is answered when the hold key is gone
                    while (!RedisServer.command(port, "EXISTS", holdKey).equals("0")) {
                        if (System.nanoTime() - end > 0) {
                            throw new AssertionError("the hold " + holdKey + " was not evicted within 5 s");
                        }
                        Timing.sleep(Duration.ofMillis(5));
                    }
                },
                s.faultLog());
        s.effect(Effect.NONE);
        if (!full.isZero()) {
            Fault f = Fault.start(
                    "memory-full",
                    "redis:" + port,
                    full,
                    () -> {},
                    () -> RedisServer.command(port, "CONFIG", "SET", "maxmemory", MAXMEMORY),
                    s.faultLog());
            f.awaitHealed(full.plusSeconds(10));
        } else {
            RedisServer.command(port, "CONFIG", "SET", "maxmemory", MAXMEMORY);
        }
        s.note("maxmemory back to " + MAXMEMORY + "; fence counter "
                + (RedisServer.command(port, "EXISTS", s.prefix + "{" + s.key() + "}:fence")
                                .equals("1")
                        ? "kept"
                        : "evicted"));
    }

    /** Writes filler keys until Redis evicts or refuses; returns how many it wrote. */
    private static long fill(int port, long from) {
        long n = from;
        long evicted = Long.parseLong(info(port, "evicted_keys"));
        while (n - from < 10_000) {
            String reply = RedisServer.command(port, "SET", "filler:" + (++n), filler(), "EX", "600");
            if (reply.startsWith("-") || Long.parseLong(info(port, "evicted_keys")) > evicted) {
                break;
            }
        }
        return n - from;
    }

    private static String filler() {
        return "x".repeat(FILLER_BYTES);
    }

    /** A field of {@code INFO} (memory and stats sections). */
    static String info(int port, String field) {
        for (String line : RedisServer.command(port, "INFO", "all").split("\r?\n")) {
            if (line.startsWith(field + ":")) {
                return line.substring(field.length() + 1).trim();
            }
        }
        throw new IllegalStateException("no " + field + " in INFO");
    }

    /** Counts the evictions of the scenario's lock keys from Redis's keyspace notifications, and notes each. */
    private static final class EvictionWatch implements AutoCloseable {
        private final io.lettuce.core.RedisClient client;
        private final io.lettuce.core.pubsub.StatefulRedisPubSubConnection<String, String> connection;
        private final AtomicLong lockKeys = new AtomicLong();
        private final AtomicLong holdKeys = new AtomicLong();

        private EvictionWatch(int port, Scenario s) {
            client = io.lettuce.core.RedisClient.create("redis://127.0.0.1:" + port);
            connection = client.connectPubSub();
            connection.addListener(new io.lettuce.core.pubsub.RedisPubSubAdapter<>() {
                @Override
                public void message(String channel, String message) {
                    if (message.startsWith(s.prefix)) {
                        lockKeys.incrementAndGet();
                        if (message.endsWith(":hold")) {
                            holdKeys.incrementAndGet();
                        }
                        s.note(String.format(Locale.ROOT, "evicted %s", message));
                    }
                }
            });
            connection.sync().subscribe("__keyevent@0__:evicted");
        }

        static EvictionWatch start(int port, Scenario s) {
            return new EvictionWatch(port, s);
        }

        long lockKeys() {
            return lockKeys.get();
        }

        long holdKeys() {
            return holdKeys.get();
        }

        @Override
        public void close() {
            connection.close();
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }
}
