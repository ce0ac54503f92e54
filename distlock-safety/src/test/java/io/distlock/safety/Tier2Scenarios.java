package io.distlock.safety;

import static io.distlock.testkit.history.Property.L1;
import static io.distlock.testkit.history.Property.L3;
import static io.distlock.testkit.history.Property.L4;
import static io.distlock.testkit.history.Property.L5;
import static io.distlock.testkit.history.Property.LIN;
import static io.distlock.testkit.history.Property.S1;
import static io.distlock.testkit.history.Property.S2;
import static io.distlock.testkit.history.Property.S3;

import io.distlock.testkit.Timing;
import io.distlock.testkit.fault.ClockFaults;
import io.distlock.testkit.fault.Fault;
import io.distlock.testkit.fault.FaultProxy;
import io.distlock.testkit.fault.StoreFaults;
import io.distlock.testkit.history.CheckReport;
import io.distlock.testkit.history.ClientEvent;
import io.distlock.testkit.history.History;
import io.distlock.testkit.history.NemesisEvent.Effect;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Tier-2 scenarios that any proxiable store runs (FAULTS.md section 4.1 and the store-independent parts of 4.2 to 4.6):
 * G4 (client cut off), G7 (degraded network), R2 (operator deletes the hold), and G11, the soak with a random fault
 * cycle. The ones that need a particular store are in {@link Tier2StoreScenarios}.
 */
final class Tier2Scenarios {
    private Tier2Scenarios() {}

    private static final List<String> CLIENTS = List.of("c1", "c2", "c3");

    /**
     * In-JVM clients c1, c2 and c3, proxied, one thread each, every hold lasting {@code holdMillis}: a fault aimed at
     * whichever of them holds lands inside a hold, and no client starves the others of a non-fair lock on a store
     * whose waiters poll (a client with short holds on two threads hands the lock from thread to thread).
     */
    static Workload[] slowHolders(Scenario s, Duration run, long holdMillis) {
        Workload[] w = new Workload[CLIENTS.size()];
        for (int i = 0; i < w.length; i++) {
            String c = CLIENTS.get(i);
            w[i] = s.workload(c, s.client(c, true), 1, run, Tier1Scenarios.WAIT, Duration.ofMillis(holdMillis));
            w[i].fixedThink();
        }
        return w;
    }

    /** In-JVM clients c1 (slow holds of {@code holdMillis}, one thread, proxied), c2 and c3 (short holds). */
    static Workload[] slowHolderAndOthers(Scenario s, Duration run, long holdMillis) {
        Workload slow =
                s.workload("c1", s.client("c1", true), 1, run, Tier1Scenarios.WAIT, Duration.ofMillis(holdMillis));
        slow.fixedThink();
        return new Workload[] {
            slow,
            s.workload("c2", s.client("c2", true), 2, run, Tier1Scenarios.WAIT, Tier1Scenarios.THINK),
            s.workload("c3", s.client("c3", true), 2, run, Tier1Scenarios.WAIT, Tier1Scenarios.THINK)
        };
    }

    /** G4: the holder's connections are blackholed (no FIN) for twice the expiry. */
    static CheckReport g4HolderBlackholed(Store store, long seed) throws InterruptedException {
        try (Scenario s = new Scenario("G4", "holder cut off (blackhole, no FIN)", "tier2", store, seed)) {
            Duration hole = store.expiry().multipliedBy(2).plusSeconds(1);
            slowHolders(s, Timing.seconds(6).plus(hole.multipliedBy(2)), 1000);
            Timing.sleep(Duration.ofSeconds(2));
            String holder = s.awaitHolder(CLIENTS, Timing.seconds(20));
            s.effect(Effect.HOLDER_DOWN);
            List<Fault> faults = new ArrayList<>();
            for (FaultProxy p : s.proxies(holder)) {
                faults.add(p.blackhole(hole));
            }
            s.effect(Effect.NONE);
            for (Fault f : faults) {
                f.awaitHealed(hole.plusSeconds(10));
            }
            s.endWorkloads();
            s.probe(List.of("c1", "c2", "c3"), store.expiry().plusSeconds(3));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
            // a session lock (ROW_LOCK, ADVISORY) outlives a cut-off connection until the database ends the session:
            // the holder may keep its hold through the blackhole, so a takeover is recorded, not required
            if (store instanceof JdbcStores.Database db && !db.mode.equals("TABLE")) {
                return s.finish(Scenario.expect(
                        Tier1Scenarios.must(store, S1, S3, L3, L4, LIN), Tier1Scenarios.doc(store, L1)));
            }
            return s.finish(
                    Scenario.expect(Tier1Scenarios.must(store, S1, S3, L1, L3, L4, LIN), Tier1Scenarios.doc(store)));
        }
    }

    /** G7: every client's network gets 0 to 150 ms of jitter; nothing may break, and holds should not be lost. */
    static CheckReport g7DegradedNetwork(Store store, long seed) throws InterruptedException {
        try (Scenario s = new Scenario("G7", "degraded network (0-150 ms jitter)", "tier2", store, seed)) {
            Duration run = Timing.seconds(10);
            for (String c : List.of("c1", "c2", "c3")) {
                s.workload(c, s.client(c, true), 2, run, Timing.seconds(3), Tier1Scenarios.THINK);
            }
            Timing.sleep(Duration.ofSeconds(1));
            List<Fault> faults = new ArrayList<>();
            for (String c : List.of("c1", "c2", "c3")) {
                for (FaultProxy p : s.proxies(c)) {
                    faults.add(p.delay(Duration.ZERO, Duration.ofMillis(150), Duration.ofSeconds(7)));
                }
            }
            s.endWorkloads();
            faults.forEach(Fault::heal);
            long lost = History.load(s.dir).client().stream()
                    .filter(e -> e.f() == ClientEvent.Op.LOST)
                    .count();
            s.measure("spuriousLosses", lost);
            s.probe(List.of("c1", "c2", "c3"), store.expiry().plusSeconds(3));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
            return s.finish(
                    Scenario.expect(Tier1Scenarios.must(store, S1, S3, L3, L4, LIN), Tier1Scenarios.doc(store)));
        }
    }

    /**
     * R2: an operator removes the hold ({@code LockAdmin.forceUnlock}) while it is held. The holder must be told
     * within one renewal (L5) and its stale writes refused (S3); another holder may appear before it finds out
     * (S1 is DOC).
     */
    static CheckReport r2HoldDeleted(Store store, long seed) throws InterruptedException {
        try (Scenario s = new Scenario("R2", "operator deletes the hold", "tier2", store, seed)) {
            slowHolders(s, Timing.seconds(10), 1500);
            Timing.sleep(Duration.ofSeconds(2));
            for (int i = 0; i < 2; i++) {
                s.awaitHolder(CLIENTS, Timing.seconds(20));
                s.effect(Effect.HOLD_REMOVED);
                StoreFaults.deleteHold(s.client("admin", false).admin(), s.key(), s.faultLog());
                s.effect(Effect.NONE);
                Timing.sleep(Duration.ofSeconds(3));
            }
            s.endWorkloads();
            s.probe(List.of("c1", "c2"), store.expiry().plusSeconds(3));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
            return s.finish(Scenario.expect(List.of(S3, L3, L4, L5), List.of(S1, S2, LIN)));
        }
    }

    /**
     * G11: the soak. Three proxied clients run the counter while a random in-model fault (blackhole, reset, half-open,
     * jitter, a dropped reply) hits a random client for 2 to 5 s, then everything heals for 2 to 5 s, for {@code
     * -Dsafety.soak.seconds} (default 120) seconds.
     */
    static CheckReport g11Soak(Store store, long seed) throws InterruptedException {
        long seconds = Long.getLong("safety.soak.seconds", 120);
        try (Scenario s = new Scenario("G11", "soak, random fault cycle", "tier2", store, seed)) {
            SplittableRandom random = new SplittableRandom(seed);
            Duration run = Duration.ofSeconds(seconds);
            List<String> names = List.of("c1", "c2", "c3");
            for (String c : names) {
                s.workload(c, s.client(c, true), 2, run, Tier1Scenarios.WAIT, Tier1Scenarios.THINK);
            }
            long end = System.nanoTime() + run.toNanos() - Duration.ofSeconds(6).toNanos();
            int cycles = 0;
            while (System.nanoTime() - end < 0) {
                Timing.sleep(Duration.ofMillis(2000 + random.nextInt(3000)));
                String victim = names.get(random.nextInt(names.size()));
                Duration d = Duration.ofMillis(2000 + random.nextInt(3000));
                int kind = random.nextInt(5);
                List<Fault> faults = new ArrayList<>();
                for (FaultProxy p : s.proxies(victim)) {
                    faults.add(
                            switch (kind) {
                                case 0 -> p.blackhole(d);
                                case 1 -> p.reset(d);
                                case 2 -> p.halfOpen(d);
                                case 3 -> p.delay(Duration.ofMillis(50), Duration.ofMillis(200), d);
                                default -> p.dropReplies(d);
                            });
                }
                for (Fault f : faults) {
                    f.awaitHealed(d.plusSeconds(10));
                }
                cycles++;
            }
            s.measure("faultCycles", cycles);
            s.endWorkloads();
            s.probe(names, store.expiry().plusSeconds(5));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(5)));
            return s.finish(
                    Scenario.expect(Tier1Scenarios.must(store, S1, S3, L3, L4, LIN), Tier1Scenarios.doc(store)));
        }
    }

    /**
     * K1: the wall clocks of the clients' JVMs jump an hour forward and back (libfaketime, see {@link ClockFaults})
     * while they acquire, renew, wait and release; their monotonic clocks run on. Leases, renewals and wait deadlines
     * are measured on the monotonic clock and expiry on the store's, so nothing may change: every MUST property holds.
     */
    static CheckReport k1ClientClockJumps(Store store, long seed) throws InterruptedException {
        try (Scenario s = new Scenario("K1", "client wall clocks jump +-1 h", "tier2", store, seed)) {
            List<String> names = List.of("c1", "c2", "c3");
            List<ClockFaults.FakeClock> clocks = new ArrayList<>();
            try {
                List<WorkerProcess> workers = new ArrayList<>();
                Duration run = Timing.seconds(14);
                for (String c : names) {
                    ClockFaults.FakeClock clock = ClockFaults.fakeClock(c);
                    clocks.add(clock);
                    // c1 holds for a second at a time, so that its renewals run across the jumps; the others are quick
                    workers.add(
                            c.equals("c1")
                                    ? s.worker(
                                            c,
                                            "w1-slow",
                                            s.spec(c, false),
                                            1,
                                            run,
                                            Tier1Scenarios.WAIT,
                                            Duration.ofSeconds(1),
                                            clock.environment())
                                    : s.worker(
                                            c,
                                            "w1",
                                            s.spec(c, false),
                                            2,
                                            run,
                                            Tier1Scenarios.WAIT,
                                            Tier1Scenarios.THINK,
                                            clock.environment()));
                }
                for (WorkerProcess w : workers) {
                    w.awaitLine("READY", Timing.seconds(60));
                }
                SplittableRandom random = new SplittableRandom(seed);
                Timing.sleep(Duration.ofMillis(1000 + random.nextInt(1000)));
                List<Fault> faults = new ArrayList<>();
                faults.add(clocks.get(0).jump(Duration.ofHours(1), Duration.ofSeconds(4), s.faultLog()));
                faults.add(clocks.get(1).jump(Duration.ofHours(-1), Duration.ofSeconds(4), s.faultLog()));
                Timing.sleep(Duration.ofMillis(2000 + random.nextInt(1000)));
                faults.add(clocks.get(2).jump(Duration.ofHours(1), Duration.ofSeconds(3), s.faultLog()));
                Timing.sleep(Duration.ofSeconds(4));
                faults.add(clocks.get(0).jump(Duration.ofHours(-1), Duration.ofSeconds(3), s.faultLog()));
                for (Fault f : faults) {
                    f.awaitHealed(Duration.ofSeconds(10));
                }
                s.endWorkloads();
            } finally {
                clocks.forEach(ClockFaults.FakeClock::close);
            }
            s.probe(List.of("probe"), store.expiry().plusSeconds(3));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
            return s.finish(
                    Scenario.expect(Tier1Scenarios.must(store, S1, S3, L3, L4, LIN), Tier1Scenarios.doc(store)));
        }
    }
}
