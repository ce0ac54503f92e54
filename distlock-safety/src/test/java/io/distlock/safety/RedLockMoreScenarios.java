package io.distlock.safety;

import static io.distlock.testkit.history.Property.L1;
import static io.distlock.testkit.history.Property.L3;
import static io.distlock.testkit.history.Property.L4;
import static io.distlock.testkit.history.Property.L5;
import static io.distlock.testkit.history.Property.LIN;
import static io.distlock.testkit.history.Property.S1;
import static io.distlock.testkit.history.Property.S2;
import static io.distlock.testkit.history.Property.S3;

import io.distlock.LockClient;
import io.distlock.testkit.Timing;
import io.distlock.testkit.fault.Fault;
import io.distlock.testkit.fault.FaultProxy;
import io.distlock.testkit.fault.ProcessFaults;
import io.distlock.testkit.history.CheckReport;
import io.distlock.testkit.history.ClientEvent;
import io.distlock.testkit.history.FencedResourceClient;
import io.distlock.testkit.history.History;
import io.distlock.testkit.history.NemesisEvent.Effect;
import io.distlock.testkit.history.RecordedHold;
import io.distlock.testkit.history.RecordedLock;
import io.distlock.testkit.server.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.SplittableRandom;

/**
 * More RedLock scenarios of FAULTS.md 4.3 on {@link RedLockStore}: L2r (a node's clock jumps, emulated by {@code
 * PEXPIRE}), L4r (five client JVMs split the votes at one instant, round after round), L3r (the client JVM stopped
 * while its acquire round is in flight), and the delayed-restart variant of L1r.
 */
final class RedLockMoreScenarios {
    private RedLockMoreScenarios() {}

    /**
     * L2r, Kleppmann's clock jump: client c1 holds on all five nodes, is then cut off from two of them (n3, n4) until
     * its keys there have expired, so only n0 to n2 keep its hold; right after one of its renewals the key on n2 is
     * made to expire ({@code PEXPIRE 1}: that node's clock jumped forward); c2 acquires at once on n2 to n4 while c1
     * still believes it holds (its next renewal is up to a third of the lease away). c2 reads and writes the counter,
     * then c1, still valid in its own view, writes with its older token: the fence must refuse that write (S3, MUST),
     * and c1 must be told at its next renewal (L5). The overlap itself (S1, LIN) is the documented limit; S2 is DOC as
     * in the catalogue but is expected to hold, since the fence counters survive the expiry. Three rounds.
     */
    static CheckReport l2rClockJump(RedLockStore store, long seed) throws InterruptedException {
        try (Scenario s = new Scenario(
                "L2r", "a RedLock node's clock jumps (PEXPIRE) under a holder cut off from 2", "tier2", store, seed)) {
            LockClient c1 = s.client("c1", true);
            LockClient c2 = s.client("c2", true);
            RecordedLock a = new RecordedLock(c1.lock(s.key()), s.history("c1"));
            RecordedLock b = new RecordedLock(c2.lock(s.key()), s.history("c2"));
            int overlaps = 0;
            int refused = 0;
            int rounds = 3;
            try (FencedResourceClient ra =
                            new FencedResourceClient(Workload.RESOURCE_HOST, s.resource.port(), Duration.ofSeconds(5));
                    FencedResourceClient rb = new FencedResourceClient(
                            Workload.RESOURCE_HOST, s.resource.port(), Duration.ofSeconds(5))) {
                for (int round = 0; round < rounds; round++) {
                    RecordedHold ha = a.tryAcquire(Timing.seconds(5))
                            .orElseThrow(() -> new AssertionError("c1 did not get the free lock"));
                    OptionalLong va = ha.check() ? ra.read(ha) : OptionalLong.empty();
                    List<Integer> with = RedLockScenarios.holdNodes(store, s, "c1");
                    s.note("round " + round + ": c1 holds with token " + ha.token() + " on nodes " + with);
                    Duration hole = store.expiry().multipliedBy(2).plusSeconds(3);
                    List<Fault> faults = new ArrayList<>();
                    List<FaultProxy> mine = s.proxies("c1");
                    for (int i : List.of(3, 4)) {
                        faults.add(mine.get(i).blackhole(hole));
                    }
                    // c1's keys on n3 and n4 end with their lease; its renewals keep n0 to n2
                    Timing.sleep(store.expiry().plusMillis(500));
                    List<Integer> left = RedLockScenarios.holdNodes(store, s, "c1");
                    s.note("c1's key now on nodes " + left);
                    int victim = 2;
                    String holdKey = holdKey(store, s, victim);
                    // right after a renewal of c1 (its key's PTTL back near the full lifetime), so that c2 acts
                    // before c1's next renewal can notice
                    awaitFreshRenewal(store.nodes.get(victim).port(), holdKey, store.expiry());
                    s.effect(Effect.HOLD_REMOVED);
                    Fault.oneShot(
                            "pexpire (clock jump)",
                            "n" + victim,
                            () -> RedisServer.command(store.nodes.get(victim).port(), "PEXPIRE", holdKey, "1"),
                            s.faultLog());
                    s.effect(Effect.NONE);
                    Optional<RecordedHold> hb = b.tryAcquire(Duration.ofMillis(500));
                    if (hb.isEmpty()) {
                        s.note("c2 did not get the lock within 0.5 s of the expiry");
                    } else {
                        RecordedHold h = hb.get();
                        s.note("c2 holds with token " + h.token() + " on nodes "
                                + RedLockScenarios.holdNodes(store, s, "c2"));
                        if (h.check()) {
                            OptionalLong v = rb.read(h);
                            if (v.isPresent() && h.check()) {
                                var unused = rb.write(h, v.getAsLong() + 1);
                            }
                        }
                        // c1, still believing its hold valid, acts on its older read
                        if (ha.check() && va.isPresent()) {
                            overlaps++;
                            boolean accepted = ra.write(ha, va.getAsLong() + 1);
                            s.note("c1 (token " + ha.token() + ") wrote while c2 (token " + h.token() + ") held: "
                                    + (accepted ? "accepted" : "refused"));
                            refused += accepted ? 0 : 1;
                        } else {
                            s.note("c1 already knew its hold was gone");
                        }
                        Timing.sleep(store.renewInterval().plusMillis(300));
                        var released = h.release();
                    }
                    var releasedA = ha.release();
                    for (Fault f : faults) {
                        f.heal();
                    }
                    Timing.sleep(Duration.ofMillis(300));
                }
            }
            s.measure("rounds", rounds);
            s.measure("staleWritesWhileOverlapping", overlaps);
            s.measure("staleWritesRefused", refused);
            s.measure("lostHolds", lost(s));
            s.probe(List.of("c1", "c2", "c3"), store.expiry().plusSeconds(3));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
            return s.finish(Scenario.expect(List.of(S3, L3, L4, L5), List.of(S1, S2, LIN)));
        }
    }

    /** The hold key on node {@code i} (the one key of the scenario's prefix that is not a fence counter). */
    private static String holdKey(RedLockStore store, Scenario s, int i) {
        for (String k : RedisStores.keys(store.nodes.get(i).port(), s.prefix)) {
            if (k.endsWith(":hold")) {
                return k;
            }
        }
        throw new AssertionError("no hold key on n" + i);
    }

    private static void awaitFreshRenewal(int port, String key, Duration lifetime) {
        long end = System.nanoTime() + Duration.ofSeconds(3).toNanos();
        long fresh = lifetime.toMillis() - 120;
        while (System.nanoTime() - end < 0) {
            long pttl = Long.parseLong(RedisServer.command(port, "PTTL", key).strip());
            if (pttl >= fresh) {
                return;
            }
            Timing.sleep(Duration.ofMillis(5));
        }
        throw new AssertionError("no renewal of " + key + " seen within 3 s");
    }

    /**
     * L4r, split vote: five client JVMs ({@code split-vote} mode of {@link RedLockMoreWorker}) each try to take the
     * lock at the same instants, {@code rounds} times, one round every 2.5 s, waiting at most 800 ms each; at every round
     * start their five rounds race for the five nodes, so votes split. 1.9 s into each round (every attempt over, every
     * hold released) the nodes are scanned: no partial hold may be left (L4 after the back-off). Liveness: some client
     * wins within every round (k = 1); the rounds without a winner, the time from the round start to its first grant,
     * and the grants per round are measured. Every safety property is MUST.
     */
    static CheckReport l4rSplitVote(RedLockStore store, long seed, int rounds) throws InterruptedException {
        try (Scenario s =
                new Scenario("L4r", "five RedLock clients start acquiring at one instant", "tier2", store, seed)) {
            List<String> names = List.of("c1", "c2", "c3", "c4", "c5");
            long period = 2500;
            long wait = 800;
            List<WorkerProcess> workers = new ArrayList<>();
            Map<String, String> env = Map.of(
                    RedLockMoreWorker.ROUNDS,
                    Integer.toString(rounds),
                    RedLockMoreWorker.PERIOD,
                    Long.toString(period));
            for (String c : names) {
                workers.add(s.worker(
                        c,
                        RedLockMoreWorker.SPLIT_VOTE,
                        s.spec(c, false),
                        1,
                        Duration.ofMillis(period * rounds),
                        Duration.ofMillis(wait),
                        Duration.ofMillis(20),
                        env));
            }
            for (WorkerProcess w : workers) {
                w.awaitLine("READY", Timing.seconds(60));
            }
            // a CLOCK_MONOTONIC instant every JVM on the machine shares (System.nanoTime), handed over in a file
            long barrier = System.nanoTime() + Duration.ofSeconds(1).toNanos();
            RedLockMoreWorker.writeBarrier(s.dir, barrier);
            s.note("barrier in 1 s; " + rounds + " rounds of " + period + " ms, each client waiting up to " + wait
                    + " ms per round");
            List<String> partial = new ArrayList<>();
            for (int r = 0; r < rounds; r++) {
                long scanAt = barrier + r * period * 1_000_000 + 1_900_000_000L;
                long sleep = scanAt - System.nanoTime();
                if (sleep > 0) {
                    Thread.sleep(sleep / 1_000_000, (int) (sleep % 1_000_000));
                }
                Store.Leftovers left = store.leftovers(s.prefix);
                if (left.count() > 0) {
                    partial.add("round " + r + ": " + left.detail());
                }
            }
            s.note("partial holds left after the rounds' back-off: " + (partial.isEmpty() ? "none" : partial));
            s.endWorkloads();
            // per round: grants, time from the round start to its first grant
            int[] grants = new int[rounds];
            long[] first = new long[rounds];
            java.util.Arrays.fill(first, -1);
            for (ClientEvent e : History.load(s.dir).client()) {
                if (e.f() == ClientEvent.Op.ACQUIRE && e.type() == ClientEvent.Type.OK && names.contains(e.process())) {
                    int r = (int) ((e.t() - barrier) / (period * 1_000_000));
                    if (r >= 0 && r < rounds) {
                        grants[r]++;
                        long since = (e.t() - barrier - r * period * 1_000_000) / 1_000_000;
                        first[r] = first[r] < 0 ? since : Math.min(first[r], since);
                    }
                }
            }
            int noWinner = 0;
            long worstFirst = 0;
            List<Long> firsts = new ArrayList<>();
            for (int r = 0; r < rounds; r++) {
                if (grants[r] == 0) {
                    noWinner++;
                } else {
                    worstFirst = Math.max(worstFirst, first[r]);
                    firsts.add(first[r]);
                }
            }
            firsts.sort(null);
            s.note("grants per round " + java.util.Arrays.toString(grants) + "; first grant after (ms) "
                    + java.util.Arrays.toString(first));
            s.measure("rounds", rounds);
            s.measure("roundsWithoutWinner", noWinner);
            s.measure("grantsPerRound", java.util.Arrays.toString(grants));
            s.measure("firstGrantMedianMs", firsts.isEmpty() ? -1 : firsts.get(firsts.size() / 2));
            s.measure("firstGrantMaxMs", worstFirst);
            s.measure("partialHoldsAfterRounds", partial.size());
            s.probe(List.of("probe"), store.expiry().plusSeconds(3));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
            CheckReport report = s.finish(Scenario.expect(List.of(S1, S2, S3, L3, L4, LIN), List.of()));
            if (!partial.isEmpty()) {
                throw new AssertionError("partial holds left after a round's back-off (L4): " + partial);
            }
            if (noWinner > 0) {
                throw new AssertionError(noWinner + " of " + rounds + " rounds had no winner within " + wait
                        + " ms (liveness, k = 1): grants per round " + java.util.Arrays.toString(grants));
            }
            return report;
        }
    }

    /**
     * L3r with SIGSTOP: client JVM c1 runs the counter through proxies that delay every chunk by 150 ms each way, so
     * each of its acquire rounds lasts about 300 ms (node timeout 500 ms). Ten times, at a random moment while c1 has
     * an acquire in flight (its history shows the acquire invoked and not yet answered), c1 is stopped (SIGSTOP) for
     * the expiry plus 1 s, then continued; meanwhile c2 takes the lock and holds it across c1's resumption. Whatever
     * c1's acquire must then answer "not acquired" (or give a hold invalid at its first check), never a valid hold nor
     * an error; c1 must never hold while c2 does (S1), nor leave keys behind (L4). The outcomes are counted.
     */
    static CheckReport l3rStoppedMidAcquire(RedLockStore store, long seed, int stops) throws InterruptedException {
        try (Scenario s = new Scenario("L3r", "RedLock client stopped (SIGSTOP) mid-acquire", "tier2", store, seed)) {
            SplittableRandom random = new SplittableRandom(seed);
            Duration pause = store.expiry().plusSeconds(1);
            Duration run = Timing.seconds(10).plus(pause.plusSeconds(3).multipliedBy(stops));
            WorkerProcess c1 =
                    s.worker("c1", "w1", s.spec("c1", true), 1, run, Duration.ofSeconds(1), Duration.ofMillis(20));
            c1.awaitLine("READY", Timing.seconds(30));
            List<Fault> delays = new ArrayList<>();
            for (FaultProxy p : s.proxies("c1")) {
                delays.add(p.delay(Duration.ofMillis(150), Duration.ZERO, run.plusSeconds(60)));
            }
            LockClient c2 = s.client("c2", true);
            RecordedLock b = new RecordedLock(c2.lock(s.key()), s.history("c2"));
            int inFlight = 0;
            try (FencedResourceClient rb =
                    new FencedResourceClient(Workload.RESOURCE_HOST, s.resource.port(), Duration.ofSeconds(5))) {
                for (int i = 0; i < stops; i++) {
                    Timing.sleep(Duration.ofMillis(500 + random.nextInt(500)));
                    long invokedAt = awaitAcquireInFlight(s, "c1", Duration.ofSeconds(10));
                    long delay = random.nextInt(200);
                    Timing.sleep(Duration.ofMillis(delay));
                    s.effect(Effect.HOLDER_DOWN);
                    Fault f = ProcessFaults.pause(c1.pid(), "c1", pause, s.faultLog());
                    s.effect(Effect.NONE);
                    long stoppedAt = f.startedAt();
                    boolean stillInFlight = acquireOpenAt(s, "c1", invokedAt, stoppedAt);
                    inFlight += stillInFlight ? 1 : 0;
                    s.note("stop " + i + ": " + (stoppedAt - invokedAt) / 1_000_000 + " ms after c1 invoked an acquire"
                            + (stillInFlight ? " (still in flight)" : " (it had answered)"));
                    // c2 takes the lock while c1 is stopped (its keys expire meanwhile) and holds it across the resume
                    Optional<RecordedHold> hb = b.tryAcquire(pause);
                    if (hb.isPresent()) {
                        RecordedHold h = hb.get();
                        if (h.check()) {
                            OptionalLong v = rb.read(h);
                            if (v.isPresent() && h.check()) {
                                var unused = rb.write(h, v.getAsLong() + 1);
                            }
                        }
                        f.awaitHealed(pause.plusSeconds(10));
                        // c1 resumes while c2 holds: its stopped acquire must not give it a valid hold
                        for (int k = 0; k < 10; k++) {
                            Timing.sleep(Duration.ofMillis(100));
                            var unused = h.check();
                        }
                        var released = h.release();
                    } else {
                        s.note("c2 did not get the lock while c1 was stopped");
                        f.awaitHealed(pause.plusSeconds(10));
                    }
                }
            } finally {
                delays.forEach(Fault::heal);
            }
            s.measure("stops", stops);
            s.measure("stopsWithAcquireInFlight", inFlight);
            Map<String, Integer> outcomes = stoppedOutcomes(s, "c1");
            s.measure("stoppedAcquireOutcomes", outcomes.toString());
            s.note("outcomes of c1's acquires that spanned a stop: " + outcomes);
            s.endWorkloads();
            s.probe(List.of("probe"), store.expiry().plusSeconds(3));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
            CheckReport report = s.finish(Scenario.expect(List.of(S1, S2, S3, L3, L4, LIN), List.of()));
            if (outcomes.getOrDefault("acquired-valid", 0) > 0) {
                throw new AssertionError("an acquire stopped past its lease returned a hold still valid: " + outcomes);
            }
            if (outcomes.getOrDefault("error", 0) > 0 || outcomes.getOrDefault("acquired-unchecked", 0) > 0) {
                throw new AssertionError("an acquire stopped past its lease did not answer \"not acquired\" (or a hold"
                        + " invalid at its first check): " + outcomes);
            }
            return report;
        }
    }

    /** Waits for an acquire of {@code process} invoked and not yet answered; returns when it was invoked. */
    private static long awaitAcquireInFlight(Scenario s, String process, Duration bound) {
        long end = System.nanoTime() + bound.toNanos();
        while (System.nanoTime() - end < 0) {
            Map<Long, ClientEvent> open = new HashMap<>();
            for (ClientEvent e : History.load(s.dir).client()) {
                if (e.process().equals(process) && e.f() == ClientEvent.Op.ACQUIRE) {
                    if (e.type() == ClientEvent.Type.INVOKE) {
                        open.put(e.op(), e);
                    } else {
                        open.remove(e.op());
                    }
                }
            }
            Optional<ClientEvent> latest = open.values().stream().reduce((x, y) -> x.t() > y.t() ? x : y);
            if (latest.isPresent()) {
                return latest.get().t();
            }
            Timing.sleep(Duration.ofMillis(3));
        }
        throw new AssertionError(process + " had no acquire in flight within " + bound);
    }

    /** Whether the acquire of {@code process} invoked at {@code invokedAt} had no answer before {@code at}. */
    private static boolean acquireOpenAt(Scenario s, String process, long invokedAt, long at) {
        long op = -1;
        for (ClientEvent e : History.load(s.dir).client()) {
            if (e.process().equals(process) && e.f() == ClientEvent.Op.ACQUIRE) {
                if (e.type() == ClientEvent.Type.INVOKE && e.t() == invokedAt) {
                    op = e.op();
                } else if (e.op() == op && e.type() != ClientEvent.Type.INVOKE) {
                    return e.t() > at;
                }
            }
        }
        return true;
    }

    /**
     * The outcome of each acquire of {@code process} that was in flight when a pause started: {@code not-acquired},
     * {@code acquired-invalid} (its first check answered false), {@code acquired-valid}, {@code error} (the acquire
     * threw: its outcome is unknown to the caller).
     */
    private static Map<String, Integer> stoppedOutcomes(Scenario s, String process) {
        History h = History.load(s.dir);
        List<Long> pauses = h.nemesis().stream()
                .filter(n ->
                        n.fault().equals("pause") && n.phase() == io.distlock.testkit.history.NemesisEvent.Phase.START)
                .map(io.distlock.testkit.history.NemesisEvent::t)
                .toList();
        Map<String, Integer> out = new java.util.TreeMap<>();
        List<ClientEvent> mine =
                h.client().stream().filter(e -> e.process().equals(process)).toList();
        for (long p : pauses) {
            ClientEvent inv = null;
            ClientEvent answer = null;
            for (ClientEvent e : mine) {
                if (e.f() == ClientEvent.Op.ACQUIRE && e.type() == ClientEvent.Type.INVOKE && e.t() < p) {
                    inv = e;
                }
            }
            if (inv == null) {
                continue;
            }
            for (ClientEvent e : mine) {
                if (e.f() == ClientEvent.Op.ACQUIRE && e.op() == inv.op() && e.type() != ClientEvent.Type.INVOKE) {
                    answer = e;
                }
            }
            if (answer == null || answer.t() < p) {
                continue; // not in flight at the stop
            }
            String outcome;
            if (answer.type() == ClientEvent.Type.OK) {
                String acq = answer.acq();
                Optional<ClientEvent> check = mine.stream()
                        .filter(e -> e.f() == ClientEvent.Op.CHECK && e.acq().equals(acq))
                        .findFirst();
                outcome = check.isEmpty()
                        ? "acquired-unchecked"
                        : check.get().type() == ClientEvent.Type.OK ? "acquired-valid" : "acquired-invalid";
            } else if (answer.type() == ClientEvent.Type.FAIL) {
                outcome = "not-acquired";
            } else {
                outcome = "error";
            }
            out.merge(outcome, 1, Integer::sum);
        }
        return out;
    }

    /**
     * L1r, delayed restart: as {@link RedLockScenarios#l1rRestartWithoutData}, but the two restarted nodes stay down
     * for the expiry plus 1 s before they come back empty (the Redis page's "delayed restart"): by then the holder's
     * hold has ended in its own view, so no two holds may overlap. Every MUST property holds, S1 included.
     */
    static CheckReport l1rDelayedRestart(RedLockStore store, long seed) throws InterruptedException {
        try (Scenario s = new Scenario(
                "L1r-delayed",
                "two of the holder's three RedLock nodes restart empty after E + 1 s",
                "tier2",
                store,
                seed)) {
            Duration hole = Duration.ofSeconds(10);
            Duration down = store.expiry().plusSeconds(1);
            List<String> clients = List.of("c1", "c2", "c3");
            Tier2Scenarios.slowHolders(s, Timing.seconds(22), 5000);
            Timing.sleep(Duration.ofSeconds(2));
            String holder = s.awaitHolder(clients, Timing.seconds(30));
            List<Fault> faults = new ArrayList<>();
            List<FaultProxy> mine = s.proxies(holder);
            List<Integer> cut =
                    RedLockScenarios.nodesByKey(store, s, holder, false).subList(0, 2);
            for (int i : cut) {
                faults.add(mine.get(i).blackhole(hole));
            }
            Timing.sleep(store.expiry().plusMillis(500));
            List<Integer> candidates = new ArrayList<>(RedLockScenarios.nodesByKey(store, s, holder, true));
            candidates.removeAll(cut);
            List<Integer> restart = List.copyOf(candidates.subList(0, 2));
            s.note("holder " + holder + ": key on " + RedLockScenarios.holdNodes(store, s, holder) + ", cut off from "
                    + cut + ", crashing " + restart + " for " + down.toMillis() + " ms");
            s.effect(Effect.HOLDER_DOWN);
            List<Fault> crashes = new ArrayList<>();
            for (int i : restart) {
                crashes.add(
                        ProcessFaults.crash(store.nodes.get(i), new ProcessFaults.Restart(down, false), s.faultLog()));
            }
            s.effect(Effect.NONE);
            for (Fault f : crashes) {
                f.awaitHealed(down.plusSeconds(10));
            }
            for (Fault f : faults) {
                f.awaitHealed(hole.plusSeconds(10));
            }
            s.endWorkloads();
            s.measure("lostHolds", lost(s));
            s.probe(clients, store.expiry().plusSeconds(3));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
            return s.finish(Scenario.expect(List.of(S1, S2, S3, L1, L3, L4, LIN), List.of()));
        }
    }

    private static long lost(Scenario s) {
        return History.load(s.dir).client().stream()
                .filter(e -> e.f() == ClientEvent.Op.LOST)
                .count();
    }
}
