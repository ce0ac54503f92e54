package io.distlock.safety;

import static io.distlock.testkit.history.Property.L1;
import static io.distlock.testkit.history.Property.L3;
import static io.distlock.testkit.history.Property.L4;
import static io.distlock.testkit.history.Property.LIN;
import static io.distlock.testkit.history.Property.S1;
import static io.distlock.testkit.history.Property.S3;

import io.distlock.testkit.Timing;
import io.distlock.testkit.fault.Fault;
import io.distlock.testkit.fault.ProcessFaults;
import io.distlock.testkit.history.CheckReport;
import io.distlock.testkit.history.NemesisEvent.Effect;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * G9 and Z6 of FAULTS.md with the holder dead across the restart: three worker JVMs run the counter (every hold lasts
 * 1 s), every member of the ZooKeeper ensemble or the etcd cluster is killed (SIGKILL, together) while one holds, the
 * holder's JVM is killed (SIGKILL) while no member serves, and the members are restarted with their data after {@code
 * down}. ZooKeeper restarts session timers on the new leader and etcd refreshes every lease on election, so the dead
 * holder's entry outlives its session or lease by the outage and a full session or lease after it: S1 and S3 are MUST,
 * nothing is left (L4), and the takeover (L1) is measured, not bounded: {@code firstGrantAfterBackMillis} is the time
 * from every member serving to the next grant to a survivor.
 */
final class HolderDeadRestartScenarios {
    private HolderDeadRestartScenarios() {}

    /** Z6 with the holder dead: the ZooKeeper ensemble down for {@code down}, the holder killed while it is down. */
    static CheckReport zooKeeper(ConsensusStores.ZooKeeper store, long seed, Duration down)
            throws InterruptedException {
        ZooKeeperEnsemble ensemble = store.ensemble;
        List<Integer> members = List.of(0, 1, 2);
        return run(
                store,
                seed,
                "Z6-holder-dead",
                "whole ZooKeeper ensemble down " + down.toMillis() + " ms, holder JVM killed while down (session "
                        + ConsensusStores.ZooKeeper.SESSION.toMillis() + " ms)",
                "zookeeper:m0+m1+m2",
                down,
                () -> {
                    EnsembleRestartScenarios.killAtOnce(
                            members.stream().map(ensemble::pid).toList());
                    members.forEach(ensemble::kill);
                },
                () -> ensemble.restart(members, Duration.ofSeconds(90)));
    }

    /** G9 with the holder dead: the etcd cluster down for {@code down}, the holder killed while it is down. */
    static CheckReport etcd(ConsensusStores.Etcd store, long seed, Duration down) throws InterruptedException {
        List<Integer> members = List.of(0, 1, 2);
        // looked up before the workers start: a lookup by port would also find the clients connected to it
        List<Long> pids = members.stream()
                .map(i -> ProcessFaults.pidOfServerOn(EnsembleRestartScenarios.port(store.cluster.endpoint(i))))
                .toList();
        return run(
                store,
                seed,
                "G9-holder-dead",
                "whole etcd cluster down " + down.toMillis() + " ms, holder JVM killed while down (lease "
                        + ConsensusStores.Etcd.LEASE.toMillis() + " ms)",
                "etcd:"
                        + String.join(
                                "+", members.stream().map(store.cluster::name).toList()),
                down,
                () -> {
                    EnsembleRestartScenarios.killAtOnce(pids);
                    members.forEach(store.cluster::kill);
                },
                () -> EnsembleRestartScenarios.restartEtcdMembers(store, members));
    }

    private static CheckReport run(
            Store store,
            long seed,
            String id,
            String title,
            String target,
            Duration down,
            Runnable kill,
            Runnable restart)
            throws InterruptedException {
        if (down.compareTo(Duration.ofSeconds(1)) < 0) {
            throw new IllegalArgumentException("down must be 1 s or more to kill the holder within it: " + down);
        }
        try (Scenario s = new Scenario(id, title, "tier2", store, seed)) {
            List<String> names = List.of("c1", "c2", "c3");
            List<WorkerProcess> workers = new ArrayList<>();
            for (String c : names) {
                workers.add(Tier1Scenarios.slowWorker(s, c, Timing.seconds(30).plus(down), 1000));
            }
            for (WorkerProcess w : workers) {
                w.awaitLine("READY", Timing.seconds(60));
            }
            Timing.sleep(Duration.ofMillis(1500));
            String holder = s.awaitHolder(names, Timing.seconds(20));
            s.note(holder + " holds; killing every member");
            s.effect(Effect.HOLDER_DOWN);
            long killed = System.nanoTime();
            Fault crash = Fault.start("crash", target, down, kill, restart, s.faultLog());
            Timing.sleep(Duration.ofMillis(300));
            ProcessFaults.kill(workers.get(names.indexOf(holder)).pid(), holder, s.faultLog());
            s.effect(Effect.NONE);
            if (!crash.awaitHealed(down.plusSeconds(150))) {
                throw new AssertionError(target + " not back within " + down.plusSeconds(150));
            }
            crash.heal(); // throws the restart's failure, if any
            long back = System.nanoTime();
            s.measure("outageMillis", (back - killed) / 1_000_000);
            s.note("every member serves again, " + (back - killed) / 1_000_000 + " ms after the kill");
            long grant = EnsembleRestartScenarios.awaitGrantAfter(s, back, Timing.seconds(40));
            s.measure("firstGrantAfterBackMillis", grant);
            if (grant < 0) {
                throw new AssertionError("no survivor got the lock within 40 s of the cluster being back");
            }
            s.endWorkloads();
            s.probe(List.of("probe"), store.expiry().plusSeconds(5));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(10)));
            return s.finish(
                    Scenario.expect(Tier1Scenarios.must(store, S1, S3, L3, L4, LIN), Tier1Scenarios.doc(store, L1)));
        }
    }
}
