package io.distlock.safety;

import static io.distlock.testkit.history.Property.L3;
import static io.distlock.testkit.history.Property.L4;
import static io.distlock.testkit.history.Property.LIN;
import static io.distlock.testkit.history.Property.S1;
import static io.distlock.testkit.history.Property.S2;
import static io.distlock.testkit.history.Property.S3;
import static io.distlock.testkit.history.Property.S4;

import io.distlock.DistributedLockException;
import io.distlock.LockClient;
import io.distlock.testkit.Timing;
import io.distlock.testkit.fault.Fault;
import io.distlock.testkit.fault.ProcessFaults;
import io.distlock.testkit.history.CheckReport;
import io.distlock.testkit.history.HistoryWriter;
import io.distlock.testkit.history.RecordedHold;
import io.distlock.testkit.history.RecordedLock;
import io.distlock.testkit.server.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;

/** Tier-1 scenarios that belong to one store: C4 (Redis Cluster), E2 (etcd), and the broken-store demonstration. */
final class StoreScenarios {
    private StoreScenarios() {}

    /** Names whose braces and slashes could split a lock's keys across Cluster slots, or make two names one. */
    static final List<String> TRICKY_NAMES =
            List.of("{a}", "x{a}y", "{}", "a{}b", "}{x", "{", "}", "{{a}}", "a/b", "a", "A", "ünï{cödé}");

    /**
     * C4: for each tricky name, one client holds it while another waits on it (so queue and wake-up keys exist too);
     * every key the library wrote for the name must be in one Cluster slot, and distinct names must never share keys.
     */
    static CheckReport c4HashTags(RedisStores.Cluster store, long seed) throws InterruptedException {
        try (Scenario s = new Scenario("C4", "hash-tag names on a Cluster", "tier1", store, seed)) {
            LockClient c1 = s.client("c1", false);
            LockClient c2 = s.client("c2", false);
            HistoryWriter w1 = s.history("c1");
            HistoryWriter w2 = s.history("c2");
            Map<String, Set<String>> slotsByTag = new LinkedHashMap<>();
            Set<String> tags = new TreeSet<>();
            for (String name : TRICKY_NAMES) {
                RecordedLock mine = new RecordedLock(c1.lock(name), w1);
                RecordedLock theirs = new RecordedLock(c2.lock(name), w2);
                RecordedHold held = mine.tryAcquire(Tier1Scenarios.WAIT)
                        .orElseThrow(() -> new AssertionError("c1 could not take " + name));
                AtomicReference<Optional<RecordedHold>> got = new AtomicReference<>(Optional.empty());
                Thread waiter = new Thread(() -> {
                    try {
                        got.set(theirs.tryAcquire(Timing.seconds(10)));
                    } catch (InterruptedException | DistributedLockException e) {
                        // recorded
                    }
                });
                waiter.start();
                Timing.sleep(Duration.ofMillis(300));
                for (int port : store.cluster.ports()) {
                    if (!RedisServer.command(port, "ROLE").startsWith("master")) {
                        continue;
                    }
                    for (String key : keysWithFences(port, s.prefix)) {
                        String tag = key.substring(key.indexOf('{'), key.indexOf('}') + 1);
                        String slot = RedisServer.command(port, "CLUSTER", "KEYSLOT", key);
                        slotsByTag.computeIfAbsent(tag, t -> new TreeSet<>()).add(slot);
                    }
                }
                var unused = held.check();
                var released = held.release();
                waiter.join(Timing.seconds(15).toMillis());
                Optional<RecordedHold> next = got.get();
                if (next.isEmpty()) {
                    throw new AssertionError("the waiter on " + name + " was not granted the lock after release");
                }
                var also = next.get().release();
                tags.clear();
                tags.addAll(slotsByTag.keySet());
            }
            List<String> split = new ArrayList<>();
            slotsByTag.forEach((tag, slots) -> {
                if (slots.size() != 1) {
                    split.add(tag + " in slots " + slots);
                }
            });
            s.note("hash tags seen: " + slotsByTag.size() + " for " + TRICKY_NAMES.size() + " names");
            s.measure("namesWithSplitSlots", split.size());
            s.measure("distinctTags", slotsByTag.size());
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
            CheckReport r = s.finish(Scenario.expect(List.of(S1, S2, S3, L4, LIN), List.of()));
            if (!split.isEmpty()) {
                throw new AssertionError("keys of one lock in different slots: " + split);
            }
            if (slotsByTag.size() != TRICKY_NAMES.size()) {
                throw new AssertionError("distinct names shared keys: " + slotsByTag.size() + " tags for "
                        + TRICKY_NAMES.size() + " names: " + slotsByTag.keySet());
            }
            return r;
        }
    }

    private static List<String> keysWithFences(int port, String prefix) {
        List<String> found = new ArrayList<>();
        String cursor = "0";
        do {
            String[] reply = RedisServer.command(port, "SCAN", cursor, "MATCH", prefix + "*", "COUNT", "1000")
                    .split("\n");
            cursor = reply[0];
            for (int i = 1; i < reply.length; i++) {
                if (!reply[i].isEmpty() && reply[i].contains("{")) {
                    found.add(reply[i]);
                }
            }
        } while (!cursor.equals("0"));
        return found;
    }

    /**
     * E2 (etcd #11456 shape): a waiter's JVM is stopped until its lease has expired; meanwhile the holder releases and
     * a third client takes the lock. When the waiter resumes it must not report "acquired" while the third client
     * holds the lock.
     */
    static CheckReport e2GrantAfterLeaseExpiry(ConsensusStores.Etcd store, long seed) throws InterruptedException {
        try (Scenario s = new Scenario("E2", "waiter's lease expires while it waits", "tier1", store, seed)) {
            RecordedLock l1 = new RecordedLock(s.client("c1", false).lock(s.key()), s.history("c1"));
            RecordedHold h1 =
                    l1.tryAcquire(Tier1Scenarios.WAIT).orElseThrow(() -> new AssertionError("c1 got no hold"));
            WorkerProcess b = s.worker(
                    "c2", "wait-once", s.spec("c2", false), 1, Timing.seconds(60), Timing.seconds(40), Duration.ZERO);
            b.awaitLine("WAITING", Timing.seconds(60));
            Timing.sleep(Duration.ofSeconds(1)); // its key is in the queue
            Duration pause = store.expiry().plusSeconds(3);
            Fault stopped = ProcessFaults.pause(b.pid(), "c2", pause, s.faultLog());
            Timing.sleep(Duration.ofMillis(500));
            var unused = h1.check();
            var released = h1.release();
            RecordedLock l3 = new RecordedLock(s.client("c3", false).lock(s.key()), s.history("c3"));
            Optional<RecordedHold> h3 = l3.tryAcquire(pause.plusSeconds(10));
            // hold across the waiter's resumption, checking the belief now and then
            long until = System.nanoTime() + pause.plusSeconds(3).toNanos();
            while (h3.isPresent() && System.nanoTime() - until < 0) {
                var valid = h3.get().check();
                Timing.sleep(Duration.ofMillis(100));
            }
            stopped.awaitHealed(pause.plusSeconds(5));
            h3.ifPresent(RecordedHold::release);
            b.awaitLine("DONE", Timing.seconds(60));
            s.note("the waiter "
                    + b.lines().stream()
                            .filter(l -> l.startsWith("DONE"))
                            .findFirst()
                            .orElse(""));
            s.probe(List.of("c4"), store.expiry().plusSeconds(3));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
            return s.finish(Scenario.expect(List.of(S1, S2, S3, L3, L4, LIN), List.of()));
        }
    }

    /**
     * The suite's own failure: G1 with clients that grant a busy lock anyway ({@link BrokenLockClient}). The checker
     * must report overlapping holds and duplicate tokens, and the scenario must fail.
     */
    static CheckReport brokenStore(Store store, long seed) throws InterruptedException {
        try (Scenario s = new Scenario("BROKEN", "G1 on a client that grants busy locks", "tier1", store, seed)) {
            for (String c : List.of("c1", "c2", "c3")) {
                String spec = Clients.with(s.spec(c, false), "broken", "true");
                s.workload(c, s.client(c, spec), 2, Timing.seconds(3), Tier1Scenarios.WAIT, Tier1Scenarios.THINK);
            }
            s.endWorkloads();
            return s.finish(Scenario.expect(List.of(S1, S2, S3, S4, LIN), List.of()));
        }
    }
}
