package io.distlock.safety;

import static io.distlock.testkit.history.Property.L3;
import static io.distlock.testkit.history.Property.L4;
import static io.distlock.testkit.history.Property.LIN;
import static io.distlock.testkit.history.Property.S1;
import static io.distlock.testkit.history.Property.S2;
import static io.distlock.testkit.history.Property.S3;

import io.distlock.testkit.Timing;
import io.distlock.testkit.fault.Fault;
import io.distlock.testkit.history.CheckReport;
import io.distlock.testkit.history.ClientEvent;
import io.distlock.testkit.history.History;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * S2, the Sentinel split-brain (FAULTS.md §4.2, Jepsen's 2013 shape), on {@link PartitionStores.Sentinel}: the master
 * is cut off, with one Sentinel and the client JVM cA, from the replicas, the other two Sentinels and the client JVMs
 * c0 and cB, for 20 s. The majority promotes a replica; the old master goes on taking writes from cA. c0 was connected
 * to the old master before the cut, cB connects during it (so to the new master). Every client runs the fenced counter
 * with holds of half a second. After the heal the Sentinels turn the old master into a replica of the new one, which
 * drops its data: its lock keys must be gone (L4 scans every data node), every client must be able to lock again
 * (L3), and the fence must have kept the counter whole (S3). Two holders at once are expected while the cut lasts:
 * S1 and S2 are DOC, the raw overlaps are counted.
 *
 * <p>With {@code min-replicas-to-write 1} (max lag 2 s) on every data node, the old master refuses writes once it has
 * heard from no replica for 2 s: cA's renewals and acquisitions fail after that, so the split-brain window is bounded
 * by the lag instead of by the cut.
 */
final class SplitBrainScenarios {
    private SplitBrainScenarios() {}

    private static final Duration CUT = Duration.ofSeconds(20);
    private static final Duration HOLD = Duration.ofMillis(500);

    static CheckReport sentinelSplitBrain(PartitionStores.Sentinel store, long seed, boolean minReplicas)
            throws InterruptedException {
        store.awaitSettled(Duration.ofSeconds(60));
        int old = store.leader();
        store.minReplicasToWrite(minReplicas ? 1 : 0);
        String id = minReplicas ? "S2-minreplicas" : "S2";
        String title = minReplicas
                ? "Sentinel split-brain with min-replicas-to-write 1"
                : "Sentinel split-brain: old master, a Sentinel and a client cut off from the majority";
        try (Scenario s = new Scenario(id, title, "tier2", store, seed);
                Relay relay = Relay.start(store.net.rootAddress(), s.resource.port())) {
            int sentinel = PartitionStores.Sentinel.MINORITY_SENTINEL;
            s.note(String.format(
                    Locale.ROOT,
                    "master m%d; minority side: m%d, Sentinel m%d, client cA (m%d); majority side: the other data"
                            + " nodes, Sentinels m4 and m5, clients c0 and cB (m%d); min-replicas-to-write %d",
                    old,
                    old,
                    sentinel,
                    PartitionStores.Sentinel.MINORITY_CLIENTS,
                    PartitionStores.Sentinel.MAJORITY_CLIENTS,
                    minReplicas ? 1 : 0));
            Duration run = Timing.seconds(50);
            WorkerProcess a = worker(s, store, relay, "cA", PartitionStores.Sentinel.MINORITY_CLIENTS, run);
            WorkerProcess zero = worker(s, store, relay, "c0", PartitionStores.Sentinel.MAJORITY_CLIENTS, run);
            a.awaitLine("READY", Timing.seconds(30));
            zero.awaitLine("READY", Timing.seconds(30));
            Timing.sleep(Duration.ofSeconds(3));
            long cutAt = System.nanoTime();
            Fault f = store.net.split(
                    Set.of(old, sentinel, PartitionStores.Sentinel.MINORITY_CLIENTS),
                    "m" + old + "+m" + sentinel + "+cA",
                    CUT,
                    s.faultLog());
            int promoted = awaitPromotion(store, old, Duration.ofSeconds(18));
            s.note(String.format(
                    Locale.ROOT,
                    "%.1f s after the cut Sentinel m4 names m%d master (%s); m%d says %s, Sentinel m%d names m%d",
                    (System.nanoTime() - cutAt) / 1e9,
                    promoted,
                    promoted >= 0 ? store.role(promoted) : "-",
                    old,
                    store.role(old),
                    sentinel,
                    store.masterNamedBy(sentinel)));
            Duration left = CUT.minusNanos(System.nanoTime() - cutAt);
            WorkerProcess b = worker(
                    s, store, relay, "cB", PartitionStores.Sentinel.MAJORITY_CLIENTS, left.plus(Timing.seconds(15)));
            b.awaitLine("READY", Timing.seconds(20));
            if (!f.awaitHealed(CUT.plusSeconds(10))) {
                throw new AssertionError("the partition did not heal within " + CUT.plusSeconds(10));
            }
            long healed = System.nanoTime();
            s.note("the cut dropped " + store.net.lastDropped() + " packets");
            s.note("lock keys on the old master m" + old + " at the heal: " + store.keysOn(old, s.prefix));
            awaitReplica(store, old, Duration.ofSeconds(60));
            s.note(String.format(
                    Locale.ROOT,
                    "m%d is a replica again %.1f s after the heal (master m%d)",
                    old,
                    (System.nanoTime() - healed) / 1e9,
                    store.leader()));
            s.endWorkloads();
            long lost = History.load(s.dir).client().stream()
                    .filter(e -> e.f() == ClientEvent.Op.LOST)
                    .count();
            s.measure("lostHolds", lost);
            s.probe(List.of("cA", "c0", "cB"), store.expiry().plusSeconds(3));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
            s.note("lock keys on the old master m" + old + " at the end: " + store.keysOn(old, s.prefix));
            return s.finish(Scenario.expect(List.of(S3, L3, L4), List.of(S1, S2, LIN)));
        } finally {
            store.minReplicasToWrite(0);
        }
    }

    private static WorkerProcess worker(
            Scenario s, PartitionStores.Sentinel store, Relay relay, String process, int member, Duration run) {
        return s.worker(
                process,
                "w1-slow",
                s.spec(process, false),
                1,
                run,
                Tier1Scenarios.WAIT,
                HOLD,
                Map.of(),
                store.launcher(member),
                relay);
    }

    /** The member Sentinel m4 names master once it is not {@code old} and says it is master; -1 after {@code bound}. */
    private static int awaitPromotion(PartitionStores.Sentinel store, int old, Duration bound) {
        long end = System.nanoTime() + bound.toNanos();
        while (System.nanoTime() - end < 0) {
            int named = store.masterNamedBy(4);
            if (named >= 0 && named != old && store.role(named).equals("master")) {
                return named;
            }
            Timing.sleep(Duration.ofMillis(100));
        }
        return -1;
    }

    /** Waits until {@code member} replicates from the master every Sentinel names, with its link up. */
    private static void awaitReplica(PartitionStores.Sentinel store, int member, Duration bound) {
        long end = System.nanoTime() + bound.toNanos();
        while (true) {
            String info = store.command(member, "INFO", "replication");
            int master = store.leader();
            if (master >= 0
                    && master != member
                    && info.contains("role:slave")
                    && info.contains("master_host:" + store.net.address(master))
                    && info.contains("master_link_status:up")) {
                return;
            }
            if (System.nanoTime() - end > 0) {
                throw new AssertionError(
                        "m" + member + " not a replica of the Sentinels' master within " + bound + ": " + info);
            }
            Timing.sleep(Duration.ofMillis(200));
        }
    }
}
