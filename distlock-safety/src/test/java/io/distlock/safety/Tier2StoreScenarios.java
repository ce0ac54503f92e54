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
import io.distlock.testkit.fault.Fault;
import io.distlock.testkit.fault.ProcessFaults;
import io.distlock.testkit.fault.StoreFaults;
import io.distlock.testkit.history.CheckReport;
import io.distlock.testkit.history.NemesisEvent.Effect;
import io.distlock.testkit.history.Property;
import io.distlock.testkit.server.EtcdServer;
import io.distlock.testkit.server.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Tier-2 scenarios that need a particular store: server pauses (G8), crashes and restarts (G9, Z2, E3), session
 * expiry (Z1), lease revocation (E4), and the Redis failovers (Sentinel, Cluster C1 and C2).
 */
final class Tier2StoreScenarios {
    private static final Pattern ETCD_STATUS =
            Pattern.compile("\"Endpoint\":\"[^\"]*:(\\d+)\".*?\"member_id\":(\\d+).*?\"leader\":(\\d+)");

    private Tier2StoreScenarios() {}

    /** W1 on three clients in this JVM (proxied) while {@code fault} runs; the common body of these scenarios. */
    interface FaultStep {
        void run(Scenario s) throws InterruptedException;
    }

    static CheckReport underLoad(
            Store store,
            long seed,
            String id,
            String title,
            Duration run,
            FaultStep fault,
            List<Property> must,
            List<Property> doc)
            throws InterruptedException {
        try (Scenario s = new Scenario(id, title, "tier2", store, seed)) {
            Tier2Scenarios.slowHolderAndOthers(s, run, 800);
            Timing.sleep(Duration.ofSeconds(2));
            fault.run(s);
            s.endWorkloads();
            s.probe(List.of("c1", "c2", "c3"), store.expiry().plusSeconds(5));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(5)));
            return s.finish(Scenario.expect(must, doc));
        }
    }

    /** G8: the server (Redis) or the leader (ZooKeeper, etcd) is stopped for {@code pause}. */
    static CheckReport g8ServerPaused(Store store, long seed, Duration pause, String variant)
            throws InterruptedException {
        return underLoad(
                store,
                seed,
                "G8" + variant,
                "server/leader stopped for " + pause.toMillis() + " ms",
                Timing.seconds(8).plus(pause),
                s -> {
                    long pid = serverPid(store);
                    Fault f = ProcessFaults.pause(pid, "server:" + pid, pause, s.faultLog());
                    f.awaitHealed(pause.plusSeconds(10));
                },
                Tier1Scenarios.must(store, S1, S3, L3, L4, LIN),
                Tier1Scenarios.doc(store));
    }

    /** The pid of the Redis server (the Sentinel set's master), the ZooKeeper leader or the etcd leader. */
    static long serverPid(Store store) {
        if (store instanceof RedisStores.Standalone r) {
            return ProcessFaults.pidOfServerOn(r.server.port());
        }
        if (store instanceof RedisStores.Sentinel r) {
            return ProcessFaults.pidOfServerOn(r.set.masterPort());
        }
        if (store instanceof ConsensusStores.ZooKeeper z) {
            return z.ensemble.pid(z.ensemble.leader());
        }
        if (store instanceof ConsensusStores.Etcd e) {
            return ProcessFaults.pidOfServerOn(etcdLeaderPort(e));
        }
        throw new IllegalArgumentException("no server to pause for " + store);
    }

    static int etcdLeaderPort(ConsensusStores.Etcd e) {
        String json = EtcdServer.etcdctlAt(e.cluster.endpoints(), "endpoint", "status", "-w", "json");
        Matcher m = ETCD_STATUS.matcher(json);
        while (m.find()) {
            if (m.group(2).equals(m.group(3))) {
                return Integer.parseInt(m.group(1));
            }
        }
        throw new IllegalStateException("no etcd leader in " + json);
    }

    static int etcdMember(ConsensusStores.Etcd e, int port) {
        for (int i = 0; i < e.cluster.size(); i++) {
            if (e.cluster.endpoint(i).endsWith(":" + port)) {
                return i;
            }
        }
        throw new IllegalStateException("no member on port " + port);
    }

    /**
     * G9 on a Redis of its own: killed (SIGKILL) while holds are taken, restarted after {@code downtime} with what its
     * persistence kept. With {@code appendfsync always}, or a restart delayed past the lease, holds are safe (MUST);
     * without persistence and back at once, the restarted server forgets the holds and the fence counter (DOC).
     */
    static CheckReport g9RedisRestart(long seed, String variant, Duration downtime, boolean mustSafe, String... args)
            throws InterruptedException {
        try (RedisStores.Standalone store = new RedisStores.Standalone(args)) {
            return underLoad(
                    store,
                    seed,
                    "G9" + variant,
                    "Redis killed and restarted (" + String.join(" ", args) + ", down " + downtime.toMillis() + " ms)",
                    Timing.seconds(10).plus(downtime),
                    s -> {
                        Fault f = ProcessFaults.crash(
                                store.server, new ProcessFaults.Restart(downtime, true), s.faultLog());
                        f.awaitHealed(downtime.plusSeconds(20));
                    },
                    mustSafe ? List.of(S1, S3, L3, L4, LIN) : List.of(S3, L3, L4),
                    mustSafe ? List.of(S2) : List.of(S1, S2, LIN));
        }
    }

    /** Z2 / E3: the leader is killed (SIGKILL) and restarted with its data after 3 s. */
    static CheckReport leaderKilled(Store store, long seed) throws InterruptedException {
        String id = store instanceof ConsensusStores.ZooKeeper ? "Z2" : "E3";
        return underLoad(
                store,
                seed,
                id,
                "leader killed and restarted",
                Timing.seconds(14),
                s -> {
                    Duration down = Duration.ofSeconds(3);
                    Fault f;
                    if (store instanceof ConsensusStores.ZooKeeper z) {
                        int leader = z.ensemble.leader();
                        f = ProcessFaults.crash(
                                z.ensemble.pid(leader),
                                "zk-leader:" + leader,
                                down,
                                () -> z.ensemble.restart(leader, Duration.ofSeconds(60)),
                                s.faultLog());
                    } else {
                        ConsensusStores.Etcd e = (ConsensusStores.Etcd) store;
                        f = ProcessFaults.crash(e.cluster, etcdMember(e, etcdLeaderPort(e)), down, s.faultLog());
                    }
                    f.awaitHealed(Duration.ofSeconds(90));
                },
                List.of(S1, S2, S3, L3, L4, LIN),
                List.of());
    }

    /** Z1: the holder's session expires (its connections silenced past the session timeout). */
    static CheckReport z1SessionExpired(ConsensusStores.ZooKeeper store, long seed) throws InterruptedException {
        return underLoad(
                store,
                seed,
                "Z1",
                "holder's ZooKeeper session expires",
                Timing.seconds(16),
                s -> {
                    s.awaitHolder(List.of("c1"), Timing.seconds(20));
                    s.effect(Effect.HOLDER_DOWN);
                    Fault f = StoreFaults.zooKeeperExpireSessions(
                            s.proxies("c1"), ConsensusStores.ZooKeeper.SESSION, Duration.ofSeconds(1), s.faultLog());
                    s.effect(Effect.NONE);
                    f.awaitHealed(Duration.ofSeconds(30));
                },
                List.of(S1, S2, S3, L1, L3, L4, LIN),
                List.of());
    }

    /** E4: an operator revokes the holder's lease; the holder must be told within one renewal. */
    static CheckReport e4LeaseRevoked(ConsensusStores.Etcd store, long seed) throws InterruptedException {
        return underLoad(
                store,
                seed,
                "E4",
                "etcd lease revoked",
                Timing.seconds(12),
                s -> {
                    for (int i = 0; i < 2; i++) {
                        s.awaitHolder(List.of("c1"), Timing.seconds(20));
                        s.effect(Effect.HOLD_REMOVED);
                        StoreFaults.etcdRevokeLeases(store.cluster.endpoints(), s.prefix, s.faultLog());
                        s.effect(Effect.NONE);
                        Timing.sleep(Duration.ofSeconds(3));
                    }
                },
                List.of(S3, L3, L4, L5),
                List.of(S1, S2, LIN));
    }

    /** Sentinel failover (forced, replication asynchronous) while holds are taken: DOC for S1 and S2. */
    static CheckReport sentinelFailover(RedisStores.Sentinel store, long seed) throws InterruptedException {
        return underLoad(
                store,
                seed,
                "SF",
                "Sentinel failover under load",
                Timing.seconds(25),
                s -> StoreFaults.redisSentinelFailover(store.set, Duration.ofSeconds(60), s.faultLog()),
                List.of(S3, L3, L4),
                List.of(S1, S2, LIN));
    }

    /** C1: a manual (graceful) CLUSTER FAILOVER of the shard that owns the lock, under load. */
    static CheckReport c1ClusterFailover(RedisStores.Cluster store, long seed) throws InterruptedException {
        return underLoad(
                store,
                seed,
                "C1",
                "manual CLUSTER FAILOVER of the lock's shard",
                Timing.seconds(16),
                s -> {
                    int replica = replicaOfShard(store, s.prefix + "{" + s.key() + "}:hold");
                    StoreFaults.redisClusterFailover(replica, false, s.faultLog());
                    long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                    while (!RedisServer.command(replica, "ROLE").startsWith("master") && System.nanoTime() - end < 0) {
                        Timing.sleep(Duration.ofMillis(100));
                    }
                    s.note("replica " + replica + " is "
                            + RedisServer.command(replica, "ROLE").split("\n")[0]);
                },
                List.of(S1, S3, L3, L4, LIN),
                List.of(S2));
    }

    /**
     * C2: the master of the lock's shard is stopped (SIGSTOP) past {@code cluster-node-timeout} (2 s), so the cluster
     * promotes its replica on its own, then continued: it comes back as the new master's replica. Replication is
     * asynchronous, so the newest holds and tokens may not have reached the replica: S1, S2 and LIN are DOC, the fence
     * (S3), recovery (L3) and leftovers (L4) MUST.
     */
    static CheckReport c2AutomaticFailover(RedisStores.Cluster store, long seed) throws InterruptedException {
        return underLoad(
                store,
                seed,
                "C2",
                "the lock's shard master stopped past the node timeout (automatic failover)",
                Timing.seconds(24),
                s -> {
                    String key = s.prefix + "{" + s.key() + "}:hold";
                    int master = masterOfShard(store, key);
                    int replica = replicaOfShard(store, key);
                    Duration stop = Duration.ofSeconds(6);
                    long pid = ProcessFaults.pidOfServerOn(master);
                    s.note("stopping master " + master + " (replica " + replica + ")");
                    Fault f = ProcessFaults.pause(pid, "master:" + master, stop, s.faultLog());
                    f.awaitHealed(stop.plusSeconds(10));
                    long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                    while (!(RedisServer.command(replica, "ROLE").startsWith("master")
                                    && RedisServer.command(master, "ROLE").startsWith("slave"))
                            && System.nanoTime() - end < 0) {
                        Timing.sleep(Duration.ofMillis(200));
                    }
                    s.note("after the stop: " + replica + " is "
                            + RedisServer.command(replica, "ROLE").split("\n")[0] + ", " + master + " is "
                            + RedisServer.command(master, "ROLE").split("\n")[0]);
                },
                List.of(S3, L3, L4),
                List.of(S1, S2, LIN));
    }

    /** The port of the master that owns {@code key}'s slot. */
    static int masterOfShard(RedisStores.Cluster store, String key) {
        String id = masterIdOfShard(store, key);
        for (String line : RedisServer.command(store.cluster.ports().get(0), "CLUSTER", "NODES")
                .split("\n")) {
            String[] f = line.split(" ");
            if (f[0].equals(id)) {
                String addr = f[1].split("@")[0];
                return Integer.parseInt(addr.substring(addr.lastIndexOf(':') + 1));
            }
        }
        throw new IllegalStateException("no master " + id);
    }

    /** The port of a replica of the master that owns {@code key}'s slot. */
    static int replicaOfShard(RedisStores.Cluster store, String key) {
        String masterId = masterIdOfShard(store, key);
        for (String line : RedisServer.command(store.cluster.ports().get(0), "CLUSTER", "NODES")
                .split("\n")) {
            String[] f = line.split(" ");
            if (f[2].contains("slave") && f[3].equals(masterId)) {
                String addr = f[1].split("@")[0];
                return Integer.parseInt(addr.substring(addr.lastIndexOf(':') + 1));
            }
        }
        throw new IllegalStateException("no replica of master " + masterId);
    }

    /** The node id of the master that owns {@code key}'s slot. */
    private static String masterIdOfShard(RedisStores.Cluster store, String key) {
        int any = store.cluster.ports().get(0);
        int slot = Integer.parseInt(RedisServer.command(any, "CLUSTER", "KEYSLOT", key));
        String masterId = null;
        String[] lines = RedisServer.command(any, "CLUSTER", "NODES").split("\n");
        for (String line : lines) {
            String[] f = line.split(" ");
            if (!f[2].contains("master")) {
                continue;
            }
            for (int i = 8; i < f.length; i++) {
                String[] range = f[i].split("-");
                if (range[0].startsWith("[")) {
                    continue;
                }
                int lo = Integer.parseInt(range[0]);
                int hi = range.length > 1 ? Integer.parseInt(range[1]) : lo;
                if (slot >= lo && slot <= hi) {
                    masterId = f[0];
                }
            }
        }
        if (masterId == null) {
            throw new IllegalStateException("no master of slot " + slot);
        }
        return masterId;
    }
}
