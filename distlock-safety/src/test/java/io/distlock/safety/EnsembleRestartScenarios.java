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
import io.distlock.testkit.history.Acquisition;
import io.distlock.testkit.history.CheckReport;
import io.distlock.testkit.history.History;
import io.distlock.testkit.history.NemesisEvent.Effect;
import io.distlock.testkit.server.EtcdServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;

/**
 * Crashes of a whole consensus cluster, or of a majority of it, while a client holds: Z6 of FAULTS.md (the ZooKeeper
 * ensemble down for less and for more than the session timeout) and G9's consensus half (the whole etcd cluster, or
 * the leader and a follower of etcd or ZooKeeper, killed and restarted with their data).
 *
 * <p>Each runs the fenced-counter load of {@link Tier2StoreScenarios#underLoad} (c1 holds 800 ms at a time, c2 and c3
 * are quick), waits until c1 has just taken the lock, and kills the members (SIGKILL) at once; after {@code down} it
 * starts them all again together (no member serves until a majority runs) and waits until they serve. Every MUST
 * property holds: no two believed holders (S1), tokens that only rise (S2: czxid and create revisions survive a
 * restart with the data), nothing lost at the fence (S3), recovery and nothing left (L3, L4). L1 is DOC: nobody can take
 * over while no member serves.
 *
 * <p>What the catalogue asks to measure: session timers restart on the new ZooKeeper leader, and etcd refreshes every
 * lease when a leader is elected, so the hold that was at the head of the queue at the crash may live on after the
 * cluster is back even where its holder gave it up. The scenario records how long the outage lasted ({@code
 * outageMillis}, from the kill to every member serving), when its observer (a client of its own) first read the store
 * after that ({@code observerFirstReadAfterBackMillis}) and when it saw the crash-time hold gone from the head of the
 * queue ({@code crashHoldEndedAfterBackMillis}, an upper bound: no sooner than the first read), when the next grant
 * came ({@code firstGrantAfterBackMillis}), how many holds were in force at the kill ({@code holdsAtCrash}, which must
 * be one or more: the scenario only kills while c1's hold is young), how long their holders still believed in them
 * after the kill ({@code holderBelievedAfterCrashMillis}, 0 if belief ended before it), and whether one kept its hold
 * through the outage ({@code holdKeptThroughOutage}). The members are sent SIGKILL together, before any is waited for.
 */
final class EnsembleRestartScenarios {
    private static final Pattern CREATE_REVISION = Pattern.compile("\"create_revision\":(\\d+)");
    private static final Pattern KEY = Pattern.compile("\"key\":\"([^\"]*)\"");

    private EnsembleRestartScenarios() {}

    /** Z6: every member of the ensemble killed while c1 holds, all restarted with their data after {@code down}. */
    static CheckReport z6EnsembleDown(ConsensusStores.ZooKeeper store, long seed, Duration down, String variant)
            throws InterruptedException {
        return zooKeeperCrash(
                store,
                seed,
                "Z6" + variant,
                "whole ZooKeeper ensemble down " + down.toMillis() + " ms (session "
                        + ConsensusStores.ZooKeeper.SESSION.toMillis() + " ms)",
                true,
                down);
    }

    /** G9 on ZooKeeper: the leader and one follower killed while c1 holds, restarted with their data after 1 s. */
    static CheckReport g9ZooKeeperMajority(ConsensusStores.ZooKeeper store, long seed) throws InterruptedException {
        return g9ZooKeeperMajority(store, seed, Duration.ofSeconds(1), "majority");
    }

    /** G9 on ZooKeeper: the leader and one follower killed while c1 holds, restarted after {@code down}. */
    static CheckReport g9ZooKeeperMajority(ConsensusStores.ZooKeeper store, long seed, Duration down, String variant)
            throws InterruptedException {
        return zooKeeperCrash(
                store,
                seed,
                "G9-" + variant,
                "ZooKeeper leader and a follower killed, restarted after " + down.toMillis() + " ms (session "
                        + ConsensusStores.ZooKeeper.SESSION.toMillis() + " ms)",
                false,
                down);
    }

    private static CheckReport zooKeeperCrash(
            ConsensusStores.ZooKeeper store, long seed, String id, String title, boolean whole, Duration down)
            throws InterruptedException {
        ZooKeeperEnsemble ensemble = store.ensemble;
        try (CuratorFramework admin =
                CuratorFrameworkFactory.newClient(ensemble.connectString(), 4_000, 2_000, new RetryNTimes(3, 200))) {
            admin.start();
            return Tier2StoreScenarios.underLoad(
                    store,
                    seed,
                    id,
                    title,
                    Timing.seconds(18).plus(down),
                    s -> {
                        List<Integer> members = new ArrayList<>();
                        if (whole) {
                            members.addAll(List.of(0, 1, 2));
                        } else {
                            int leader = ensemble.leader();
                            if (leader < 0) {
                                throw new IllegalStateException("no ZooKeeper leader");
                            }
                            members.add(leader);
                            members.add((leader + 1) % 3);
                            s.note("leader is member " + leader + "; killing it and member " + members.get(1));
                        }
                        StringJoiner target = new StringJoiner("+", "zookeeper:", "");
                        members.forEach(i -> target.add("m" + i));
                        crashAndMeasure(
                                s,
                                target.toString(),
                                down,
                                () -> {
                                    killAtOnce(
                                            members.stream().map(ensemble::pid).toList());
                                    members.forEach(ensemble::kill);
                                },
                                () -> ensemble.restart(members, Duration.ofSeconds(90)),
                                () -> zooKeeperHead(admin, s.prefix));
                    },
                    Tier1Scenarios.must(store, S1, S3, L3, L4, LIN),
                    Tier1Scenarios.doc(store, L1));
        }
    }

    /**
     * A ZooKeeper follower killed while c1 holds, its snapshots and logs deleted, and restarted after 1 s: it rejoins
     * empty and takes a snapshot from the leader. Every MUST property holds (the leader and the other follower keep a
     * quorum with every hold).
     */
    static CheckReport zooKeeperFollowerWiped(ConsensusStores.ZooKeeper store, long seed) throws InterruptedException {
        ZooKeeperEnsemble ensemble = store.ensemble;
        return Tier2StoreScenarios.underLoad(
                store,
                seed,
                "G9-follower-wiped",
                "ZooKeeper follower killed, its data deleted, restarted after 1000 ms",
                Timing.seconds(18),
                s -> {
                    int leader = ensemble.leader();
                    if (leader < 0) {
                        throw new IllegalStateException("no ZooKeeper leader");
                    }
                    int follower = (leader + 1) % 3;
                    s.awaitHolder(List.of("c1"), Timing.seconds(20));
                    s.note("leader is member " + leader + "; killing member " + follower + " and deleting its data");
                    Fault f = Fault.start(
                            "crash-wipe",
                            "zookeeper:m" + follower,
                            Duration.ofSeconds(1),
                            () -> {
                                ensemble.kill(follower);
                                ensemble.wipeData(follower);
                            },
                            () -> ensemble.restart(follower, Duration.ofSeconds(90)),
                            s.faultLog());
                    if (!f.awaitHealed(Duration.ofSeconds(100))) {
                        throw new AssertionError("member " + follower + " not back within 100 s");
                    }
                    f.heal();
                    s.note("member " + follower + " serves again as " + ensemble.mode(follower));
                },
                Tier1Scenarios.must(store, S1, S3, L3, L4, LIN),
                Tier1Scenarios.doc(store));
    }

    /**
     * G9 on etcd: {@code members} (all three, or the leader and one follower) killed while c1 holds, restarted with
     * their data after {@code down}.
     */
    static CheckReport g9EtcdRestart(
            ConsensusStores.Etcd store, long seed, boolean whole, Duration down, String variant)
            throws InterruptedException {
        return Tier2StoreScenarios.underLoad(
                store,
                seed,
                "G9-" + variant,
                (whole ? "whole etcd cluster" : "etcd leader and a follower") + " killed, restarted after "
                        + down.toMillis() + " ms (lease " + ConsensusStores.Etcd.LEASE.toMillis() + " ms)",
                Timing.seconds(18).plus(down),
                s -> {
                    List<Integer> members = new ArrayList<>();
                    if (whole) {
                        members.addAll(List.of(0, 1, 2));
                    } else {
                        int leader = Tier2StoreScenarios.etcdMember(store, Tier2StoreScenarios.etcdLeaderPort(store));
                        members.add(leader);
                        members.add((leader + 1) % 3);
                        s.note("leader is member " + leader + "; killing it and member " + members.get(1));
                    }
                    StringJoiner target = new StringJoiner("+", "etcd:", "");
                    members.forEach(i -> target.add(store.cluster.name(i)));
                    List<Long> pids = members.stream()
                            .map(i -> ProcessFaults.pidOfServerOn(port(store.cluster.endpoint(i))))
                            .toList();
                    crashAndMeasure(
                            s,
                            target.toString(),
                            down,
                            () -> {
                                killAtOnce(pids);
                                members.forEach(store.cluster::kill);
                            },
                            () -> restartEtcdMembers(store, members),
                            () -> etcdHead(store, s.prefix));
                },
                Tier1Scenarios.must(store, S1, S3, L3, L4, LIN),
                Tier1Scenarios.doc(store, L1));
    }

    /** What the store has at the head of the lock's queue: an id that changes when that hold ends. */
    private interface Head {
        Optional<String> now() throws Exception;
    }

    /**
     * Waits until c1 has just taken the lock and the head of the queue is read while that hold is still young, kills,
     * restarts after {@code down}, then measures (see the class comment). Fails unless a hold was in force at the kill.
     */
    private static void crashAndMeasure(
            Scenario s, String target, Duration down, Runnable kill, Runnable restart, Head head)
            throws InterruptedException {
        Optional<String> atCrash = Optional.empty();
        for (int attempt = 0; ; attempt++) {
            s.awaitHolder(List.of("c1"), Timing.seconds(20));
            atCrash = headOrEmpty(head, s);
            // c1 holds 800 ms: kill only if its hold is young enough to outlast the kill
            Optional<Acquisition> young = currentHold(s, "c1")
                    .filter(a ->
                            System.nanoTime() - a.tOk() < Duration.ofMillis(500).toNanos());
            if (young.isPresent() && atCrash.isPresent()) {
                s.note("c1 holds " + young.get().acq() + " (token "
                        + young.get().token() + "); head of the queue: " + atCrash.get());
                break;
            }
            if (attempt == 9) {
                throw new AssertionError("c1's hold was never young when the head was read: ten tries");
            }
        }
        s.effect(Effect.HOLDER_DOWN);
        long killed = System.nanoTime();
        Fault f = Fault.start("crash", target, down, kill, restart, s.faultLog());
        s.effect(Effect.NONE);
        s.note("killing took " + millis(f.startedAt() - killed) + " ms");
        if (!f.awaitHealed(down.plusSeconds(150))) {
            throw new AssertionError(target + " not back within " + down.plusSeconds(150));
        }
        f.heal(); // throws the restart's failure, if any
        long back = System.nanoTime();
        s.measure("outageMillis", millis(back - killed));
        s.note("every member serves again, " + millis(back - killed) + " ms after the kill");
        // the crash-time hold ends when the head of the queue is another entry, or none; the observer reconnects
        // first, so the figure is when it saw the change, an upper bound
        long firstRead = -1;
        long headEnded = -1;
        long end = back + Timing.seconds(30).toNanos();
        while (System.nanoTime() - end < 0) {
            Optional<String> now = headOrEmpty(head, s);
            long t = millis(System.nanoTime() - back);
            if (firstRead < 0) {
                firstRead = t;
                s.note("the observer's first read after the cluster was back: +" + t + " ms");
            }
            if (!now.equals(atCrash)) {
                headEnded = t;
                s.note("the crash-time hold seen ended " + t + " ms after the cluster was back; head now "
                        + now.orElse("(none)"));
                break;
            }
            Timing.sleep(Duration.ofMillis(25));
        }
        s.measure("observerFirstReadAfterBackMillis", firstRead);
        s.measure("crashHoldEndedAfterBackMillis", headEnded);
        long firstGrant = awaitGrantAfter(s, back, Timing.seconds(30));
        s.measure("firstGrantAfterBackMillis", firstGrant);
        // let the holder's next checks and the workload's retries run before judging its belief
        Timing.sleep(Duration.ofSeconds(2));
        holderBelief(s, killed, back);
    }

    /** The latest hold of {@code process} that is granted and neither released nor reported lost. */
    private static Optional<Acquisition> currentHold(Scenario s, String process) {
        return Acquisition.of(History.load(s.dir)).stream()
                .filter(a -> a.ok()
                        && a.tRelease() == null
                        && a.tLost() == null
                        && a.process().equals(process))
                .reduce((a, b) -> b);
    }

    /** Sends SIGKILL to every one of {@code pids} before waiting for any, so that the members die together. */
    static void killAtOnce(List<Long> pids) {
        pids.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
    }

    static int port(String endpoint) {
        return Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
    }

    private static Optional<String> headOrEmpty(Head head, Scenario s) {
        for (int i = 0; i < 20; i++) {
            try {
                return head.now();
            } catch (Exception e) {
                s.note("reading the head failed (" + e + "), trying again");
                Timing.sleep(Duration.ofMillis(200));
            }
        }
        throw new AssertionError("cannot read the head of the queue");
    }

    /** The ms from {@code back} to the first hold any client got after it (-1 if none within {@code bound}). */
    static long awaitGrantAfter(Scenario s, long back, Duration bound) {
        long end = System.nanoTime() + bound.toNanos();
        while (System.nanoTime() - end < 0) {
            Optional<Long> first = Acquisition.of(History.load(s.dir)).stream()
                    .map(Acquisition::tOk)
                    .filter(t -> t != null && t > back)
                    .min(Comparator.naturalOrder());
            if (first.isPresent()) {
                s.note("first grant after the cluster was back: +" + millis(first.get() - back) + " ms");
                return millis(first.get() - back);
            }
            Timing.sleep(Duration.ofMillis(50));
        }
        s.note("no grant within " + bound + " after the cluster was back");
        return -1;
    }

    /**
     * Measures how long the holds held at the kill were still believed in (0 if belief ended before the kill), and
     * whether one outlived the outage; fails unless some hold was in force at the kill.
     */
    private static void holderBelief(Scenario s, long crashed, long back) {
        long believed = 0;
        int held = 0;
        boolean kept = false;
        for (Acquisition a : Acquisition.of(History.load(s.dir))) {
            Long ok = a.tOk();
            boolean heldAtCrash = ok != null
                    && ok < crashed
                    && (a.tRelease() == null || a.tRelease() > crashed)
                    && (a.tLost() == null || a.tLost() > crashed);
            if (!heldAtCrash) {
                continue;
            }
            held++;
            believed = Math.max(believed, millis(a.beliefEnd() - crashed));
            kept |= a.beliefEnd() > back;
            s.note(a.process() + "'s hold " + a.acq() + " (token " + a.token() + ") believed until +"
                    + millis(a.beliefEnd() - crashed) + " ms after the kill"
                    + (a.tLost() == null ? "" : ", reported lost at +" + millis(a.tLost() - crashed) + " ms"));
        }
        if (held == 0) {
            throw new AssertionError("no hold was in force at the kill: the run did not crash under a holder");
        }
        s.measure("holdsAtCrash", held);
        s.measure("holderBelievedAfterCrashMillis", believed);
        s.measure("holdKeptThroughOutage", kept);
    }

    /** The entry with the lowest sequence under the lock's container (the holder's), as {@code path}. */
    private static Optional<String> zooKeeperHead(CuratorFramework admin, String prefix) throws Exception {
        if (!admin.blockUntilConnected(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the observer is not connected");
        }
        String locks = prefix + "/locks";
        if (admin.checkExists().forPath(locks) == null) {
            return Optional.empty();
        }
        for (String lock : admin.getChildren().forPath(locks)) {
            try {
                Optional<String> first = admin.getChildren().forPath(locks + "/" + lock).stream()
                        .min(Comparator.comparing(c -> c.substring(c.length() - 10)));
                if (first.isPresent()) {
                    return Optional.of(locks + "/" + lock + "/" + first.get());
                }
            } catch (org.apache.zookeeper.KeeperException.NoNodeException e) {
                // the container was just deleted
            }
        }
        return Optional.empty();
    }

    /** The key with the lowest create revision under {@code prefix} (the holder's), as {@code key@revision}. */
    private static Optional<String> etcdHead(ConsensusStores.Etcd store, String prefix) {
        String json = EtcdServer.etcdctlAt(
                store.cluster.endpoints(),
                "get",
                "--prefix",
                prefix,
                "--sort-by=CREATE",
                "--order=ASCEND",
                "--limit=1",
                "-w",
                "json");
        Matcher rev = CREATE_REVISION.matcher(json);
        Matcher key = KEY.matcher(json);
        if (!rev.find() || !key.find()) {
            return Optional.empty();
        }
        String name = new String(Base64.getDecoder().decode(key.group(1)), StandardCharsets.UTF_8);
        return Optional.of(name + "@" + rev.group(1));
    }

    /** Starts the killed members together (a lone member of three never becomes healthy) and waits for each. */
    static void restartEtcdMembers(ConsensusStores.Etcd store, List<Integer> members) {
        AtomicReference<RuntimeException> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int i : members) {
            Thread t = new Thread(
                    () -> {
                        try {
                            store.cluster.restart(i);
                        } catch (RuntimeException e) {
                            failure.compareAndSet(null, e);
                        }
                    },
                    "restart-etcd-" + i);
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            try {
                t.join(TimeUnit.SECONDS.toMillis(60));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while restarting etcd", e);
            }
        }
        RuntimeException e = failure.get();
        if (e != null) {
            throw e;
        }
        if (threads.stream().anyMatch(Thread::isAlive)) {
            throw new IllegalStateException("etcd members " + members + " not restarted within 60 s");
        }
    }

    private static long millis(long nanos) {
        return nanos / 1_000_000;
    }
}
