package io.distlock.safety;

import static io.distlock.testkit.history.Property.L3;
import static io.distlock.testkit.history.Property.L4;
import static io.distlock.testkit.history.Property.LIN;
import static io.distlock.testkit.history.Property.S1;
import static io.distlock.testkit.history.Property.S3;

import io.distlock.testkit.Timing;
import io.distlock.testkit.fault.ClockFaults;
import io.distlock.testkit.fault.Fault;
import io.distlock.testkit.history.CheckReport;
import io.distlock.testkit.history.Property;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Tier-2 scenarios on servers of the suite's own, which the machine's shared servers cannot be used for: a database
 * killed and restarted under load (J4 of FAULTS.md, G9 on the databases), and server wall clocks stepped under load
 * (J5 on the databases, K2 on ZooKeeper). Each runs the fenced-counter workload of {@link
 * Tier2StoreScenarios#underLoad} (a slow holder c1 and two quick clients) and prints its fault schedule.
 */
final class ServerFaultScenarios {
    private ServerFaultScenarios() {}

    /**
     * J4: the database is killed (SIGKILL, with every process it started) while holds are taken, and started again
     * with its data after {@code downtime}. In the lock-table mode a hold is a committed row and the token a
     * committed counter, both durable, so every property must hold. Under session locks the restart ends every
     * session and so every hold at once, and a holder believes in its hold until its next check finds the session
     * gone: S1 (and LIN) are DOC, the fence must still lose nothing.
     */
    static CheckReport j4DatabaseRestart(JdbcStores.Database store, DatabaseServer server, long seed, Duration downtime)
            throws InterruptedException {
        return j4DatabaseRestart(store, server, seed, downtime, false);
    }

    /** As J4, with {@code graceful} a clean stop (id {@code J4-stop}, see {@link DatabaseServer#stop()}) instead. */
    static CheckReport j4DatabaseRestart(
            JdbcStores.Database store, DatabaseServer server, long seed, Duration downtime, boolean graceful)
            throws InterruptedException {
        boolean sessionLocks = !store.mode.equals("TABLE");
        return Tier2StoreScenarios.underLoad(
                store,
                seed,
                graceful ? "J4-stop" : "J4",
                graceful
                        ? "database stopped cleanly and restarted with its data"
                        : "database killed (SIGKILL) and restarted with its data",
                Timing.seconds(14),
                s -> {
                    String target = server.db.name().toLowerCase(java.util.Locale.ROOT) + ":" + server.port;
                    s.note((graceful ? "stopping " : "crashing ") + server + " for " + downtime.toMillis() + " ms");
                    Fault f = Fault.start(
                            graceful ? "stop" : "crash",
                            target,
                            downtime,
                            graceful ? server::stop : server::kill9,
                            () -> server.restart(Timing.seconds(60)),
                            s.faultLog());
                    f.awaitHealed(Timing.seconds(90));
                    s.note("restarted " + target + " (pid " + server.pid() + ")");
                },
                sessionLocks ? Tier1Scenarios.must(store, S3, L3, L4) : Tier1Scenarios.must(store, S1, S3, L3, L4, LIN),
                sessionLocks ? Tier1Scenarios.doc(store, S1, LIN) : Tier1Scenarios.doc(store));
    }

    /**
     * J5: the database server's wall clock jumps an hour forward for 4 s, back to the true time, then an hour back for
     * 4 s (libfaketime, changed at run time), while the monotonic clock runs on. The lock table's {@code expires_at}
     * is the database's clock: a forward jump ends every lease at once, so another client may take a lock its holder
     * still believes in (S1 and LIN DOC, as FAULTS.md says; the fence must lose nothing). Session locks do not read
     * the clock: every property must hold.
     */
    static CheckReport j5DatabaseClockJumps(JdbcStores.Database store, ClockFaults.FakeClock clock, long seed)
            throws InterruptedException {
        boolean sessionLocks = !store.mode.equals("TABLE");
        return Tier2StoreScenarios.underLoad(
                store,
                seed,
                "J5",
                "database server's wall clock jumps +-1 h",
                Timing.seconds(16),
                s -> clockSteps(s, List.of(clock), seed),
                sessionLocks ? Tier1Scenarios.must(store, S1, S3, L3, L4, LIN) : Tier1Scenarios.must(store, S3, L3, L4),
                sessionLocks ? Tier1Scenarios.doc(store) : Tier1Scenarios.doc(store, S1, LIN));
    }

    /**
     * K2: the wall clocks of the ZooKeeper servers jump: the leader's an hour forward, a follower's an hour back, then
     * all three forward at once (libfaketime on each server JVM; their monotonic clocks run on). ZooKeeper measures
     * sessions and leader timeouts with its elapsed-time clock, so every property must hold.
     */
    static CheckReport k2ZooKeeperClockJumps(
            ConsensusStores.ZooKeeper store, List<ClockFaults.FakeClock> clocks, long seed)
            throws InterruptedException {
        return Tier2StoreScenarios.underLoad(
                store,
                seed,
                "K2",
                "ZooKeeper servers' wall clocks jump +-1 h",
                Timing.seconds(16),
                s -> {
                    int leader = store.ensemble.leader();
                    int follower = (leader + 1) % clocks.size();
                    s.note("leader is member " + leader + ", follower " + follower);
                    SplittableRandom random = new SplittableRandom(seed);
                    List<Fault> faults = new ArrayList<>();
                    faults.add(clocks.get(Math.max(0, leader))
                            .jump(Duration.ofHours(1), Duration.ofSeconds(4), s.faultLog()));
                    Timing.sleep(Duration.ofMillis(1000 + random.nextInt(1000)));
                    faults.add(clocks.get(follower).jump(Duration.ofHours(-1), Duration.ofSeconds(4), s.faultLog()));
                    for (Fault f : faults) {
                        f.awaitHealed(Duration.ofSeconds(15));
                    }
                    Timing.sleep(Duration.ofMillis(1000 + random.nextInt(1000)));
                    faults.clear();
                    for (ClockFaults.FakeClock c : clocks) {
                        faults.add(c.jump(Duration.ofHours(1), Duration.ofSeconds(3), s.faultLog()));
                    }
                    for (Fault f : faults) {
                        f.awaitHealed(Duration.ofSeconds(15));
                    }
                },
                Tier1Scenarios.must(store, S1, S3, L3, L4, LIN),
                List.<Property>of());
    }

    /** Forward an hour for 4 s, back to the true time, a pause, then back an hour for 4 s: on every clock at once. */
    private static void clockSteps(Scenario s, List<ClockFaults.FakeClock> clocks, long seed)
            throws InterruptedException {
        SplittableRandom random = new SplittableRandom(seed);
        for (Duration offset : List.of(Duration.ofHours(1), Duration.ofHours(-1))) {
            List<Fault> faults = new ArrayList<>();
            for (ClockFaults.FakeClock c : clocks) {
                faults.add(c.jump(offset, Duration.ofSeconds(4), s.faultLog()));
            }
            for (Fault f : faults) {
                f.awaitHealed(Duration.ofSeconds(15));
            }
            Timing.sleep(Duration.ofMillis(1500 + random.nextInt(1000)));
        }
    }
}
