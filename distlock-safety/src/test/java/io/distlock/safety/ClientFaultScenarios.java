package io.distlock.safety;

import static io.distlock.testkit.history.Property.L1;
import static io.distlock.testkit.history.Property.L3;
import static io.distlock.testkit.history.Property.L4;
import static io.distlock.testkit.history.Property.LIN;
import static io.distlock.testkit.history.Property.S1;
import static io.distlock.testkit.history.Property.S3;

import io.distlock.DistributedLockException;
import io.distlock.LockClient;
import io.distlock.spi.OwnerId;
import io.distlock.testkit.Timing;
import io.distlock.testkit.fault.ProcessFaults;
import io.distlock.testkit.history.Acquisition;
import io.distlock.testkit.history.CheckReport;
import io.distlock.testkit.history.FencedResourceClient;
import io.distlock.testkit.history.History;
import io.distlock.testkit.history.NemesisEvent;
import io.distlock.testkit.history.NemesisEvent.Effect;
import io.distlock.testkit.history.RecordedHold;
import io.distlock.testkit.history.RecordedLock;
import io.distlock.testkit.server.RedisServer;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Client-side faults of FAULTS.md section 4.7 and the scale scenario of 4.1, on any store: X4 (SIGTERM of the holder's
 * JVM), X2 (a thread dies holding the lock), X6 (a client closed under load) and G10 (500 waiters on one key over three
 * JVMs; 10,000 keys in one client).
 *
 * <p>X4 and X2 give their holders a long lease ({@link #LONG_LEASE}; ZooKeeper: the ensemble's longest session, 4 s),
 * so that a hold the library ends itself (at shutdown, or when its thread is found dead) is told apart from one that
 * expires: their takeover bounds are well under that expiry.
 */
final class ClientFaultScenarios {
    private ClientFaultScenarios() {}

    /** The holders' lease in X4 and X2 (the store's expiry of a hold nobody ends). */
    static final Duration LONG_LEASE = Duration.ofSeconds(10);

    /** ZooKeeper's longest session on the suite's ensemble: 20 ticks of 200 ms. */
    static final Duration ZK_LONGEST_SESSION = Duration.ofSeconds(4);

    /** X4: the next holder takes the lock within this of the SIGTERM (E is 10 s, 4 s on ZooKeeper). */
    static final Duration X4_HANDOFF_BOUND = Duration.ofMillis(2000);

    /** X2: the next holder takes the lock within a watchdog tick (a third of the lease) plus this. */
    static final Duration X2_SLACK = Duration.ofMillis(2000);

    /** The spec of {@code c} with the long lease (on ZooKeeper the longest session the ensemble grants). */
    static String longLease(Scenario s, String c) {
        String spec = s.spec(c, false);
        String kind = Clients.parse(spec).get("kind");
        if ("zookeeper".equals(kind)) {
            return Clients.with(spec, "session", Long.toString(ZK_LONGEST_SESSION.toMillis()));
        }
        return Clients.with(spec, "lease", Long.toString(LONG_LEASE.toMillis()));
    }

    /** The expiry of a long-lease hold nobody ends. */
    static Duration longExpiry(Store store) {
        return store.name().startsWith("zookeeper") ? ZK_LONGEST_SESSION : LONG_LEASE;
    }

    /**
     * X4: three worker JVMs run the counter with long leases; the holder's JVM gets SIGTERM. Its client's shutdown
     * hook closes it, releasing the hold, so another worker takes the lock within {@link #X4_HANDOFF_BOUND} (L1 with
     * that bound), not after the lease.
     */
    static CheckReport x4HolderSigterm(Store store, long seed) throws InterruptedException {
        try (Scenario s = new Scenario("X4", "holder JVM gets SIGTERM", "tier2", store, seed)) {
            List<String> names = List.of("c1", "c2", "c3");
            List<WorkerProcess> workers = new ArrayList<>();
            for (String c : names) {
                workers.add(s.worker(
                        c,
                        "w1-slow",
                        longLease(s, c),
                        1,
                        Timing.seconds(12),
                        Timing.seconds(3),
                        Duration.ofMillis(1000)));
            }
            for (WorkerProcess w : workers) {
                w.awaitLine("READY", Timing.seconds(60));
            }
            Timing.sleep(Duration.ofMillis(1500));
            String holder = s.awaitHolder(names, Timing.seconds(20));
            WorkerProcess victim = workers.get(names.indexOf(holder));
            s.effect(Effect.HOLDER_DOWN);
            s.faultLog().record("sigterm", holder, true);
            long sent = System.nanoTime();
            ProcessFaults.signal(victim.pid(), "-TERM");
            victim.waitFor(Timing.seconds(30));
            long exited = System.nanoTime();
            s.faultLog().record("sigterm", holder, false);
            s.effect(Effect.NONE);
            s.measure("expiryMillis", longExpiry(store).toMillis());
            s.measure("handOffBoundMillis", X4_HANDOFF_BOUND.toMillis());
            s.measure("exitMillis", (exited - sent) / 1_000_000);
            s.endWorkloads();
            s.measure("takeoverMillis", takeoverMillis(s, holder, sent));
            s.probe(List.of("probe"), store.expiry().plusSeconds(3));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
            return s.finish(
                    Scenario.expect(Tier1Scenarios.must(store, S1, S3, L1, L3, L4, LIN), Tier1Scenarios.doc(store)),
                    s.options().withTakeoverBound(X4_HANDOFF_BOUND));
        }
    }

    /** How long after {@code from} another process than {@code holder} got the key (-1: nobody did). */
    private static long takeoverMillis(Scenario s, String holder, long from) {
        return Acquisition.of(History.load(s.dir)).stream()
                .filter(a -> a.ok() && !a.process().equals(holder) && a.tOk() != null && a.tOk() > from)
                .mapToLong(a -> (a.tOk() - from) / 1_000_000)
                .min()
                .orElse(-1);
    }

    /**
     * X2: a worker JVM's thread takes the lock through the Lock view (renewed by the watchdog) and dies of an uncaught
     * exception without unlocking, while its JVM and client live on. The library must end that hold (the watchdog
     * releases the holds of threads that have ended), so a waiter in another client takes it within a watchdog tick
     * plus {@link #X2_SLACK}, while the dead thread's client is still open.
     */
    static CheckReport x2ThreadDies(Store store, long seed) throws InterruptedException {
        try (Scenario s = new Scenario("X2", "holder thread dies (uncaught exception)", "tier2", store, seed)) {
            Duration lease = store.name().startsWith("zookeeper") ? ZK_LONGEST_SESSION.dividedBy(3) : LONG_LEASE;
            Duration bound = lease.dividedBy(3).plus(X2_SLACK);
            Duration clientLives = Timing.seconds(20);
            WorkerProcess dies = s.worker(
                    "c1",
                    "x2-thread-dies",
                    longLease(s, "c1"),
                    1,
                    clientLives,
                    Timing.seconds(1),
                    lease.dividedBy(3).plusSeconds(1)); // held past one renewal
            dies.awaitLine("HOLDING", Timing.seconds(60));
            RecordedLock waiter = new RecordedLock(s.client("c2", false).lock(s.key()), s.history("c2"));
            Optional<RecordedHold> got = waiter.tryAcquire(clientLives.plusSeconds(10));
            if (got.isPresent()) {
                increment(s, got.get());
                var released = got.get().release();
            }
            dies.awaitLine("DIED", Timing.seconds(5));
            long died = History.load(s.dir).nemesis().stream()
                    .filter(n -> n.fault().equals("thread-death") && n.phase() == NemesisEvent.Phase.START)
                    .mapToLong(NemesisEvent::t)
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("the worker recorded no thread death"));
            dies.awaitLine("DONE", clientLives.plusSeconds(30));
            // the worker records the end of the thread-death fault just before it closes its client
            long clientClosing = History.load(s.dir).nemesis().stream()
                    .filter(n -> n.fault().equals("thread-death") && n.phase() == NemesisEvent.Phase.END)
                    .mapToLong(NemesisEvent::t)
                    .findFirst()
                    .orElse(Long.MAX_VALUE);
            boolean clientStillOpen = got.isPresent()
                    && Acquisition.of(History.load(s.dir)).stream()
                            .anyMatch(a -> a.process().equals("c2") && a.tOk() != null && a.tOk() < clientClosing);
            s.measure("watchdogLeaseMillis", lease.toMillis());
            s.measure("takeoverBoundMillis", bound.toMillis());
            s.measure("takeoverMillis", takeoverMillis(s, "c1", died));
            s.measure("takenWhileDeadThreadsClientOpen", clientStillOpen);
            s.note("the waiter " + (got.isPresent() ? "took the lock" : "did not get the lock")
                    + (clientStillOpen ? " while the dead thread's client was open" : " after its client ended"));
            dies.waitFor(Timing.seconds(60));
            s.probe(List.of("probe"), store.expiry().plusSeconds(3));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
            CheckReport r = s.finish(
                    Scenario.expect(Tier1Scenarios.must(store, S1, S3, L1, L3, L4, LIN), Tier1Scenarios.doc(store)),
                    s.options().withTakeoverBound(bound));
            if (got.isEmpty() || !clientStillOpen) {
                throw new AssertionError("the dead thread's hold was not ended while its client lived");
            }
            return r;
        }
    }

    private static void increment(Scenario s, RecordedHold hold) {
        try (FencedResourceClient resource =
                new FencedResourceClient("127.0.0.1", s.resource.port(), Duration.ofSeconds(5))) {
            if (hold.check()) {
                OptionalLong v = resource.read(hold);
                if (v.isPresent() && hold.check()) {
                    var written = resource.write(hold, v.getAsLong() + 1);
                }
            }
        }
    }

    /**
     * X6: client c1 holds the key and has four threads waiting for it; c2 waits too. c1 is closed: its waiters must
     * end with IllegalStateException, its hold turn invalid and be released (c2 takes the lock within {@link
     * #X4_HANDOFF_BOUND}: L1 from the close), its watchdog and timer threads end, and c1.lock() then throws
     * IllegalStateException.
     */
    static CheckReport x6UseAfterClose(Store store, long seed) throws InterruptedException {
        try (Scenario s = new Scenario("X6", "client closed while it holds and waits", "tier2", store, seed)) {
            LockClient c1 = s.client("c1", false);
            String tag = OwnerId.redact(c1.clientId());
            RecordedLock l1 = new RecordedLock(c1.lock(s.key()), s.history("c1"));
            RecordedHold held =
                    l1.tryAcquire(Tier1Scenarios.WAIT).orElseThrow(() -> new AssertionError("c1 got no hold"));
            increment(s, held);
            Map<String, String> outcomes = new ConcurrentHashMap<>();
            List<Thread> waiters = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                String name = "c1-waiter-" + i;
                Thread t = new Thread(() -> outcomes.put(name, outcome(() -> l1.tryAcquire(Timing.seconds(30)))));
                waiters.add(t);
                t.start();
            }
            // one waiter through the Lock view as well
            Thread viewWaiter = new Thread(() -> {
                try {
                    boolean got = c1.lock(s.key()).tryLock(30, TimeUnit.SECONDS);
                    outcomes.put("c1-lockview", got ? "acquired" : "not acquired");
                } catch (InterruptedException e) {
                    outcomes.put("c1-lockview", "interrupted");
                } catch (RuntimeException e) {
                    outcomes.put("c1-lockview", e.getClass().getSimpleName());
                }
            });
            waiters.add(viewWaiter);
            viewWaiter.start();
            AtomicReference<Optional<RecordedHold>> c2got = new AtomicReference<>(Optional.empty());
            RecordedLock l2 = new RecordedLock(s.client("c2", false).lock(s.key()), s.history("c2"));
            Thread c2 = new Thread(() -> {
                try {
                    c2got.set(l2.tryAcquire(Timing.seconds(30)));
                } catch (InterruptedException | DistributedLockException e) {
                    // recorded
                }
            });
            c2.start();
            Timing.sleep(Duration.ofMillis(800)); // every waiter waits
            s.effect(Effect.HOLDER_DOWN);
            s.faultLog().record("close", "c1", true);
            long closing = System.nanoTime();
            c1.close();
            long closeMillis = (System.nanoTime() - closing) / 1_000_000;
            s.faultLog().record("close", "c1", false);
            s.effect(Effect.NONE);
            for (Thread t : waiters) {
                t.join(Timing.seconds(10).toMillis());
            }
            c2.join(Timing.seconds(30).toMillis());
            c2got.get().ifPresent(h -> {
                increment(s, h);
                var released = h.release();
            });
            boolean validAfterClose = held.hold().isValid();
            String releaseAfterClose = outcome(() -> {
                held.release();
                return Optional.empty();
            });
            String lockAfterClose = outcome(() -> {
                c1.lock(s.key()).lock();
                return Optional.empty();
            });
            Timing.sleep(Duration.ofMillis(500));
            List<String> clientThreads = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.isAlive() && t.getName().contains(tag))
                    .map(Thread::getName)
                    .toList();
            s.note("close took " + closeMillis + " ms; waiters: " + outcomes + "; hold valid after close: "
                    + validAfterClose + "; its release: " + releaseAfterClose + "; lock() after close: "
                    + lockAfterClose + "; c1 threads left: " + clientThreads);
            s.measure("closeMillis", closeMillis);
            s.measure("takeoverMillis", takeoverMillis(s, "c1", closing));
            s.measure("waiterOutcomes", new java.util.TreeMap<>(outcomes).toString());
            s.measure("releaseAfterClose", releaseAfterClose);
            s.measure("lockAfterClose", lockAfterClose);
            s.measure("threadsLeft", clientThreads.size());
            s.probe(List.of("c3"), store.expiry().plusSeconds(3));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
            CheckReport r = s.finish(
                    Scenario.expect(Tier1Scenarios.must(store, S1, S3, L1, L3, L4, LIN), Tier1Scenarios.doc(store)),
                    s.options().withTakeoverBound(X4_HANDOFF_BOUND));
            List<String> wrong = new ArrayList<>();
            outcomes.forEach((w, o) -> {
                if (!o.equals("IllegalStateException")) {
                    wrong.add(w + ": " + o);
                }
            });
            if (outcomes.size() != waiters.size()) {
                wrong.add("only " + outcomes.size() + " of " + waiters.size() + " waiters ended");
            }
            if (validAfterClose) {
                wrong.add("the hold is still valid after close");
            }
            if (!lockAfterClose.equals("IllegalStateException")) {
                wrong.add("lock() after close: " + lockAfterClose);
            }
            if (!clientThreads.isEmpty()) {
                wrong.add("threads of the closed client still run: " + clientThreads);
            }
            if (c2got.get().isEmpty()) {
                wrong.add("c2 never got the lock");
            }
            if (!wrong.isEmpty()) {
                throw new AssertionError("X6 on " + store.name() + ": " + wrong);
            }
            return r;
        }
    }

    private interface Call {
        Optional<?> run() throws InterruptedException;
    }

    /** What a call did: "acquired", "not acquired", "returned", or the simple name of what it threw. */
    private static String outcome(Call call) {
        try {
            Optional<?> r = call.run();
            return r.isPresent() ? "acquired" : "returned";
        } catch (InterruptedException e) {
            return "InterruptedException";
        } catch (RuntimeException e) {
            return e.getClass().getSimpleName();
        }
    }

    /**
     * G10, waiters: three worker JVMs start 500 waiters on one key at once (167, 167, 166), each waiting up to 120 s,
     * holding about 1 ms for a fenced increment and releasing. Every waiter must get the lock (no lost wake-up), and
     * S1, S3, L4 hold. Reports the total time and, on Redis, the commands the server processed.
     */
    static CheckReport g10Waiters(Store store, long seed) throws Exception {
        try (Scenario s = new Scenario("G10", "500 waiters on one key, 3 JVMs", "tier2", store, seed)) {
            List<String> names = List.of("c1", "c2", "c3");
            int[] threads = {167, 167, 166};
            List<WorkerProcess> workers = new ArrayList<>();
            for (int i = 0; i < names.size(); i++) {
                String c = names.get(i);
                workers.add(s.worker(
                        c,
                        "g10-waiters",
                        s.spec(c, false),
                        threads[i],
                        Timing.seconds(150),
                        Timing.seconds(120),
                        Duration.ofMillis(1)));
            }
            for (WorkerProcess w : workers) {
                w.awaitLine("READY", Timing.seconds(60));
            }
            long commandsBefore = redisCommands(store);
            s.note("go: 500 waiters");
            long start = System.nanoTime();
            Files.createFile(s.dir.resolve("go"));
            int acquired = 0;
            int missed = 0;
            int errors = 0;
            for (WorkerProcess w : workers) {
                w.awaitLine("DONE", Timing.seconds(200));
                String done = w.lines().stream()
                        .filter(l -> l.startsWith("DONE"))
                        .findFirst()
                        .orElseThrow();
                for (String part : done.substring(5).split(" ")) {
                    String[] kv = part.split("=");
                    int n = Integer.parseInt(kv[1]);
                    switch (kv[0]) {
                        case "acquired" -> acquired += n;
                        case "missed" -> missed += n;
                        default -> errors += n;
                    }
                }
            }
            long totalMillis = (System.nanoTime() - start) / 1_000_000;
            long commands = commandsBefore < 0 ? -1 : redisCommands(store) - commandsBefore;
            s.note("500 waiters: acquired " + acquired + ", missed " + missed + ", errors " + errors + " in "
                    + totalMillis + " ms" + (commands >= 0 ? ", " + commands + " Redis commands" : ""));
            s.measure("waiters", 500);
            s.measure("acquired", acquired);
            s.measure("missed", missed);
            s.measure("errors", errors);
            s.measure("totalMillis", totalMillis);
            if (commands >= 0) {
                s.measure("storeCommands", commands);
            }
            s.endWorkloads();
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
            CheckReport r = s.finish(Scenario.expect(List.of(S1, S3, L4), List.of()));
            if (acquired != 500) {
                throw new AssertionError("G10 on " + store.name() + ": only " + acquired
                        + " of 500 waiters got the lock" + " (missed " + missed + ", errors " + errors + ")");
            }
            return r;
        }
    }

    /** Commands the store's server processed so far (Redis standalone), or -1 where not read. */
    private static long redisCommands(Store store) {
        if (!(store instanceof RedisStores.Standalone)) {
            return -1;
        }
        String info = RedisServer.command(store.ports().get(0), "INFO", "stats");
        for (String line : info.split("\r?\n")) {
            if (line.startsWith("total_commands_processed:")) {
                return Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        return -1;
    }

    /**
     * G10, keys: one client takes and releases 10,000 distinct keys once each (8 threads); nothing may be left in the
     * store (L4), and the heap after a full GC must come back to about where it was (no per-key state kept).
     */
    static CheckReport g10Keys(Store store, long seed) throws Exception {
        try (Scenario s = new Scenario("G10k", "10,000 keys in one client", "tier2", store, seed)) {
            LockClient c1 = s.client("c1", false);
            var h = s.history("c1");
            var unused = c1.lock("warm").tryLock();
            c1.lock("warm").unlock();
            long heapBefore = usedHeapAfterGc();
            int keys = 10_000;
            int threadCount = 8;
            AtomicInteger next = new AtomicInteger();
            AtomicInteger done = new AtomicInteger();
            AtomicInteger failed = new AtomicInteger();
            AtomicLong firstError = new AtomicLong();
            CountDownLatch finished = new CountDownLatch(threadCount);
            long start = System.nanoTime();
            for (int t = 0; t < threadCount; t++) {
                new Thread(() -> {
                            try {
                                for (int i = next.getAndIncrement(); i < keys; i = next.getAndIncrement()) {
                                    RecordedLock lock = new RecordedLock(c1.lock(s.key() + "-" + i), h);
                                    try {
                                        Optional<RecordedHold> got = lock.tryAcquire(Timing.seconds(10));
                                        if (got.isPresent() && got.get().release()) {
                                            done.incrementAndGet();
                                        } else {
                                            failed.incrementAndGet();
                                        }
                                    } catch (InterruptedException | RuntimeException e) {
                                        failed.incrementAndGet();
                                        firstError.compareAndSet(0, 1);
                                    }
                                }
                            } finally {
                                finished.countDown();
                            }
                        })
                        .start();
            }
            if (!finished.await(10, TimeUnit.MINUTES)) {
                throw new AssertionError("10,000 keys did not finish within 10 minutes");
            }
            long totalMillis = (System.nanoTime() - start) / 1_000_000;
            long heapAfter = usedHeapAfterGc();
            s.note("10,000 keys: " + done.get() + " taken and released, " + failed.get() + " failed, in " + totalMillis
                    + " ms; heap after GC " + heapBefore / 1024 + " KiB before, " + heapAfter / 1024 + " KiB after");
            s.measure("keys", keys);
            s.measure("releasedOk", done.get());
            s.measure("failed", failed.get());
            s.measure("totalMillis", totalMillis);
            s.measure("heapBeforeKiB", heapBefore / 1024);
            s.measure("heapAfterKiB", heapAfter / 1024);
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
            CheckReport r = s.finish(Scenario.expect(List.of(S1, L4), List.of()));
            if (done.get() != keys) {
                throw new AssertionError("G10k on " + store.name() + ": " + failed.get() + " of " + keys + " failed");
            }
            // the client's per-name state is dropped when idle: the heap must not grow by anything like 10,000 states
            if (heapAfter - heapBefore > 16L * 1024 * 1024) {
                throw new AssertionError("heap grew by " + (heapAfter - heapBefore) / 1024 + " KiB over 10,000 keys");
            }
            return r;
        }
    }

    private static long usedHeapAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Timing.sleep(Duration.ofMillis(100));
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
