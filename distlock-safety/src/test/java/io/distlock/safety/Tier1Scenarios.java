package io.distlock.safety;

import static io.distlock.testkit.history.Property.L1;
import static io.distlock.testkit.history.Property.L3;
import static io.distlock.testkit.history.Property.L4;
import static io.distlock.testkit.history.Property.L5;
import static io.distlock.testkit.history.Property.LIN;
import static io.distlock.testkit.history.Property.S1;
import static io.distlock.testkit.history.Property.S2;
import static io.distlock.testkit.history.Property.S3;
import static io.distlock.testkit.history.Property.S4;

import io.distlock.DistributedLockException;
import io.distlock.LockClient;
import io.distlock.testkit.Timing;
import io.distlock.testkit.fault.Fault;
import io.distlock.testkit.fault.FaultProxy;
import io.distlock.testkit.fault.ProcessFaults;
import io.distlock.testkit.fault.StoreFaults;
import io.distlock.testkit.history.Acquisition;
import io.distlock.testkit.history.CheckReport;
import io.distlock.testkit.history.ClientEvent;
import io.distlock.testkit.history.FencedResourceClient;
import io.distlock.testkit.history.History;
import io.distlock.testkit.history.NemesisEvent.Effect;
import io.distlock.testkit.history.Property;
import io.distlock.testkit.history.RecordedHold;
import io.distlock.testkit.history.RecordedLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The tier-1 scenarios of FAULTS.md section 4.9 (G1, G3, G5, R4, X1 on every backend where they apply; C4, Z4, E2 and
 * J1 on their backends), with short leases, each within about 30 s. The store-specific ones are in {@link
 * StoreScenarios}.
 */
final class Tier1Scenarios {
    static final Duration THINK = Duration.ofMillis(20);
    static final Duration WAIT = Duration.ofSeconds(1);

    private Tier1Scenarios() {}

    static List<Property> tokenProperty(Store store) {
        return store.soundTokens() ? List.of(S2) : List.of();
    }

    static List<Property> must(Store store, Property... props) {
        List<Property> all = new ArrayList<>(List.of(props));
        all.addAll(tokenProperty(store));
        return all;
    }

    static List<Property> doc(Store store, Property... props) {
        List<Property> all = new ArrayList<>(List.of(props));
        if (!store.soundTokens()) {
            all.add(S2);
        }
        return all;
    }

    /** G1: three clients, no faults: every property holds and no request ever overlaps another holder's. */
    static CheckReport g1Baseline(Store store, long seed) throws InterruptedException {
        try (Scenario s = new Scenario("G1", "baseline, no faults", "tier1", store, seed)) {
            for (String c : List.of("c1", "c2", "c3")) {
                s.workload(c, s.client(c, true), 2, Timing.seconds(5), WAIT, THINK);
            }
            s.endWorkloads();
            s.probe(List.of("c1", "c2", "c3"), store.expiry().plusSeconds(2));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
            // with no fault, tokens are sound on every store
            return s.finish(Scenario.expect(List.of(S1, S2, S3, S4, L3, L4, LIN), List.of()));
        }
    }

    /** G3: three client JVMs run the counter; the one holding the lock is killed with SIGKILL. */
    static CheckReport g3HolderKilled(Store store, long seed) throws InterruptedException {
        try (Scenario s = new Scenario("G3", "holder JVM killed (SIGKILL)", "tier1", store, seed)) {
            List<String> names = List.of("c1", "c2", "c3");
            List<WorkerProcess> workers = new ArrayList<>();
            for (String c : names) {
                workers.add(slowWorker(s, c, Timing.seconds(12), 1000));
            }
            for (WorkerProcess w : workers) {
                w.awaitLine("READY", Timing.seconds(60));
            }
            Timing.sleep(Duration.ofMillis(1500 + new SplittableRandom(seed).nextInt(1000)));
            String holder = s.awaitHolder(names, Timing.seconds(20));
            s.effect(Effect.HOLDER_DOWN);
            ProcessFaults.kill(workers.get(names.indexOf(holder)).pid(), holder, s.faultLog());
            s.effect(Effect.NONE);
            s.endWorkloads();
            s.probe(List.of("probe"), store.expiry().plusSeconds(3));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(5)));
            return s.finish(Scenario.expect(must(store, S1, S3, L1, L3, L4, LIN), doc(store)));
        }
    }

    /**
     * G5 (Z4 on ZooKeeper): the store applies an acquire but its reply is lost and the connection closed. The caller
     * must not believe it holds the lock unless the library recovered the grant; the grant must not block others
     * beyond the store's expiry, nor be left behind.
     */
    static CheckReport g5AcquireReplyLost(Store store, long seed) throws InterruptedException {
        return g5AcquireReplyLost(store, seed, "tier1");
    }

    /** G5 reported under {@code tier}: tier 2 where the store itself is a tier-2 fixture (RedLock's five nodes). */
    static CheckReport g5AcquireReplyLost(Store store, long seed, String tier) throws InterruptedException {
        String id = store.name().equals("zookeeper") ? "Z4" : "G5";
        try (Scenario s = new Scenario(id, "acquire applied, reply lost", tier, store, seed)) {
            LockClient c1 = s.client("c1", true);
            RecordedLock lock = new RecordedLock(c1.lock(s.key()), s.history("c1"));
            var warm = lock.tryAcquire(WAIT);
            warm.ifPresent(RecordedHold::release);
            List<FaultProxy> proxies = s.proxies("c1");
            for (int attempt = 0; attempt < 3; attempt++) {
                List<Fault> faults = new ArrayList<>();
                for (FaultProxy p : proxies) {
                    faults.add(p.dropReplies(Timing.seconds(2)));
                }
                try {
                    Optional<RecordedHold> h = lock.tryAcquire(WAIT);
                    s.note("acquire with the reply dropped: " + (h.isPresent() ? "acquired" : "not acquired"));
                    if (h.isPresent()) {
                        var unused = h.get().check();
                        var released = h.get().release();
                    }
                } catch (DistributedLockException e) {
                    s.note("acquire with the reply dropped failed: " + e);
                } finally {
                    faults.forEach(Fault::heal);
                }
            }
            s.measure(
                    "droppedReplies",
                    proxies.stream().mapToLong(FaultProxy::droppedReplies).sum());
            s.probe(List.of("c2"), store.expiry().plusSeconds(3));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
            return s.finish(Scenario.expect(must(store, S1, L3, L4, LIN), doc(store)));
        }
    }

    /**
     * R4 (and G2): the holder's JVM is stopped (SIGSTOP) for twice the expiry; a waiter takes over; the stopped holder
     * resumes, its stale writes are refused and its unlock answers "lost" without touching the new hold.
     */
    static CheckReport r4StaleUnlock(Store store, long seed, String id, String tier) throws InterruptedException {
        try (Scenario s = new Scenario(id, "holder stopped past its lease, then unlocks", tier, store, seed)) {
            List<String> names = List.of("c1", "c2", "c3");
            List<WorkerProcess> workers = new ArrayList<>();
            Duration pause = store.expiry().multipliedBy(2).plusSeconds(1);
            Duration run = Timing.seconds(8).plus(pause.multipliedBy(2));
            for (String c : names) {
                workers.add(slowWorker(s, c, run, 1000));
            }
            for (WorkerProcess w : workers) {
                w.awaitLine("READY", Timing.seconds(60));
            }
            Timing.sleep(Duration.ofSeconds(1));
            String paused = null;
            long pausedAt = 0;
            for (int attempt = 0; attempt < 3 && paused == null; attempt++) {
                String holder = s.awaitHolder(names, Timing.seconds(20));
                WorkerProcess victim = workers.get(names.indexOf(holder));
                s.effect(Effect.HOLDER_DOWN);
                Fault f = ProcessFaults.pause(victim.pid(), holder, pause, s.faultLog());
                long at = f.startedAt();
                f.awaitHealed(pause.plusSeconds(10));
                s.effect(Effect.NONE);
                if (heldAcross(History.load(s.dir), holder, at)) {
                    paused = holder;
                    pausedAt = at;
                } else {
                    s.note("the pause missed a hold of " + holder + "; again");
                }
            }
            if (paused == null) {
                throw new AssertionError("three pauses in a row missed the holder's hold");
            }
            s.endWorkloads();
            s.probe(List.of("probe"), store.expiry().plusSeconds(3));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
            // the stale holder's release: "lost", never ok (which would mean it deleted the new holder's hold)
            String stale = paused;
            long from = pausedAt;
            Acquisition a = Acquisition.of(History.load(s.dir)).stream()
                    .filter(x -> x.process().equals(stale) && x.ok() && x.tOk() != null && x.tOk() < from)
                    .filter(x -> x.tRelease() == null || x.tRelease() > from)
                    .reduce((x, y) -> y)
                    .orElseThrow();
            s.measure("staleRelease", String.valueOf(a.releaseOutcome()));
            CheckReport r = s.finish(Scenario.expect(must(store, S1, S3, L1, L3, L4, LIN), doc(store)));
            if (a.releaseOutcome() == ClientEvent.Type.OK) {
                throw new AssertionError("the stopped holder's release answered ok after its lease ran out: " + a);
            }
            return r;
        }
    }

    /**
     * A worker JVM running the counter with one thread whose every hold lasts {@code holdMillis}, so a fault aimed at
     * the holder the store names lands inside a hold (and no client starves the others of the lock).
     */
    static WorkerProcess slowWorker(Scenario s, String c, Duration run, long holdMillis) {
        return s.worker(c, "w1-slow", s.spec(c, false), 1, run, WAIT, Duration.ofMillis(holdMillis));
    }

    private static boolean heldAcross(History h, String process, long at) {
        return Acquisition.of(h).stream()
                .anyMatch(a -> a.process().equals(process)
                        && a.ok()
                        && a.tOk() != null
                        && a.tOk() < at
                        && (a.tRelease() == null || a.tRelease() > at));
    }

    /**
     * X1: a waiter is interrupted at random moments of its wait, ten times; afterwards nothing of its waits may
     * remain: the next client gets the lock at once when the holder releases, and the store holds nothing.
     */
    static CheckReport x1InterruptedWaits(Store store, long seed) throws InterruptedException {
        try (Scenario s = new Scenario("X1", "waiter interrupted at random moments", "tier1", store, seed)) {
            SplittableRandom random = new SplittableRandom(seed);
            RecordedLock holderLock = new RecordedLock(s.client("c1", false).lock(s.key()), s.history("c1"));
            RecordedHold held = holderLock.tryAcquire(WAIT).orElseThrow(() -> new AssertionError("c1 got no hold"));
            RecordedLock waiterLock = new RecordedLock(s.client("c2", false).lock(s.key()), s.history("c2"));
            AtomicReference<Optional<RecordedHold>> got = new AtomicReference<>(Optional.empty());
            for (int i = 0; i < 10; i++) {
                Thread t = new Thread(() -> {
                    try {
                        got.set(waiterLock.tryAcquire(Timing.seconds(20)));
                    } catch (InterruptedException e) {
                        // expected
                    } catch (DistributedLockException e) {
                        // recorded as unknown
                    }
                });
                t.start();
                int delay = random.nextInt(120);
                Timing.sleep(Duration.ofMillis(delay));
                s.note("interrupt the waiter after " + delay + " ms");
                t.interrupt();
                t.join(Timing.seconds(20).toMillis());
                got.get().ifPresent(RecordedHold::release);
                got.set(Optional.empty());
            }
            var unused = held.check();
            var released = held.release();
            // the next owner must not wait behind a waiter that gave up
            s.probe(List.of("c3"), Timing.seconds(2));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
            return s.finish(Scenario.expect(must(store, S1, L3, L4, LIN), doc(store)));
        }
    }

    /**
     * J1: the database session of the holder is killed. The session lock is freed at once and another client takes
     * it; the old holder must find out within one renewal, and its stale write is refused. The overlap between the
     * kill and its discovery is inherent (DOC).
     */
    static CheckReport j1SessionKilled(JdbcStores.Database store, long seed) throws InterruptedException {
        try (Scenario s = new Scenario("J1", "holder's database session killed", "tier1", store, seed);
                FencedResourceClient resource =
                        new FencedResourceClient("127.0.0.1", s.resource.port(), Duration.ofSeconds(5))) {
            RecordedLock l1 = new RecordedLock(s.client("c1", false).lock(s.key()), s.history("c1"));
            RecordedLock l2 = new RecordedLock(s.client("c2", false).lock(s.key()), s.history("c2"));
            RecordedHold h1 = l1.tryAcquire(WAIT).orElseThrow(() -> new AssertionError("c1 got no hold"));
            var unused = h1.check();
            var read = resource.read(h1);
            s.effect(Effect.HOLD_REMOVED);
            StoreFaults.killDatabaseSessions(store.admin(), store.identity("c1"), s.faultLog());
            s.effect(Effect.NONE);
            Optional<RecordedHold> h2 = l2.tryAcquire(Timing.seconds(10));
            if (h2.isPresent() && h2.get().check()) {
                var v = resource.read(h2.get());
                if (v.isPresent() && h2.get().check()) {
                    var written = resource.write(h2.get(), v.getAsLong() + 1);
                }
            }
            long end = System.nanoTime() + Timing.seconds(10).toNanos();
            while (h1.check() && System.nanoTime() - end < 0) {
                Timing.sleep(Duration.ofMillis(50));
            }
            if (read.isPresent()) {
                var stale = resource.write(h1, read.getAsLong() + 1); // refused by the fence
            }
            var lost = h1.release();
            h2.ifPresent(RecordedHold::release);
            s.probe(List.of("c3"), store.expiry().plusSeconds(3));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
            return s.finish(Scenario.expect(List.of(S2, S3, L3, L4, L5), List.of(S1, LIN)));
        }
    }

    static List<Property> all() {
        return List.of(S1, S2, S3, S4, L1, L3, L4, L5, LIN);
    }
}
