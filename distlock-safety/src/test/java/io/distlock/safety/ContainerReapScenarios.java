package io.distlock.safety;

import static io.distlock.testkit.history.Property.L3;
import static io.distlock.testkit.history.Property.L4;
import static io.distlock.testkit.history.Property.LIN;
import static io.distlock.testkit.history.Property.S1;
import static io.distlock.testkit.history.Property.S2;
import static io.distlock.testkit.history.Property.S3;

import io.distlock.testkit.Timing;
import io.distlock.testkit.fault.Fault;
import io.distlock.testkit.fault.StoreFaults;
import io.distlock.testkit.history.CheckReport;
import io.distlock.testkit.history.FencedResourceClient;
import io.distlock.testkit.history.RecordedHold;
import io.distlock.testkit.history.RecordedLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.data.Stat;

/**
 * Z5 of FAULTS.md: the lock's container node is deleted between acquisitions, so its children's sequence numbers
 * start again from zero, while the fencing tokens (derived from the entries' {@code czxid}) must keep rising.
 *
 * <p>The scenario watches the tree with a client of its own, directly connected, and runs rounds of two shapes:
 *
 * <ul>
 *   <li><b>alone</b>: c1 takes the lock alone (a new container, entry sequence 0) and releases; its release deletes
 *       the entry and the container in one transaction.
 *   <li><b>handed on</b>: c1 takes the lock alone, c2 queues behind it (sequence 1), c1 releases, c2 is granted and
 *       releases. c2's entry was not alone, so its release leaves the container empty, and the scenario waits until
 *       the leader's container reaper deletes it.
 *   <li><b>expired</b>: c3 takes the lock alone and its connections are blackholed past the session timeout, so the
 *       server expires the session and deletes the entry: the container is left empty, and only the leader's reaper
 *       (every {@link ZooKeeperEnsemble#CONTAINER_CHECK_MILLIS}) deletes it. The scenario sees it empty, then gone.
 * </ul>
 *
 * <p>Each grant's entry is read while it is held: its sequence number and its {@code czxid}, which must be the token
 * divided by 16 (the token is the czxid, not the suffix). The scenario fails unless every round ended with the
 * container gone and the next round's container was a new one (a greater {@code czxid}), unless the reaper deleted a
 * container after a session expiry and a lone release deleted one, and unless some grant's sequence number was not
 * above the one before it (a suffix token would have gone back there); S2 then judges the tokens the clients saw.
 */
final class ContainerReapScenarios {
    private ContainerReapScenarios() {}

    private static final Duration WAIT = Duration.ofSeconds(10);

    /** One grant as the tree showed it while held. */
    private record Grant(String process, long token, long entryCzxid, int sequence, long containerCzxid) {}

    /** The lock's container: its path, its stat, and its children (entries) in sequence order. */
    private record Container(String path, Stat stat, List<String> children) {}

    static CheckReport z5ContainerDeleted(ConsensusStores.ZooKeeper store, long seed) throws Exception {
        try (Scenario s = new Scenario("Z5", "container parent deleted between acquisitions", "tier2", store, seed);
                CuratorFramework admin = CuratorFrameworkFactory.newClient(
                        store.ensemble.connectString(), 10_000, 5_000, new RetryOneTime(200));
                FencedResourceClient resource =
                        new FencedResourceClient(Workload.RESOURCE_HOST, s.resource.port(), Duration.ofSeconds(5))) {
            admin.start();
            if (!admin.blockUntilConnected(20, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the observer cannot reach the ensemble");
            }
            String locks = s.prefix + "/locks";
            RecordedLock l1 = new RecordedLock(s.client("c1", true).lock(s.key()), s.history("c1"));
            RecordedLock l2 = new RecordedLock(s.client("c2", true).lock(s.key()), s.history("c2"));
            RecordedLock l3 = new RecordedLock(s.client("c3", true).lock(s.key()), s.history("c3"));
            s.note("container reaper every " + ZooKeeperEnsemble.CONTAINER_CHECK_MILLIS + " ms");
            List<Grant> grants = new ArrayList<>();
            List<Long> containers = new ArrayList<>();
            int libraryDeleted = 0;
            int reaped = 0;
            int leftAfterRelease = 0;
            long longestReapMillis = 0;
            String[] shapes = {"handed-on", "expired", "alone", "handed-on", "alone", "expired", "handed-on"};
            for (int round = 0; round < shapes.length; round++) {
                s.note("round " + round + ": " + shapes[round]);
                if (shapes[round].equals("alone")) {
                    RecordedHold h1 = l1.tryAcquire(WAIT).orElseThrow(() -> new AssertionError("c1 got no hold"));
                    grants.add(observe(admin, locks, "c1", h1));
                    containers.add(grants.get(grants.size() - 1).containerCzxid());
                    increment(resource, h1);
                    boolean releasedOk = h1.release();
                    Optional<Container> after = container(admin, locks);
                    if (after.isEmpty()) {
                        libraryDeleted++;
                        s.note("container gone with c1's lone release (ok " + releasedOk + ")");
                    } else {
                        s.note("container left after c1's lone release (ok " + releasedOk + ")");
                        var unusedMillis = awaitReaped(admin, locks, after.get(), s);
                        leftAfterRelease++;
                    }
                } else if (shapes[round].equals("handed-on")) {
                    RecordedHold h1 = l1.tryAcquire(WAIT).orElseThrow(() -> new AssertionError("c1 got no hold"));
                    grants.add(observe(admin, locks, "c1", h1));
                    containers.add(grants.get(grants.size() - 1).containerCzxid());
                    increment(resource, h1);
                    CompletableFuture<Optional<RecordedHold>> second = CompletableFuture.supplyAsync(() -> {
                        try {
                            return l2.tryAcquire(WAIT);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            return Optional.empty();
                        }
                    });
                    awaitChildren(admin, locks, 2, Duration.ofSeconds(5));
                    var unused = h1.release();
                    RecordedHold h2 = second.get(WAIT.toSeconds() + 5, TimeUnit.SECONDS)
                            .orElseThrow(() -> new AssertionError("c2 got no hold after c1 released"));
                    grants.add(observe(admin, locks, "c2", h2));
                    increment(resource, h2);
                    boolean releasedOk = h2.release();
                    // the library deletes the container with the last entry when it knows the entry is alone;
                    // otherwise the container is left empty for the reaper
                    Optional<Container> after = container(admin, locks);
                    if (after.isEmpty()) {
                        libraryDeleted++;
                        s.note("container gone with c2's release (ok " + releasedOk + ")");
                    } else {
                        s.note("container left after c2's release (ok " + releasedOk + ")");
                        var unusedMillis = awaitReaped(admin, locks, after.get(), s);
                        leftAfterRelease++;
                    }
                } else {
                    RecordedHold h3 = l3.tryAcquire(WAIT).orElseThrow(() -> new AssertionError("c3 got no hold"));
                    grants.add(observe(admin, locks, "c3", h3));
                    containers.add(grants.get(grants.size() - 1).containerCzxid());
                    increment(resource, h3);
                    Fault f = StoreFaults.zooKeeperExpireSessions(
                            s.proxies("c3"), ConsensusStores.ZooKeeper.SESSION, Duration.ofSeconds(1), s.faultLog());
                    long start = System.nanoTime();
                    Container empty = awaitEmpty(admin, locks, Timing.seconds(15));
                    s.note("c3's entry gone with its session after " + (System.nanoTime() - start) / 1_000_000
                            + " ms; the container is empty (cversion "
                            + empty.stat().getCversion() + ")");
                    long reap = awaitReaped(admin, locks, empty, s);
                    reaped++;
                    longestReapMillis = Math.max(longestReapMillis, reap);
                    f.awaitHealed(Duration.ofSeconds(30));
                    f.heal();
                    boolean stillValid = h3.check();
                    s.note("c3 after the expiry: hold " + (stillValid ? "still valid" : "reported lost"));
                    var unused = h3.release();
                }
            }
            s.measure("grants", grants.size());
            s.measure("containersDeletedByRelease", libraryDeleted);
            s.measure("containersLeftAfterRelease", leftAfterRelease);
            s.measure("containersReapedAfterExpiry", reaped);
            s.measure("longestReapMillis", longestReapMillis);
            long sequenceSetbacks = sequenceSetbacks(grants);
            s.measure("sequenceSetbacks", sequenceSetbacks);
            s.note("grants (process token czxid sequence container): " + grants);
            checkObservations(grants, containers, reaped, sequenceSetbacks);
            if (libraryDeleted == 0) {
                throw new AssertionError("no lone holder's release deleted the container");
            }
            s.probe(List.of("c1", "c2", "c3"), store.expiry().plusSeconds(3));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
            return s.finish(Scenario.expect(List.of(S1, S2, S3, L3, L4, LIN), List.of()));
        }
    }

    /**
     * What makes the scenario the one it claims: every container a new one, the reaper seen at work, tokens that are
     * the entries' czxids, and sequence numbers that went back while tokens did not.
     */
    private static void checkObservations(
            List<Grant> grants, List<Long> containers, int reaped, long sequenceSetbacks) {
        for (int i = 1; i < containers.size(); i++) {
            if (containers.get(i) <= containers.get(i - 1)) {
                throw new AssertionError("round " + i + " found container czxid " + containers.get(i)
                        + ", not newer than the round before's " + containers.get(i - 1) + ": " + containers);
            }
        }
        for (Grant g : grants) {
            if (g.token() / 16 != g.entryCzxid()) {
                throw new AssertionError("token " + g.token() + " of " + g.process() + " is not its entry's czxid "
                        + g.entryCzxid() + " times 16 (plus a succession's number)");
            }
        }
        if (reaped == 0) {
            throw new AssertionError("the leader's container reaper deleted no container after a session expired");
        }
        if (sequenceSetbacks == 0) {
            throw new AssertionError("no grant had a sequence number at or below the one before it: " + grants);
        }
    }

    /** Grants whose entry's sequence number is not above the previous grant's: where a suffix token goes back. */
    private static long sequenceSetbacks(List<Grant> grants) {
        long n = 0;
        for (int i = 1; i < grants.size(); i++) {
            if (grants.get(i).sequence() <= grants.get(i - 1).sequence()) {
                n++;
            }
        }
        return n;
    }

    /** A fenced read and write of the counter + 1 under {@code hold}, as the workload does. */
    private static void increment(FencedResourceClient resource, RecordedHold hold) {
        if (hold.check()) {
            OptionalLong v = resource.read(hold);
            if (v.isPresent() && hold.check()) {
                var unused = resource.write(hold, v.getAsLong() + 1);
            }
        }
    }

    /** The grant of {@code hold}: the container's first entry, which must be the holder's. */
    private static Grant observe(CuratorFramework admin, String locks, String process, RecordedHold hold)
            throws Exception {
        Container c = container(admin, locks)
                .orElseThrow(() -> new AssertionError(process + " holds, but there is no container under " + locks));
        if (c.children().isEmpty()) {
            throw new AssertionError(process + " holds, but its container " + c.path() + " is empty");
        }
        String first = c.children().get(0);
        Stat entry = admin.checkExists().forPath(c.path() + "/" + first);
        if (entry == null) {
            throw new AssertionError("entry " + first + " vanished while " + process + " held");
        }
        return new Grant(
                process,
                hold.token(),
                entry.getCzxid(),
                sequenceOf(first),
                c.stat().getCzxid());
    }

    private static int sequenceOf(String entry) {
        return Integer.parseInt(entry.substring(entry.length() - 10));
    }

    /** The lock's container under {@code locks} (the scenario has one lock name), if it exists. */
    private static Optional<Container> container(CuratorFramework admin, String locks) throws Exception {
        if (admin.checkExists().forPath(locks) == null) {
            return Optional.empty();
        }
        List<String> names = admin.getChildren().forPath(locks);
        if (names.size() > 1) {
            throw new AssertionError("more than one lock node under " + locks + ": " + names);
        }
        if (names.isEmpty()) {
            return Optional.empty();
        }
        String path = locks + "/" + names.get(0);
        Stat stat = new Stat();
        try {
            List<String> children =
                    new ArrayList<>(admin.getChildren().storingStatIn(stat).forPath(path));
            children.sort(Comparator.comparingInt(ContainerReapScenarios::sequenceOf));
            return Optional.of(new Container(path, stat, children));
        } catch (org.apache.zookeeper.KeeperException.NoNodeException e) {
            return Optional.empty();
        }
    }

    private static void awaitChildren(CuratorFramework admin, String locks, int count, Duration bound)
            throws Exception {
        long end = System.nanoTime() + bound.toNanos();
        while (System.nanoTime() - end < 0) {
            Optional<Container> c = container(admin, locks);
            if (c.isPresent() && c.get().children().size() >= count) {
                return;
            }
            Timing.sleep(Duration.ofMillis(10));
        }
        throw new AssertionError("the container did not get " + count + " entries within " + bound);
    }

    private static Container awaitEmpty(CuratorFramework admin, String locks, Duration bound) throws Exception {
        long end = System.nanoTime() + bound.toNanos();
        while (System.nanoTime() - end < 0) {
            Optional<Container> c = container(admin, locks);
            if (c.isEmpty()) {
                throw new AssertionError("the container vanished before it was seen empty");
            }
            if (c.get().children().isEmpty()) {
                return c.get();
            }
            Timing.sleep(Duration.ofMillis(20));
        }
        throw new AssertionError("the expired session's entry was still there after " + bound);
    }

    /**
     * Waits until the empty container {@code seen} is gone (the reaper deleted it; nothing else runs meanwhile), at
     * most three check intervals plus 5 s; returns how long it took.
     */
    private static long awaitReaped(CuratorFramework admin, String locks, Container seen, Scenario s) throws Exception {
        if (!seen.children().isEmpty()) {
            throw new AssertionError("the container " + seen.path() + " still has entries: " + seen.children());
        }
        long start = System.nanoTime();
        Duration bound = Duration.ofMillis(3L * ZooKeeperEnsemble.CONTAINER_CHECK_MILLIS + 5000);
        long end = start + bound.toNanos();
        while (System.nanoTime() - end < 0) {
            Optional<Container> c = container(admin, locks);
            if (c.isEmpty()) {
                long took = (System.nanoTime() - start) / 1_000_000;
                s.note("empty container (czxid " + seen.stat().getCzxid() + ") reaped after " + took + " ms");
                return took;
            }
            if (c.get().stat().getCzxid() != seen.stat().getCzxid()
                    || !c.get().children().isEmpty()) {
                throw new AssertionError("the container changed while nobody acquired: " + c.get());
            }
            Timing.sleep(Duration.ofMillis(20));
        }
        throw new AssertionError("the empty container " + seen.path() + " was not reaped within " + bound);
    }
}
