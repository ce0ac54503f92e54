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
import io.distlock.testkit.server.RedisServer;
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
     * minority (2, the nodes without its key first) it keeps renewing on the majority and keeps its hold; from a majority (3) its renewals fail, it must
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
            // from a minority: the nodes without the holder's key first, so a hold granted by a bare majority keeps
            // it; from a majority: the nodes with its key first, so the hold cannot be renewed
            List<Integer> order = nodesByKey(store, s, holder, majority);
            for (int i : order.subList(0, cut)) {
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
     * L1r, the documented limit: the holder (5 s holds) is cut off from two nodes (those without its key first), so
     * after the lease only the other three have its hold; then two of those restart without their data while the other
     * clients reach every node. Those find a majority free (the two restarted, the two cut off): two holders at once until the first holder's next renewal finds its
     * majority gone (L5, MUST, as the client promises). S1, S2 and LIN may break (DOC: "a node restarted without its
     * data votes again"); the fenced counter must lose nothing (S3).
     */
    static CheckReport l1rRestartWithoutData(RedLockStore store, long seed) throws InterruptedException {
        return l1rRestart(store, seed, false);
    }

    /**
     * L1r with {@code appendfsync always}: as {@link #l1rRestartWithoutData}, on nodes that write every change to their
     * append-only file before they answer ({@code store} started so), so the two nodes restart with the holder's key.
     * The hold survives: its renewals during the restart reach fewer than a quorum (an unknown outcome, the hold kept
     * until its last confirmed lease), and those after it find the key on three nodes again; nobody else can gather a
     * majority meanwhile. Everything is MUST: S1, S2, S3, LIN, L3, L4.
     */
    static CheckReport l1rRestartWithData(RedLockStore store, long seed) throws InterruptedException {
        return l1rRestart(store, seed, true);
    }

    private static CheckReport l1rRestart(RedLockStore store, long seed, boolean keepsData)
            throws InterruptedException {
        try (Scenario s = new Scenario(
                keepsData ? "L1r-always" : "L1r",
                keepsData
                        ? "two of the holder's three RedLock nodes restart, appendfsync always"
                        : "two of the holder's three RedLock nodes restart empty",
                "tier2",
                store,
                seed)) {
            Duration hole = Duration.ofSeconds(8);
            Tier2Scenarios.slowHolders(s, Timing.seconds(20), 5000);
            Timing.sleep(Duration.ofSeconds(2));
            String holder = s.awaitHolder(CLIENTS, Timing.seconds(30));
            List<Fault> faults = new ArrayList<>();
            List<FaultProxy> mine = s.proxies(holder);
            // cut two nodes, those without the holder's key first, so that it keeps a majority of its grant
            List<Integer> cut = nodesByKey(store, s, holder, false).subList(0, 2);
            for (int i : cut) {
                faults.add(mine.get(i).blackhole(hole));
            }
            // the hold's keys on the cut nodes end with the lease; the other three keep it
            Timing.sleep(store.expiry().plusMillis(500));
            // restart two of the nodes not cut off, those with the holder's key first
            List<Integer> candidates = new ArrayList<>(nodesByKey(store, s, holder, true));
            candidates.removeAll(cut);
            List<Integer> restart = List.copyOf(candidates.subList(0, 2));
            s.note("holder " + holder + ": key on " + holdNodes(store, s, holder) + ", cut off from " + cut
                    + ", restarting " + restart);
            if (!keepsData) {
                s.effect(Effect.HOLD_REMOVED);
            }
            Fault.oneShot(
                    keepsData ? "restart" : "restart-empty",
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
            if (keepsData) {
                return s.finish(Scenario.expect(List.of(S1, S2, S3, LIN, L3, L4), Tier1Scenarios.doc(store)));
            }
            return s.finish(Scenario.expect(List.of(S3, L3, L4, L5), List.of(S1, S2, LIN)));
        }
    }

    /** The nodes whose hold key names an owner of client {@code holder}. */
    static List<Integer> holdNodes(RedLockStore store, Scenario s, String holder) {
        List<Integer> found = new ArrayList<>();
        for (int i = 0; i < store.nodes.size(); i++) {
            int port = store.nodes.get(i).port();
            for (String k : RedisStores.keys(port, s.prefix)) {
                if (k.endsWith(":hold")
                        && RedisServer.command(port, "GET", k).strip().startsWith(holder + ".")) {
                    found.add(i);
                    break;
                }
            }
        }
        return found;
    }

    /** Every node, those with the holder's key first ({@code withKeyFirst}) or last; in index order otherwise. */
    static List<Integer> nodesByKey(RedLockStore store, Scenario s, String holder, boolean withKeyFirst) {
        List<Integer> with = holdNodes(store, s, holder);
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < store.nodes.size(); i++) {
            if (with.contains(i) == withKeyFirst) {
                order.add(i);
            }
        }
        for (int i = 0; i < store.nodes.size(); i++) {
            if (with.contains(i) != withKeyFirst) {
                order.add(i);
            }
        }
        s.note("holder " + holder + " has its key on nodes " + with);
        return order;
    }

    private static long lost(Scenario s) {
        return History.load(s.dir).client().stream()
                .filter(e -> e.f() == ClientEvent.Op.LOST)
                .count();
    }
}
