package io.distlock.safety;

import static io.distlock.testkit.history.Property.L3;
import static io.distlock.testkit.history.Property.L4;
import static io.distlock.testkit.history.Property.LIN;
import static io.distlock.testkit.history.Property.S1;
import static io.distlock.testkit.history.Property.S2;
import static io.distlock.testkit.history.Property.S3;

import io.distlock.DistributedLockException;
import io.distlock.LockClient;
import io.distlock.testkit.Timing;
import io.distlock.testkit.fault.ProcessFaults;
import io.distlock.testkit.history.CheckReport;
import io.distlock.testkit.history.FencedResourceClient;
import io.distlock.testkit.history.NemesisEvent.Effect;
import io.distlock.testkit.history.RecordedHold;
import io.distlock.testkit.history.RecordedLock;
import io.distlock.testkit.server.RedisSentinelSet;
import io.distlock.testkit.server.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import org.jspecify.annotations.Nullable;

/**
 * S1 of FAULTS.md 4.2, the unreplicated lock lost at a Sentinel failover, made deterministic: replication from the
 * master is cut before the holder acquires, so its grant (and its fence counter's INCR) reaches no replica; the master
 * is then killed and Sentinel promotes a replica that never saw the grant.
 *
 * <p>Cutting replication without root: the master's {@code default} user loses {@code PSYNC}, {@code SYNC} and {@code
 * REPLCONF} ({@code ACL SETUSER}) and its replica connections are killed ({@code CLIENT KILL TYPE replica}). The
 * replicas reconnect at once and are refused at the handshake, so they keep their data as it was, stay eligible for
 * promotion (their link has been down for far less than Sentinel's limit of ten times {@code down-after}), and every
 * other client of the master, Sentinels and lock clients included, goes on as before. The killed master is started
 * again empty as a replica of the new one before the next round, so the restarted process has the default ACL.
 */
final class SentinelFailoverScenarios {
    /** The holder's fixed lease: longer than a failover, so that it still believes it holds when B acquires. */
    static final Duration HOLD = Duration.ofSeconds(15);

    /** Sentinel starts no failover of a master within twice its failover-timeout (5 s) of the last one. */
    private static final Duration BETWEEN_FAILOVERS = Duration.ofSeconds(11);

    private SentinelFailoverScenarios() {}

    /**
     * S1: {@code rounds} times, on the master M with replicas R1 and R2: c2 takes and releases the lock until its token
     * is above every token seen (replicated to both replicas); replication from M is cut; c1 takes the lock 1 to 3
     * times (the last hold kept, with a fixed lease of {@link #HOLD}), reads the counter; M is killed (SIGKILL);
     * Sentinel promotes R1 or R2; c2 acquires on it, reads and writes; c1, still valid in its own view, writes.
     *
     * <p>Without replica acknowledgements ({@code acks} false), c2's grant is a second hold beside c1's and its token
     * repeats (one unreplicated grant) or regresses below (several) c1's: S1, S2 and LIN are DOC, S3 MUST (the fence
     * refuses c2, whose token is not above c1's, and accepts c1). Every round must show the loss (c2 acquires with a
     * token not above c1's), or the cut did not work and the run fails. With {@code replicaAcks(1, 500 ms)} on both
     * clients, every acquire of c1 during the cut must fail with {@link DistributedLockException} and leave no hold on
     * M (MUST: never "acquired" with fewer than the required acknowledgements); every property is then MUST.
     */
    static CheckReport s1UnreplicatedLock(RedisStores.Sentinel store, long seed, boolean acks, int rounds)
            throws InterruptedException {
        String id = acks ? "S1-acks" : "S1";
        String title = "unreplicated grant, master killed, Sentinel failover"
                + (acks ? " (replicaAcks 1, 500 ms)" : " (no replica acknowledgement)");
        try (Scenario s = new Scenario(id, title, "tier2", store, seed)) {
            LockClient c1 = s.client("c1", spec(s, "c1", acks));
            LockClient c2 = s.client("c2", spec(s, "c2", acks));
            RecordedLock a = new RecordedLock(c1.lock(s.key()), s.history("c1"));
            RecordedLock b = new RecordedLock(c2.lock(s.key()), s.history("c2"));
            SplittableRandom random = new SplittableRandom(seed);
            Outcomes o = new Outcomes();
            long maxToken = 0;
            long lastKill = System.nanoTime() - BETWEEN_FAILOVERS.toNanos();
            try (FencedResourceClient ra =
                            new FencedResourceClient(Workload.RESOURCE_HOST, s.resource.port(), Duration.ofSeconds(5));
                    FencedResourceClient rb = new FencedResourceClient(
                            Workload.RESOURCE_HOST, s.resource.port(), Duration.ofSeconds(5))) {
                for (int round = 0; round < rounds; round++) {
                    awaitSentinelsSeeReplicas(store.set, Timing.seconds(60));
                    int master = store.set.masterPort();
                    maxToken = Math.max(maxToken, advanceFence(s, b, rb, maxToken));
                    awaitReplicated(master, Timing.seconds(10));
                    int grants = 1 + random.nextInt(3);
                    s.note("round " + round + ": master " + master + ", fence at " + maxToken + ", " + grants
                            + " grant(s) of c1 to come during the cut");
                    // the wait comes before the cut, so that c1's hold is fresh when the master dies
                    long wait = BETWEEN_FAILOVERS.toNanos() - (System.nanoTime() - lastKill);
                    if (wait > 0) {
                        Timing.sleep(Duration.ofNanos(wait));
                    }
                    cutReplication(s, master);
                    RecordedHold ha = null;
                    for (int g = 0; g < grants; g++) {
                        try {
                            Optional<RecordedHold> h = a.tryAcquire(Duration.ofSeconds(2), HOLD);
                            if (h.isEmpty()) {
                                throw new AssertionError("c1 found the free lock busy on " + master);
                            }
                            o.acquiredDuringCut++;
                            s.note("c1 acquired with token " + h.get().token() + " on the cut-off master");
                            maxToken = Math.max(maxToken, h.get().token());
                            if (g < grants - 1) {
                                var unused = h.get().release();
                            } else {
                                ha = h.get();
                            }
                        } catch (DistributedLockException e) {
                            o.refusedDuringCut++;
                            s.note("c1's acquire failed: " + e.getMessage());
                        }
                    }
                    if (acks) {
                        o.holdsLeftOnMaster += (int) RedisStores.keys(master, s.prefix).stream()
                                .filter(k -> k.endsWith(":hold"))
                                .count();
                    }
                    OptionalLong va = ha != null && ha.check() ? ra.read(ha) : OptionalLong.empty();
                    s.effect(Effect.HOLD_REMOVED);
                    long killed = System.nanoTime();
                    lastKill = killed;
                    ProcessFaults.kill(ProcessFaults.pidOfServerOn(master), "master:" + master, s.faultLog());
                    s.faultLog().record("cut replication", "master:" + master, false);
                    s.effect(Effect.NONE);
                    int promoted = awaitNewMaster(store.set, master, Timing.seconds(60));
                    o.failoverMillis.add((System.nanoTime() - killed) / 1_000_000);
                    s.note("Sentinel promoted " + promoted);
                    RecordedHold hb = acquireAfterFailover(s, b, Timing.seconds(30));
                    o.failoverToGrantMillis.add((System.nanoTime() - killed) / 1_000_000);
                    maxToken = Math.max(maxToken, hb.token());
                    boolean bWrote = readAndWrite(hb, rb);
                    s.note("c2 acquired on " + promoted + " with token " + hb.token() + "; its write "
                            + (bWrote ? "accepted" : "refused"));
                    if (ha != null) {
                        o.classify(ha.token(), hb.token(), bWrote);
                        if (ha.check() && va.isPresent()) {
                            o.overlaps++;
                            boolean accepted = ra.write(ha, va.getAsLong() + 1);
                            o.staleWritesAccepted += accepted ? 1 : 0;
                            s.note("c1 (token " + ha.token() + "), still valid in its view, wrote while c2 (token "
                                    + hb.token() + ") held: " + (accepted ? "accepted" : "refused"));
                        }
                    } else {
                        o.bWritesAccepted += bWrote ? 1 : 0;
                    }
                    var releasedB = hb.release();
                    if (ha != null) {
                        var releasedA = ha.release();
                    }
                    store.set.restartAsReplica(master);
                    s.note("old master " + master + " back as an empty replica of " + promoted);
                }
            }
            o.record(s, rounds);
            s.probe(List.of("c1", "c2", "c3"), store.expiry().plusSeconds(10));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(5)));
            if (acks) {
                if (o.acquiredDuringCut > 0 || o.holdsLeftOnMaster > 0) {
                    throw new AssertionError("with replicaAcks, c1 was granted " + o.acquiredDuringCut
                            + " hold(s) that no replica acknowledged (" + o.holdsLeftOnMaster
                            + " left on the master)");
                }
                return s.finish(Scenario.expect(List.of(S1, S2, S3, L3, L4, LIN), List.of()));
            }
            if (o.lostHolds != rounds) {
                throw new AssertionError("the cut did not make the grant unreplicated in every round: " + o.lostHolds
                        + " of " + rounds + " rounds lost c1's hold");
            }
            return s.finish(Scenario.expect(List.of(S3, L3, L4), List.of(S1, S2, LIN)));
        }
    }

    private static String spec(Scenario s, String process, boolean acks) {
        String spec = s.spec(process, false);
        return acks ? Clients.with(Clients.with(spec, "replicas", "1"), "replicaTimeout", "500") : spec;
    }

    /** What the rounds showed, counted. */
    private static final class Outcomes {
        int acquiredDuringCut;
        int refusedDuringCut;
        int holdsLeftOnMaster;
        int lostHolds;
        int duplicateTokens;
        int regressedTokens;
        int overlaps;
        int staleWritesAccepted;
        int newHolderWritesRefused;
        int bWritesAccepted;
        final List<Long> failoverMillis = new ArrayList<>();
        final List<Long> failoverToGrantMillis = new ArrayList<>();

        /** c1 held {@code a} on the old master, c2 was granted {@code b} on the promoted replica. */
        void classify(long a, long b, boolean bWrote) {
            if (b <= a) {
                lostHolds++;
            }
            if (b == a) {
                duplicateTokens++;
            } else if (b < a) {
                regressedTokens++;
            }
            newHolderWritesRefused += bWrote ? 0 : 1;
        }

        void record(Scenario s, int rounds) {
            s.measure("rounds", rounds);
            s.measure("acquiredDuringCut", acquiredDuringCut);
            s.measure("refusedDuringCut", refusedDuringCut);
            s.measure("holdsLeftOnMaster", holdsLeftOnMaster);
            s.measure("lostHolds", lostHolds);
            s.measure("duplicateTokens", duplicateTokens);
            s.measure("regressedTokens", regressedTokens);
            s.measure("overlapsSeenByHolder", overlaps);
            s.measure("staleWritesAccepted", staleWritesAccepted);
            s.measure("newHolderWritesRefused", newHolderWritesRefused);
            s.measure("newHolderWritesAccepted", bWritesAccepted);
            s.measure("killToPromotedMillis", failoverMillis.toString());
            s.measure("killToNewGrantMillis", failoverToGrantMillis.toString());
            s.note("outcomes: " + rounds + " rounds, c1 acquired " + acquiredDuringCut + " and was refused "
                    + refusedDuringCut + " time(s) during the cuts, " + lostHolds + " hold(s) lost, "
                    + duplicateTokens + " duplicate and " + regressedTokens + " regressed token(s), " + overlaps
                    + " overlap(s) seen by c1, " + staleWritesAccepted + " of its writes accepted, "
                    + newHolderWritesRefused + " of c2's refused; kill to promotion " + failoverMillis
                    + " ms, to c2's grant " + failoverToGrantMillis + " ms");
        }
    }

    /** c2 takes and releases the lock, with a fenced write each, until its token is above {@code above}. */
    private static long advanceFence(Scenario s, RecordedLock b, FencedResourceClient rb, long above)
            throws InterruptedException {
        long token = 0;
        for (int i = 0; i < 20 && token <= above; i++) {
            RecordedHold h = acquireAfterFailover(s, b, Timing.seconds(30));
            token = h.token();
            var unused = readAndWrite(h, rb);
            var released = h.release();
        }
        if (token <= above) {
            throw new AssertionError("the fence counter did not pass " + above + " in 20 acquisitions");
        }
        return token;
    }

    /** Takes the lock for c2, trying again while the store fails (a reconnect, or a replica not yet attached). */
    private static RecordedHold acquireAfterFailover(Scenario s, RecordedLock b, Duration bound)
            throws InterruptedException {
        long end = System.nanoTime() + bound.toNanos();
        @Nullable String last = null;
        while (System.nanoTime() - end < 0) {
            try {
                Optional<RecordedHold> h = b.tryAcquire(Duration.ofSeconds(5));
                if (h.isPresent()) {
                    return h.get();
                }
                last = "busy";
            } catch (DistributedLockException e) {
                last = e.toString();
                Timing.sleep(Duration.ofMillis(200));
            }
        }
        throw new AssertionError("c2 did not get the lock within " + bound + ": " + last);
    }

    /** Check, read, check, write the value + 1; whether the write was accepted. */
    private static boolean readAndWrite(RecordedHold h, FencedResourceClient r) {
        if (!h.check()) {
            return false;
        }
        OptionalLong v = r.read(h);
        return v.isPresent() && h.check() && r.write(h, v.getAsLong() + 1);
    }

    /** Stops replication from {@code master}: its replicas are disconnected and refused when they reconnect. */
    private static void cutReplication(Scenario s, int master) {
        String acl = RedisServer.command(master, "ACL", "SETUSER", "default", "-psync", "-sync", "-replconf");
        if (!acl.equals("OK")) {
            throw new IllegalStateException("ACL SETUSER on " + master + ": " + acl);
        }
        RedisServer.command(master, "CLIENT", "KILL", "TYPE", "replica");
        long end = System.nanoTime() + Timing.seconds(10).toNanos();
        while (!RedisServer.command(master, "INFO", "replication").contains("connected_slaves:0")) {
            if (System.nanoTime() - end > 0) {
                throw new IllegalStateException("replicas still connected to " + master);
            }
            RedisServer.command(master, "CLIENT", "KILL", "TYPE", "replica");
            Timing.sleep(Duration.ofMillis(50));
        }
        s.faultLog().record("cut replication", "master:" + master, true);
    }

    /** Waits until both replicas have every write {@code master} has made so far. */
    private static void awaitReplicated(int master, Duration bound) {
        String info = RedisServer.command(master, "INFO", "replication");
        long target = field(info, "master_repl_offset");
        long end = System.nanoTime() + bound.toNanos();
        for (; ; ) {
            info = RedisServer.command(master, "INFO", "replication");
            long behind = info.lines()
                    .filter(l -> l.matches("slave\\d+:.*"))
                    .filter(l -> offsetOf(l) < target)
                    .count();
            long online = info.lines().filter(l -> l.matches("slave\\d+:.*")).count();
            if (online == 2 && behind == 0) {
                return;
            }
            if (System.nanoTime() - end > 0) {
                throw new IllegalStateException("replicas of " + master + " not at offset " + target + ": " + info);
            }
            Timing.sleep(Duration.ofMillis(20));
        }
    }

    private static long offsetOf(String slaveLine) {
        for (String part : slaveLine.substring(slaveLine.indexOf(':') + 1).split(",")) {
            if (part.startsWith("offset=")) {
                return Long.parseLong(part.substring("offset=".length()));
            }
        }
        return -1;
    }

    private static long field(String info, String name) {
        return info.lines()
                .filter(l -> l.startsWith(name + ":"))
                .map(l -> Long.parseLong(l.substring(name.length() + 1).strip()))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("no " + name + " in " + info));
    }

    /** Waits until Sentinel names a master other than {@code old} and that node answers ROLE as a master. */
    private static int awaitNewMaster(RedisSentinelSet set, int old, Duration bound) {
        long end = System.nanoTime() + bound.toNanos();
        for (; ; ) {
            int now = set.masterPort();
            if (now != old && RedisServer.command(now, "ROLE").startsWith("master")) {
                return now;
            }
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("no failover within " + bound + " of killing " + old);
            }
            Timing.sleep(Duration.ofMillis(50));
        }
    }

    /**
     * Waits until every Sentinel sees both replicas of the current master as plain, linked replicas with fresh INFO: a
     * replica that came back a moment ago is not yet a candidate for the next promotion.
     */
    private static void awaitSentinelsSeeReplicas(RedisSentinelSet set, Duration bound) {
        long end = System.nanoTime() + bound.toNanos();
        for (int port : set.sentinelPorts()) {
            while (RedisSentinelSet.goodReplicas(port) < 2) {
                if (System.nanoTime() - end > 0) {
                    throw new IllegalStateException("Sentinel on " + port + " does not see 2 good replicas: "
                            + RedisServer.command(port, "SENTINEL", "REPLICAS", RedisSentinelSet.MASTER_NAME));
                }
                Timing.sleep(Duration.ofMillis(200));
            }
        }
    }
}
