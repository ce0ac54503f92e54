package io.distlock.safety;

import static io.distlock.testkit.history.Property.L3;
import static io.distlock.testkit.history.Property.L4;
import static io.distlock.testkit.history.Property.LIN;
import static io.distlock.testkit.history.Property.S1;
import static io.distlock.testkit.history.Property.S3;

import io.distlock.testkit.Timing;
import io.distlock.testkit.fault.Fault;
import io.distlock.testkit.fault.FaultProxy;
import io.distlock.testkit.history.CheckReport;
import io.distlock.testkit.history.ClientEvent;
import io.distlock.testkit.history.History;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Partitions between servers (FAULTS.md Z3, E6) on the stores of {@link PartitionStores}: one member is cut off from
 * the other members and from every client for twice the expiry plus 2 s, while three clients run the fenced counter
 * with slow holds, then joined again. The member is either the one the current holder talks to (Z3, E6: its
 * connection hangs, it must move to the majority or learn its hold is gone) or the leader (Z3-leader, E6-leader: the
 * majority elects another). Every MUST property holds: the majority keeps the lock state, the holder's session or
 * lease lives or dies there, and the validity the client believes in never outlasts it.
 */
final class PartitionScenarios {
    private PartitionScenarios() {}

    private static final List<String> CLIENTS = List.of("c1", "c2", "c3");

    static CheckReport memberCutOff(PartitionStores.Partitioned store, long seed, boolean leader)
            throws InterruptedException {
        String base = base(store);
        String id = leader ? base + "-leader" : base;
        String title = leader
                ? "leader cut off from the other servers and the clients"
                : "holder's server cut off from the other servers and the clients";
        return cutOff(store, seed, id, title, leader);
    }

    /**
     * Z3-in, Z3-out, E6-in, E6-out: as Z3 and E6, but only one direction of the holder's server's traffic is cut,
     * for the same time and with the same checks: {@link NetNamespaces.Way#IN} drops what reaches it (it can send but
     * not receive: it still sends to the majority and to its clients, while no answer and no heartbeat reaches it),
     * {@link NetNamespaces.Way#OUT} what it sends (it hears everyone and nobody hears it). Either way the majority
     * must go on without it, and its clients must move there or learn their holds are gone. With {@code leader}
     * (Z3-leader-in, ...): the leader's traffic, whichever member the holder talks to.
     */
    static CheckReport cutOneWay(PartitionStores.Partitioned store, long seed, NetNamespaces.Way way, boolean leader)
            throws InterruptedException {
        String base = base(store);
        String id = base + (leader ? "-leader" : "") + (way == NetNamespaces.Way.IN ? "-in" : "-out");
        String who = leader ? "leader" : "holder's server";
        String title = way == NetNamespaces.Way.IN
                ? who + " can send but not receive (one-way cut)"
                : who + " can receive but not send (one-way cut)";
        return cutOff(
                store,
                seed,
                id,
                title,
                leader,
                (member, holder, cut, s) -> store.net.cutOneWay(member, way, "m" + member, cut, s.faultLog()),
                " one way (" + way + ")");
    }

    /**
     * Z3-link, E6-link: a one-link partition. The leader and one follower cannot reach each other, while both still
     * reach the third member and every client: the follower the holder talks to when it talks to a follower, so the
     * holder's server loses its leader but not its quorum path. The follower may call an election the leader never
     * hears of, and the third member sees both: every MUST property holds, with the lock state kept by a majority.
     */
    static CheckReport linkCut(PartitionStores.Partitioned store, long seed) throws InterruptedException {
        String base = base(store);
        return cutOff(
                store,
                seed,
                base + "-link",
                "one link cut: the leader and a follower cannot reach each other, both reach the third member",
                false,
                (member, holder, cut, s) -> {
                    int leader = store.leader();
                    int other = member != leader ? member : (leader + 1) % store.net.size();
                    s.note("cutting the link m" + leader + " (leader) <-> m" + other);
                    return store.net.cutLink(leader, other, "m" + leader + "-m" + other, cut, s.faultLog());
                },
                " (its link to the leader)");
    }

    /**
     * Z3-minority, E6-minority: the holder's server is cut off from the other members only; every client still
     * reaches it, and the holder's connection to it stays up. The server has no quorum: its client must learn that
     * from the store (requests that fail or time out, a session or lease that the majority ends) and move to the
     * majority or be told its hold is gone, never go on believing in it.
     */
    static CheckReport minorityWithClients(PartitionStores.Partitioned store, long seed) throws InterruptedException {
        String base = base(store);
        return cutOff(
                store,
                seed,
                base + "-minority",
                "holder's server cut off from the other servers, still reached by every client",
                false,
                (member, holder, cut, s) -> store.net.split(java.util.Set.of(member), "m" + member, cut, s.faultLog()),
                " from the other members only");
    }

    /**
     * Z3-minority-holder, E6-minority-holder: as Z3-minority, and the holder reaches only that server: its links to
     * the other members are blackholed (no FIN) for the same time, so it cannot move to the majority. It must be told
     * its hold is gone by the validity it believes in, while the majority lets another client take the lock.
     */
    static CheckReport minorityWithHolderStuck(PartitionStores.Partitioned store, long seed)
            throws InterruptedException {
        String base = base(store);
        return cutOff(
                store,
                seed,
                base + "-minority-holder",
                "holder's server cut off from the other servers, the holder reaching only it",
                false,
                (member, holder, cut, s) -> {
                    List<FaultProxy> mine = s.proxies(holder);
                    for (int i = 0; i < mine.size(); i++) {
                        if (i != member) {
                            mine.get(i).blackhole(cut);
                        }
                    }
                    return store.net.split(java.util.Set.of(member), "m" + member, cut, s.faultLog());
                },
                " from the other members only, its holder's links to them blackholed");
    }

    /** The id the catalogue gives partitions of this store: Z3 (ZooKeeper) or E6 (etcd). */
    private static String base(PartitionStores.Partitioned store) {
        return store instanceof PartitionStores.ZooKeeper ? "Z3" : "E6";
    }

    /** Starts the fault of a scenario on the chosen member. */
    @FunctionalInterface
    private interface CutMaker {
        Fault start(int member, String holder, Duration cut, Scenario s);
    }

    private static CheckReport cutOff(
            PartitionStores.Partitioned store, long seed, String id, String title, boolean leader)
            throws InterruptedException {
        return cutOff(
                store,
                seed,
                id,
                title,
                leader,
                (member, holder, cut, s) -> store.net.isolate(member, "m" + member, cut, s.faultLog()),
                "");
    }

    private static CheckReport cutOff(
            PartitionStores.Partitioned store,
            long seed,
            String id,
            String title,
            boolean leader,
            CutMaker maker,
            String how)
            throws InterruptedException {
        try (Scenario s = new Scenario(id, title, "tier2", store, seed)) {
            Duration cut = store.expiry().multipliedBy(2).plusSeconds(2);
            Tier2Scenarios.slowHolders(s, Timing.seconds(8).plus(cut.multipliedBy(2)), 1000);
            Timing.sleep(Duration.ofSeconds(2));
            String holder = s.awaitHolder(CLIENTS, Timing.seconds(20));
            int member = leader ? store.leader() : holdersMember(s, store, holder);
            if (member < 0) {
                throw new AssertionError("no member to cut off (leader " + store.leader() + ")");
            }
            s.note("holder " + holder + ", cutting off member m" + member + how + " (leader m" + store.leader() + ")");
            Fault f = maker.start(member, holder, cut, s);
            f.awaitHealed(cut.plusSeconds(10));
            long healed = System.nanoTime();
            if (!how.isEmpty()) {
                s.note("the cut dropped " + store.net.lastDropped() + " packets");
            }
            awaitRejoined(store, Duration.ofSeconds(60));
            s.note(String.format(
                    java.util.Locale.ROOT,
                    "all members serving again %.1f s after the heal (leader m%d)",
                    (System.nanoTime() - healed) / 1e9,
                    store.leader()));
            s.endWorkloads();
            long lost = History.load(s.dir).client().stream()
                    .filter(e -> e.f() == ClientEvent.Op.LOST)
                    .count();
            s.measure("lostHolds", lost);
            if (store instanceof PartitionStores.Etcd e) {
                // every workload has ended: any key left here blocks the probes until its lease ends
                s.note("keys before the probes: " + e.describeKeys(s.prefix));
            }
            s.probe(CLIENTS, store.expiry().plusSeconds(3));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
            return s.finish(
                    Scenario.expect(Tier1Scenarios.must(store, S1, S3, L3, L4, LIN), Tier1Scenarios.doc(store)));
        }
    }

    /**
     * The member whose forwarder the holder's proxies have open connections to: a ZooKeeper client talks to one
     * server at a time; a jetcd client may have several, and the first is taken.
     */
    private static int holdersMember(Scenario s, PartitionStores.Partitioned store, String holder) {
        List<FaultProxy> mine = s.proxies(holder);
        List<String> seen = new ArrayList<>();
        int chosen = -1;
        for (int i = 0; i < mine.size(); i++) {
            int n = mine.get(i).connections();
            seen.add("m" + i + "=" + n);
            if (n > 0 && chosen < 0) {
                chosen = i;
            }
        }
        s.note("connections of " + holder + " per member: " + seen);
        return chosen;
    }

    private static void awaitRejoined(PartitionStores.Partitioned store, Duration bound) {
        long end = System.nanoTime() + bound.toNanos();
        while (true) {
            boolean ok = store instanceof PartitionStores.ZooKeeper z ? allServing(z) : store.leader() >= 0;
            if (ok) {
                return;
            }
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("the members did not serve together again within " + bound);
            }
            Timing.sleep(Duration.ofMillis(200));
        }
    }

    private static boolean allServing(PartitionStores.ZooKeeper z) {
        for (int i = 0; i < z.net.size(); i++) {
            if (!z.mode(i).matches("leader|follower")) {
                return false;
            }
        }
        return true;
    }
}
