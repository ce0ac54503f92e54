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
import io.distlock.testkit.fault.FaultProxy;
import io.distlock.testkit.history.CheckReport;
import io.distlock.testkit.history.ClientEvent;
import io.distlock.testkit.history.History;
import io.distlock.testkit.history.NemesisEvent.Effect;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * RedLock scenarios (FAULTS.md 4.3) on {@link RedLockStore}: three clients run the fenced counter with slow holds while
 * the holder is cut off (blackhole, no FIN) from some nodes through its own proxies, or nodes restart without their
 * data.
 */
final class RedLockScenarios {
    private RedLockScenarios() {}

    private static final List<String> CLIENTS = List.of("c1", "c2", "c3");

    /**
     * LPm / LPM: the holder is cut off from {@code cut} of the five nodes for twice the expiry plus 1 s. From a
     * minority (2) it keeps renewing on the majority and keeps its hold; from a majority (3) its renewals fail, it must
     * learn the hold is gone before the keys end on the nodes, and another client takes over. Every MUST property
     * holds either way.
     */
    static CheckReport holderCutOffFromNodes(RedLockStore store, long seed, int cut) throws InterruptedException {
        boolean majority = cut > store.nodes.size() / 2;
        String id = majority ? "LPM" : "LPm";
        String title = "holder cut off from " + cut + " of " + store.nodes.size() + " RedLock nodes";
        try (Scenario s = new Scenario(id, title, "tier2", store, seed)) {
            Duration hole = store.expiry().multipliedBy(2).plusSeconds(1);
            // holds of 3 s: the cut, aimed at a hold less than 0.5 s old, spans several of its renewals
            Tier2Scenarios.slowHolders(s, Timing.seconds(6).plus(hole.multipliedBy(2)), 3000);
            Timing.sleep(Duration.ofSeconds(2));
            String holder = s.awaitHolder(CLIENTS, Timing.seconds(20));
            s.effect(majority ? Effect.HOLDER_DOWN : Effect.NONE);
            List<Fault> faults = new ArrayList<>();
            List<FaultProxy> mine = s.proxies(holder);
            for (int i = mine.size() - cut; i < mine.size(); i++) {
                faults.add(mine.get(i).blackhole(hole));
            }
            s.effect(Effect.NONE);
            for (Fault f : faults) {
                f.awaitHealed(hole.plusSeconds(10));
            }
            s.endWorkloads();
            s.measure("lostHolds", lost(s));
            s.probe(CLIENTS, store.expiry().plusSeconds(3));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
            List<io.distlock.testkit.history.Property> must =
                    new ArrayList<>(Tier1Scenarios.must(store, S1, S3, L3, L4, LIN));
            if (majority) {
                must.add(io.distlock.testkit.history.Property.L1);
            }
            return s.finish(Scenario.expect(must, Tier1Scenarios.doc(store)));
        }
    }

    /**
     * L1r, the documented limit: the holder (5 s holds) is cut off from nodes n3 and n4, so after the lease only n0 to
     * n2 have its hold; then two of those restart without their data while the other clients reach every node. Those
     * find a majority free (n0, n1, n3, n4): two holders at once until the first holder's next renewal finds its
     * majority gone (L5, MUST, as the client promises). S1, S2 and LIN may break (DOC: "a node restarted without its
     * data votes again"); the fenced counter must lose nothing (S3).
     */
    static CheckReport l1rRestartWithoutData(RedLockStore store, long seed) throws InterruptedException {
        try (Scenario s =
                new Scenario("L1r", "two of the holder's three RedLock nodes restart empty", "tier2", store, seed)) {
            Duration hole = Duration.ofSeconds(8);
            Tier2Scenarios.slowHolders(s, Timing.seconds(20), 5000);
            Timing.sleep(Duration.ofSeconds(2));
            String holder = s.awaitHolder(CLIENTS, Timing.seconds(30));
            List<Fault> faults = new ArrayList<>();
            List<FaultProxy> mine = s.proxies(holder);
            faults.add(mine.get(3).blackhole(hole));
            faults.add(mine.get(4).blackhole(hole));
            // the hold's keys on n3 and n4 end with the lease; n0 to n2 keep it
            Timing.sleep(store.expiry().plusMillis(500));
            // restart two of the nodes that still have a hold key (the holder's, unless it lost its hold already:
            // a grant needs only a bare majority, and one that included n3 or n4 ends with the cut)
            List<Integer> targets = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                if (RedisStores.keys(store.nodes.get(i).port(), s.prefix).stream()
                        .anyMatch(k -> k.endsWith(":hold"))) {
                    targets.add(i);
                }
            }
            for (int i = 0; targets.size() < 2; i++) {
                if (!targets.contains(i)) {
                    targets.add(i);
                }
            }
            List<Integer> restart = targets.subList(0, 2);
            s.note("holder " + holder + ", hold keys on " + targets + " of n0-n2; restarting " + restart);
            s.effect(Effect.HOLD_REMOVED);
            Fault.oneShot(
                    "restart-empty",
                    "n" + restart.get(0) + ",n" + restart.get(1),
                    () -> restart.forEach(i -> store.nodes.get(i).restart()),
                    s.faultLog());
            s.effect(Effect.NONE);
            for (Fault f : faults) {
                f.awaitHealed(hole.plusSeconds(10));
            }
            s.endWorkloads();
            s.measure("lostHolds", lost(s));
            s.probe(CLIENTS, store.expiry().plusSeconds(3));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
            return s.finish(Scenario.expect(List.of(S3, L3, L4, L5), List.of(S1, S2, LIN)));
        }
    }

    private static long lost(Scenario s) {
        return History.load(s.dir).client().stream()
                .filter(e -> e.f() == ClientEvent.Op.LOST)
                .count();
    }
}
