package io.distlock.safety;

import static io.distlock.testkit.history.Property.L1;
import static io.distlock.testkit.history.Property.L3;
import static io.distlock.testkit.history.Property.L4;
import static io.distlock.testkit.history.Property.L6;
import static io.distlock.testkit.history.Property.LIN;
import static io.distlock.testkit.history.Property.S1;
import static io.distlock.testkit.history.Property.S2;
import static io.distlock.testkit.history.Property.S3;

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
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * etcd scenarios about waiting and lease lengths (FAULTS.md section 4.5): E5, a compaction past the revisions the
 * waiters' watches have seen, and E7, leases shorter than etcd's whole seconds.
 */
final class EtcdWaitScenarios {
    private EtcdWaitScenarios() {}

    private static final List<String> CLIENTS = List.of("c1", "c2", "c3");
    private static final Pattern REVISION = Pattern.compile("\"revision\":(\\d+)");
    private static final Pattern LEASE = Pattern.compile("\"lease\":(\\d+)");
    private static final Pattern GRANTED = Pattern.compile("granted with TTL\\((\\d+)s\\)");

    /**
     * E5: three worker JVMs, each holding for 1.2 s and waiting up to 20 s, so two of them wait on the lock all the
     * time. Every 0.4 to 0.8 s the nemesis writes a key outside the scenario's prefix and compacts etcd to the newest
     * revision; every other time it also resets the connections of a client that waits, so that jetcd re-creates that
     * client's watch from the last revision it saw, which the compaction has removed (etcd answers "compacted"). No
     * wait may hang: every wait ends with the lock (no "busy" answer), the lock is never idle while asked for (L6 is a
     * MUST here), and every S and L property holds.
     */
    static CheckReport e5CompactionWhileWaiting(ConsensusStores.Etcd store, long seed) throws InterruptedException {
        return e5CompactionWhileWaiting(store, seed, false);
    }

    /** E5; {@code broken}: every client a {@link BrokenLockClient} (scenario E5-BROKEN, which must fail). */
    static CheckReport e5CompactionWhileWaiting(ConsensusStores.Etcd store, long seed, boolean broken)
            throws InterruptedException {
        String id = broken ? "E5-BROKEN" : "E5";
        try (Scenario s = new Scenario(id, "compaction while waiters wait", "tier2", store, seed)) {
            SplittableRandom random = new SplittableRandom(seed);
            Duration run = Timing.seconds(16);
            Duration wait = Timing.seconds(20);
            // the watch's failures (etcd's "compacted" answer among them) are logged at debug level: counted below
            Map<String, String> debug =
                    Map.of("JAVA_TOOL_OPTIONS", "-Dorg.slf4j.simpleLogger.log.io.distlock.etcd.EtcdWatches=debug");
            List<WorkerProcess> workers = new ArrayList<>();
            for (String c : CLIENTS) {
                workers.add(
                        s.worker(c, "w1-slow", spec(s, c, true, broken), 1, run, wait, Duration.ofMillis(1200), debug));
            }
            for (WorkerProcess w : workers) {
                w.awaitLine("READY", Timing.seconds(60));
            }
            String filler = "e5-filler/" + Long.toHexString(seed & 0xFFFFF);
            long end = System.nanoTime() + run.toNanos() - Duration.ofSeconds(3).toNanos();
            int compactions = 0;
            int resets = 0;
            long compactedTo = 0;
            while (System.nanoTime() - end < 0) {
                for (int i = 0; i < 5; i++) {
                    String out = store.cluster.etcdctl("put", filler, Integer.toString(i), "-w", "json");
                    Matcher m = REVISION.matcher(out);
                    if (m.find()) {
                        compactedTo = Long.parseLong(m.group(1));
                    }
                }
                store.cluster.etcdctl("compact", Long.toString(compactedTo));
                compactions++;
                s.note("compacted to revision " + compactedTo);
                if (compactions % 2 == 0) {
                    Optional<String> holder = s.holder(CLIENTS);
                    List<String> waiters = new ArrayList<>(CLIENTS);
                    holder.ifPresent(waiters::remove);
                    String victim = waiters.get(random.nextInt(waiters.size()));
                    List<Fault> faults = new ArrayList<>();
                    for (FaultProxy p : s.proxies(victim)) {
                        faults.add(p.reset(Duration.ofMillis(200)));
                    }
                    for (Fault f : faults) {
                        f.awaitHealed(Duration.ofSeconds(5));
                    }
                    resets++;
                }
                Timing.sleep(Duration.ofMillis(400 + random.nextInt(400)));
            }
            store.cluster.etcdctl("del", filler);
            s.measure("compactions", compactions);
            s.measure("waiterResets", resets);
            s.endWorkloads();
            long compactedWatches = workers.stream()
                    .flatMap(w -> w.lines().stream())
                    .filter(l -> l.contains("ompacted"))
                    .count();
            s.measure("compactedWatchLines", compactedWatches);
            s.note("worker log lines naming a compaction: " + compactedWatches);
            long busy = History.load(s.dir).client().stream()
                    .filter(e -> e.f() == ClientEvent.Op.ACQUIRE && e.type() == ClientEvent.Type.FAIL)
                    .count();
            s.measure("waitsEndedBusy", busy);
            s.probe(List.of("probe"), store.expiry().plusSeconds(3));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
            CheckReport r = s.finish(Scenario.expect(List.of(S1, S2, S3, L3, L4, L6, LIN), List.of()));
            if (busy > 0) {
                throw new AssertionError(busy + " waits of up to " + wait + " ended without the lock (a hung waiter)");
            }
            return r;
        }
    }

    /**
     * E7: leases that are not whole seconds. Part one, fixed leases of 1.5 s and 0.9 s: c1 takes the lock and then
     * neither renews nor releases (a stopped holder), checking its hold every 20 ms, while c2 waits for the lock with
     * the same lease. etcd counts whole seconds, at least its minimum TTL; the TTL it granted c1's key (read back with
     * {@code etcdctl lease timetolive}) must be at least the lease c1 believes in, so c1's checks say "lost" before
     * etcd lets c2 in (S1), and c1's stale write after that is refused (S3). Part two, a client whose renewed lease is
     * 0.9 s (c3, proxied) holds while its connection is blackholed; c4 takes over once etcd has expired the shared
     * lease; c3's checks must have said "lost" by then (S1).
     */
    static CheckReport e7ShortLeases(ConsensusStores.Etcd store, long seed) throws InterruptedException {
        return e7ShortLeases(store, seed, false);
    }

    /** E7; {@code broken}: every client a {@link BrokenLockClient} (scenario E7-BROKEN, which must fail). */
    static CheckReport e7ShortLeases(ConsensusStores.Etcd store, long seed, boolean broken)
            throws InterruptedException {
        String id = broken ? "E7-BROKEN" : "E7";
        try (Scenario s = new Scenario(id, "sub-second and non-integer leases", "tier2", store, seed);
                FencedResourceClient resource =
                        new FencedResourceClient("127.0.0.1", s.resource.port(), Duration.ofSeconds(5))) {
            RecordedLock l1 = new RecordedLock(
                    s.client("c1", spec(s, "c1", false, broken)).lock(s.key()), s.history("c1"));
            RecordedLock l2 = new RecordedLock(
                    s.client("c2", spec(s, "c2", false, broken)).lock(s.key()), s.history("c2"));
            List<String> tooShort = new ArrayList<>();
            for (long millis : new long[] {1500, 900, 1500, 900}) {
                Duration lease = Duration.ofMillis(millis);
                RecordedHold h1 = l1.tryAcquire(Tier1Scenarios.WAIT, lease)
                        .orElseThrow(() -> new AssertionError("c1 got no hold"));
                OptionalLong read = resource.read(h1);
                long granted = grantedTtlSeconds(store, s.prefix);
                s.note("lease " + millis + " ms: etcd granted TTL " + granted + " s");
                s.measure("grantedTtlSecondsFor" + millis + "ms", granted);
                if (granted * 1000 < millis) {
                    tooShort.add(millis + " ms lease on a " + granted + " s etcd lease");
                }
                AtomicBoolean believing = new AtomicBoolean(true);
                Thread checker = new Thread(() -> {
                    while (h1.check()) {
                        Timing.sleep(Duration.ofMillis(20));
                    }
                    believing.set(false);
                });
                checker.start();
                s.effect(Effect.HOLDER_DOWN);
                s.faultLog().record("stop renewing and releasing (" + millis + " ms lease)", "c1", true);
                Optional<RecordedHold> h2 = l2.tryAcquire(Timing.seconds(10), lease);
                s.note("c2 " + (h2.isPresent() ? "took over" : "got no hold") + "; c1 still believing: "
                        + believing.get());
                if (h2.isPresent() && h2.get().check()) {
                    OptionalLong v = resource.read(h2.get());
                    if (v.isPresent() && h2.get().check()) {
                        var written = resource.write(h2.get(), v.getAsLong() + 1);
                    }
                }
                checker.join(Timing.seconds(10).toMillis());
                s.faultLog().record("stop renewing and releasing (" + millis + " ms lease)", "c1", false);
                s.effect(Effect.NONE);
                if (read.isPresent()) {
                    var stale = resource.write(h1, read.getAsLong() + 1); // refused by the fence
                }
                var lost = h1.release();
                h2.ifPresent(RecordedHold::release);
            }
            // part one, stopped: the holder is a worker JVM stopped (SIGSTOP) until just after etcd's TTL, so only
            // etcd can end its hold; when it resumes, its first check must say lost, as c2 holds by then
            int n = 0;
            for (long millis : new long[] {1500, 900}) {
                String p = "h" + ++n;
                WorkerProcess holder = s.worker(
                        p,
                        "hold-fixed",
                        spec(s, p, false, broken),
                        1,
                        Timing.seconds(30),
                        Tier1Scenarios.WAIT,
                        Duration.ofMillis(millis));
                holder.awaitLine("HELD", Timing.seconds(60));
                long granted = grantedTtlSeconds(store, s.prefix);
                s.note("stopped holder, lease " + millis + " ms: etcd granted TTL " + granted + " s");
                if (granted * 1000 < millis) {
                    tooShort.add(millis + " ms lease on a " + granted + " s etcd lease (stopped holder)");
                }
                s.effect(Effect.HOLDER_DOWN);
                Fault stopped =
                        ProcessFaults.pause(holder.pid(), p, Duration.ofMillis(granted * 1000 + 800), s.faultLog());
                s.effect(Effect.NONE);
                Optional<RecordedHold> h2 = l2.tryAcquire(Timing.seconds(10));
                s.note("c2 " + (h2.isPresent() ? "took over" : "got no hold") + " from the stopped " + p);
                long until = System.nanoTime() + Timing.seconds(10).toNanos();
                while (h2.isPresent()
                        && System.nanoTime() - until < 0
                        && !holder.lines().contains("LOST")) {
                    var valid = h2.get().check();
                    Timing.sleep(Duration.ofMillis(20));
                }
                stopped.awaitHealed(Timing.seconds(10));
                if (h2.isPresent() && h2.get().check()) {
                    OptionalLong v = resource.read(h2.get());
                    if (v.isPresent() && h2.get().check()) {
                        var written = resource.write(h2.get(), v.getAsLong() + 1);
                    }
                }
                holder.awaitLine("DONE", Timing.seconds(30));
                h2.ifPresent(RecordedHold::release);
            }
            // part two: a renewed lease of 0.9 s, its holder cut off
            String spec3 = Clients.with(spec(s, "c3", true, broken), "lease", "900");
            RecordedLock l3 = new RecordedLock(s.client("c3", spec3).lock(s.key()), s.history("c3"));
            RecordedLock l4 = new RecordedLock(
                    s.client("c4", Clients.with(spec(s, "c4", false, broken), "lease", "900"))
                            .lock(s.key()),
                    s.history("c4"));
            for (int round = 0; round < 2; round++) {
                RecordedHold h3 =
                        l3.tryAcquire(Timing.seconds(5)).orElseThrow(() -> new AssertionError("c3 got no hold"));
                Timing.sleep(Duration.ofMillis(1200)); // a few renewals
                Thread checker = new Thread(() -> {
                    while (h3.check()) {
                        Timing.sleep(Duration.ofMillis(20));
                    }
                });
                checker.start();
                s.effect(Effect.HOLDER_DOWN);
                List<Fault> faults = new ArrayList<>();
                for (FaultProxy p : s.proxies("c3")) {
                    faults.add(p.blackhole(Duration.ofSeconds(5)));
                }
                s.effect(Effect.NONE);
                Optional<RecordedHold> h4 = l4.tryAcquire(Timing.seconds(10));
                s.note("c4 " + (h4.isPresent() ? "took over" : "got no hold") + " from the cut-off c3");
                h4.ifPresent(RecordedHold::check);
                for (Fault f : faults) {
                    f.awaitHealed(Duration.ofSeconds(15));
                }
                checker.join(Timing.seconds(10).toMillis());
                var lost = h3.release();
                h4.ifPresent(RecordedHold::release);
            }
            s.probe(List.of("c5"), store.expiry().plusSeconds(3));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
            CheckReport r = s.finish(Scenario.expect(List.of(S1, S2, S3, L1, L3, L4, LIN), List.of()));
            if (!tooShort.isEmpty()) {
                throw new AssertionError("etcd kept a hold for less than the client believes: " + tooShort);
            }
            return r;
        }
    }

    private static String spec(Scenario s, String process, boolean proxied, boolean broken) {
        String spec = s.spec(process, proxied);
        return broken ? Clients.with(spec, "broken", "true") : spec;
    }

    /** The TTL etcd granted the lease of the one key under {@code prefix}. */
    private static long grantedTtlSeconds(ConsensusStores.Etcd store, String prefix) {
        String kvs = store.cluster.etcdctl("get", "--prefix", prefix, "-w", "json");
        Matcher lease = LEASE.matcher(kvs);
        if (!lease.find()) {
            throw new AssertionError("no key with a lease under " + prefix + ": " + kvs);
        }
        String ttl = store.cluster.etcdctl("lease", "timetolive", Long.toHexString(Long.parseLong(lease.group(1))));
        Matcher m = GRANTED.matcher(ttl);
        if (!m.find()) {
            throw new AssertionError("etcdctl lease timetolive said: " + ttl);
        }
        return Long.parseLong(m.group(1));
    }
}
