package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.internal.EngineConfig;
import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.HandOff;
import io.distlock.spi.HandsOff;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.Lease;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import io.distlock.spi.QueueOrdered;
import io.distlock.spi.ReportsLoss;
import io.distlock.spi.SessionHolds;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.DefaultACLProvider;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link ZooKeeperLockStore#handOff} at the store level, against a real server: which entry holds afterwards, its
 * token, and how many requests the hand-off cost (counted by the server, per session, through its JMX beans). Stores
 * are built with the ACLs known ({@code raw}: ZooKeeper's own multi) or not (a user's Curator client: Curator's
 * transaction).
 */
class ZooKeeperHandOffIT {
    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final Lease RENEWED = Lease.renewed(LEASE);
    /** Long enough that no ping falls into a measured hand-off (pings go out after a third of it idle). */
    private static final int SESSION_MILLIS = 10_000;

    private TestingServer server;
    private CuratorFramework admin;
    private final List<AutoCloseable> closeAfter = new ArrayList<>();

    private final LockKey key = new LockKey("hand/off");
    private final OwnerId a = new OwnerId("x:t1");
    private final OwnerId b = new OwnerId("x:t2");
    private final OwnerId c = new OwnerId("y:t1");
    private final OwnerId d = new OwnerId("x:t3");

    /** The spare tokens the engine's claims ask for by default: more than the store reserves. */
    private static final int ASK = EngineConfig.DEFAULT_HAND_OFF_LIMIT;

    /** The claim of {@code owner} for the lock, as the engine makes it. */
    private Claim lock(OwnerId owner) {
        return Claim.lock(key, owner, RENEWED, ASK);
    }

    /** A hold of {@code owner} to release: the store finds the owner's entry by its id, the token plays no part. */
    private HeldClaim held(OwnerId owner) {
        return HeldClaim.lock(key, owner, 0);
    }

    @BeforeEach
    void start() throws Exception {
        server = ZooKeeperTestServers.startServer();
        admin = ZooKeeperTestServers.adminClient(server.getConnectString());
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable x : closeAfter) {
            try {
                x.close();
            } catch (Exception e) {
                // best effort
            }
        }
        admin.close();
        server.close();
    }

    private record Client(ZooKeeperLockStore store, CuratorFramework curator) {
        long session() throws Exception {
            return curator.getZookeeperClient().getZooKeeper().getSessionId();
        }
    }

    private Client client(boolean raw) throws Exception {
        CuratorFramework curator = CuratorFrameworkFactory.builder()
                .connectString(server.getConnectString())
                .sessionTimeoutMs(SESSION_MILLIS)
                .connectionTimeoutMs(5_000)
                .retryPolicy(new RetryOneTime(100))
                .build();
        curator.start();
        assertThat(curator.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
        ZooKeeperLockStore store = new ZooKeeperLockStore(
                curator,
                true,
                raw ? new DefaultACLProvider() : null,
                ZooKeeperLockClient.DEFAULT_ROOT_PATH,
                Duration.ofMillis(SESSION_MILLIS),
                null);
        store.start();
        closeAfter.add(0, store);
        return new Client(store, curator);
    }

    /** Subscribes, and waits for the snapshot that starts the mirror (it wakes the subscriber). */
    private void subscribeAndWaitForTheMirror(Client client) {
        java.util.concurrent.atomic.AtomicInteger wakeUps = new java.util.concurrent.atomic.AtomicInteger();
        closeAfter.add(0, client.store().subscribe(key, wakeUps::incrementAndGet));
        io.distlock.testkit.Eventually.within(
                io.distlock.testkit.Timing.seconds(5), "woken by the snapshot", () -> wakeUps.get() >= 1);
    }

    /** The entries of the lock in queue order, as "owner@token" (the token of a grant of the entry, from its czxid). */
    private List<String> queue() throws Exception {
        String lockPath = ZooKeeperTestServers.lockPath(key.name());
        List<String> children;
        try {
            children = new ArrayList<>(admin.getChildren().forPath(lockPath));
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
        children.sort(Comparator.comparing(n -> n.substring(n.length() - 10)));
        List<String> out = new ArrayList<>();
        for (String child : children) {
            Stat stat = new Stat();
            byte[] owner = admin.getData().storingStatIn(stat).forPath(ZKPaths.makePath(lockPath, child));
            out.add(new String(owner, StandardCharsets.UTF_8) + "@" + ZooKeeperLockStore.tokenOf(stat.getCzxid()));
        }
        return out;
    }

    private static String at(OwnerId owner, long token) {
        return owner.value() + "@" + token;
    }

    /** Requests the server received on this session so far (pings included, hence the long session timeout). */
    private static long requests(Client client) throws Exception {
        String session = "0x" + Long.toHexString(client.session());
        MBeanServer mbeans = ManagementFactory.getPlatformMBeanServer();
        for (ObjectName name : mbeans.queryNames(new ObjectName("org.apache.ZooKeeperService:*"), null)) {
            if (session.equals(name.getKeyProperty("name3"))) {
                return (Long) mbeans.getAttribute(name, "PacketsReceived");
            }
        }
        throw new AssertionError("no connection bean for session " + session);
    }

    private static long acquired(Attempt attempt) {
        assertThat(attempt).isInstanceOf(Attempt.Acquired.class);
        assertThat(((Attempt.Acquired) attempt).spareTokens())
                .as("tokens reserved for successions")
                .isEqualTo(ZooKeeperLockStore.SPARE_TOKEN_CAP);
        return ((Attempt.Acquired) attempt).fencingToken();
    }

    /**
     * A queued owner's attempt after another client's release: with the queue mirrored, the engine tries when the
     * deletion's event wakes it, which may come after the release's answer; so try until granted.
     */
    private long acquiredOnceWoken(Client client, OwnerId owner) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        for (; ; ) {
            Attempt attempt = client.store().tryAcquire(lock(owner), true);
            if (attempt instanceof Attempt.Acquired || System.nanoTime() - deadline > 0) {
                return acquired(attempt);
            }
            Thread.sleep(5);
        }
    }

    private static long granted(HandOff answer) {
        assertThat(answer).isInstanceOf(HandOff.Granted.class);
        assertThat(((HandOff.Granted) answer).spareTokens())
                .as("tokens reserved for successions")
                .isEqualTo(ZooKeeperLockStore.SPARE_TOKEN_CAP);
        return ((HandOff.Granted) answer).fencingToken();
    }

    private void assertHolds(Client client, OwnerId owner, long token) {
        assertThat(client.store().renew(List.of(HeldClaim.lock(key, owner, token)), LEASE))
                .as("the hold of %s is renewable", owner.value())
                .isEmpty();
        assertThat(client.store().inspect(key).orElseThrow().owner()).isEqualTo(owner.value());
        assertThat(client.store().inspect(key).orElseThrow().fencingToken()).isEqualTo(token);
    }

    @Test
    void abilities_queueOrdered_sessionHolds_handsOff_reportsLoss() throws Exception {
        assertThat(client(true).store())
                .isInstanceOf(QueueOrdered.class)
                .isInstanceOf(SessionHolds.class)
                .isInstanceOf(HandsOff.class)
                .isInstanceOf(ReportsLoss.class);
    }

    @Test
    void kinds_everyKind_available_oneWhenFree_zeroWhileHeldOrWaitedFor() throws Exception {
        Client x = client(true);
        Client y = client(true);
        assertThat(x.store().kinds())
                .containsExactlyInAnyOrder(Claim.Kind.LOCK, Claim.Kind.READ_WRITE_LOCK, Claim.Kind.SEMAPHORE);
        assertThat(x.store().available(key, Claim.Kind.LOCK, 1)).isEqualTo(1);
        long token = acquired(x.store().tryAcquire(lock(a), false));
        assertThat(y.store().tryAcquire(lock(c), true)).isInstanceOf(Attempt.Busy.class);
        assertThat(y.store().available(key, Claim.Kind.LOCK, 1)).isZero();
        assertThat(x.store().release(held(a))).isTrue();
        assertThat(acquiredOnceWoken(y, c)).isGreaterThan(token);
        assertThat(x.store().available(key, Claim.Kind.LOCK, 1)).isZero();
        assertThat(y.store().release(held(c))).isTrue();
        assertThat(x.store().available(key, Claim.Kind.LOCK, 1)).isEqualTo(1);
    }

    @ParameterizedTest(name = "raw multi: {0}")
    @ValueSource(booleans = {true, false})
    void handOff_toAnOwnerWithoutEntry_grantsAGreaterToken_inOneRequest(boolean raw) throws Exception {
        Client x = client(raw);
        long token = acquired(x.store().tryAcquire(lock(a), false));
        OwnerId giver = a;
        OwnerId taker = b;
        for (int i = 0; i < 3; i++) {
            long before = requests(x);
            long next = granted(x.store().handOff(lock(taker), giver));
            long cost = requests(x) - before;
            // Curator's transaction drops the Stat that carries the token: one read more
            assertThat(cost).as("requests for one hand-off").isEqualTo(raw ? 1 : 2);
            assertThat(next)
                    .as("beyond the giver's spare tokens")
                    .isGreaterThan(token + ZooKeeperLockStore.SPARE_TOKEN_CAP);
            assertThat(queue()).containsExactly(at(taker, next));
            assertHolds(x, taker, next);
            assertThat(x.store().renew(List.of(HeldClaim.lock(key, giver, token)), LEASE))
                    .as("the giver's hold is gone")
                    .hasSize(1);
            token = next;
            OwnerId t = giver;
            giver = taker;
            taker = t;
        }
        assertThat(x.store().release(held(taker)))
                .as("the last giver holds nothing")
                .isFalse();
        assertThat(x.store().release(held(giver))).isTrue();
        assertThat(admin.checkExists().forPath(ZooKeeperTestServers.lockPath(key.name())))
                .as("the receiver's entry was alone: its release deletes the lock node too")
                .isNull();
        assertThat(acquired(x.store().tryAcquire(lock(a), false))).isGreaterThan(token);
    }

    /**
     * After successions the hold is kept under the owner that acquired it, and that owner may be the next to wait:
     * the engine then hands the hold from that owner to itself, which must be a fresh grant (its spare tokens were
     * given out), not a wait for its own entry.
     */
    @ParameterizedTest(name = "subscribed: {0}")
    @ValueSource(booleans = {true, false})
    void handOff_toTheOwnerTheHoldIsKeptUnder_grantsAFreshEntry(boolean subscribed) throws Exception {
        Client x = client(true);
        if (subscribed) {
            subscribeAndWaitForTheMirror(x);
        }
        long token = acquired(x.store().tryAcquire(lock(a), false));
        long next = granted(x.store().handOff(lock(a), a));
        assertThat(next).as("beyond the spare tokens").isGreaterThan(token + ZooKeeperLockStore.SPARE_TOKEN_CAP);
        assertThat(queue()).containsExactly(at(a, next));
        assertHolds(x, a, next);
        assertThat(x.store().release(held(a))).isTrue();
        assertThat(queue()).isEmpty();
    }

    /**
     * An entry is granted once: an owner whose hold ended without the store being told (lost, presumed lost after a
     * suspended connection, or passed on by successions) and that tries again gets a new entry and a greater token,
     * never the old one's again, which would repeat a token or undercut a successor's.
     */
    @Test
    void attempt_ofAnOwnerWhoseEntryWasGranted_makesANewEntry_withAGreaterToken() throws Exception {
        Client x = client(true);
        long token = acquired(x.store().tryAcquire(lock(a), false));
        long again = acquired(x.store().tryAcquire(lock(a), false));
        assertThat(again).isGreaterThan(token + ZooKeeperLockStore.SPARE_TOKEN_CAP);
        assertThat(queue()).containsExactly(at(a, again));
        assertThat(x.store().release(held(a))).isTrue();
        assertThat(queue()).isEmpty();
    }

    /**
     * Spare tokens are the engine's policy: a grant (an acquire, a hand-off to a new entry, a hand-off to a queued
     * receiver) reserves what its claim asks, up to the 15 that the czxid * 16 arithmetic allows; the token is a
     * multiple of 16 whatever the ask.
     */
    @ParameterizedTest(name = "ask {0}")
    @ValueSource(ints = {0, 3, 15, 16, 1000})
    void grants_reserveTheSpareTokensTheClaimAsks_upToTheCap(int ask) throws Exception {
        Client x = client(true);
        int expected = Math.min(ask, ZooKeeperLockStore.SPARE_TOKEN_CAP);
        Attempt attempt = x.store().tryAcquire(Claim.lock(key, a, RENEWED, ask), false);
        assertThat(attempt).isInstanceOf(Attempt.Acquired.class);
        Attempt.Acquired acquired = (Attempt.Acquired) attempt;
        assertThat(acquired.spareTokens()).as("reserved by the acquire").isEqualTo(expected);
        assertThat(acquired.fencingToken() % (ZooKeeperLockStore.SPARE_TOKEN_CAP + 1))
                .isZero();
        HandOff toNew = x.store().handOff(Claim.lock(key, b, RENEWED, ask), a);
        assertThat(toNew).isInstanceOf(HandOff.Granted.class);
        assertThat(((HandOff.Granted) toNew).spareTokens())
                .as("reserved by the hand-off")
                .isEqualTo(expected);
        assertThat(x.store().tryAcquire(Claim.lock(key, d, RENEWED, ask), true)).isInstanceOf(Attempt.Busy.class);
        HandOff toQueued = x.store().handOff(Claim.lock(key, d, RENEWED, ask), b);
        assertThat(toQueued).isInstanceOf(HandOff.Granted.class);
        assertThat(((HandOff.Granted) toQueued).spareTokens())
                .as("reserved by the hand-off to a queued receiver")
                .isEqualTo(expected);
        assertThat(queue()).containsExactly(at(d, ((HandOff.Granted) toQueued).fencingToken()));
        assertThat(x.store().release(held(d))).isTrue();
    }

    /**
     * The engine ends a hold it found lost with abandonHold: only the entry with that hold's token, never a newer one
     * of the same owner, which after successions may be acquiring again already (a plain abandon by owner would
     * delete that owner's new hold).
     */
    @Test
    void abandonHold_endsOnlyTheLostHoldsEntry_notANewerOneOfTheSameOwner() throws Exception {
        Client x = client(true);
        long lost = acquired(x.store().tryAcquire(lock(a), false));
        long again = acquired(x.store().tryAcquire(lock(a), false)); // its attempt ended the old entry itself
        x.store().abandonHold(HeldClaim.lock(key, a, lost));
        assertThat(queue()).containsExactly(at(a, again));
        assertHolds(x, a, again);
        x.store().abandonHold(HeldClaim.lock(key, a, again));
        assertThat(queue()).isEmpty();
    }

    @ParameterizedTest(name = "raw multi: {0}")
    @ValueSource(booleans = {true, false})
    void handOff_whenTheGiverDoesNotHold_isNotHeld_andChangesNothing(boolean raw) throws Exception {
        Client x = client(raw);
        assertThat(x.store().handOff(lock(b), a)).isEqualTo(HandOff.notHeld());
        assertThat(queue()).isEmpty();

        long token = acquired(x.store().tryAcquire(lock(a), false));
        String lockPath = ZooKeeperTestServers.lockPath(key.name());
        for (String child : admin.getChildren().forPath(lockPath)) {
            admin.delete().forPath(ZKPaths.makePath(lockPath, child)); // an operator's force unlock
        }
        assertThat(x.store().handOff(lock(b), a)).isEqualTo(HandOff.notHeld());
        assertThat(queue()).as("no entry made for the receiver").isEmpty();
        assertThat(x.store().release(held(a))).isFalse();
        assertThat(acquired(x.store().tryAcquire(lock(b), false))).isGreaterThan(token);
    }

    @ParameterizedTest(name = "subscribed: {0}")
    @ValueSource(booleans = {true, false})
    void handOff_behindAnotherClientsEntry_isQueued_andGrantsFollowTheQueue(boolean subscribed) throws Exception {
        Client x = client(true);
        Client y = client(true);
        if (subscribed) {
            subscribeAndWaitForTheMirror(x); // the mirror decides, not a read
        }
        long ta = acquired(x.store().tryAcquire(lock(a), false));
        assertThat(y.store().tryAcquire(lock(c), true)).isInstanceOf(Attempt.Busy.class);
        long tc = Long.parseLong(queue().get(1).substring(c.value().length() + 1));

        assertThat(x.store().handOff(lock(b), a)).isEqualTo(HandOff.queued());
        List<String> q = queue();
        assertThat(q).hasSize(2);
        assertThat(q.get(0)).isEqualTo(at(c, tc));
        assertThat(q.get(1)).startsWith(b.value() + "@");
        long tb = Long.parseLong(q.get(1).substring(b.value().length() + 1));
        assertThat(x.store().release(held(a))).as("the giver's hold ended").isFalse();
        assertThat(x.store().tryAcquire(lock(b), true)).isInstanceOf(Attempt.Busy.class);

        assertThat(acquired(y.store().tryAcquire(lock(c), true))).isEqualTo(tc).isGreaterThan(ta);
        assertThat(y.store().release(held(c))).isTrue();
        assertThat(acquiredOnceWoken(x, b))
                .as("the receiver is granted its own entry, after the owner queued ahead of it")
                .isEqualTo(tb)
                .isGreaterThan(tc);
        assertHolds(x, b, tb);

        // a receiver queued by a hand-off that gives up leaves no node behind
        assertThat(y.store().tryAcquire(lock(c), true)).isInstanceOf(Attempt.Busy.class);
        assertThat(x.store().handOff(lock(d), b)).isEqualTo(HandOff.queued());
        assertThat(queue()).hasSize(2).last().asString().startsWith(d.value() + "@");
        x.store().abandon(lock(d));
        assertThat(queue()).hasSize(1).first().asString().startsWith(c.value() + "@");
        assertThat(acquired(y.store().tryAcquire(lock(c), true))).isGreaterThan(tb);
        assertThat(y.store().release(held(c))).isTrue();
        assertThat(queue()).isEmpty();
    }

    @Test
    void handOff_wakesNoLocalWaiter_whileAnotherClientsReleaseDoes() throws Exception {
        Client x = client(true);
        Client y = client(true);
        java.util.concurrent.atomic.AtomicInteger wakeUps = new java.util.concurrent.atomic.AtomicInteger();
        closeAfter.add(0, x.store().subscribe(key, wakeUps::incrementAndGet));
        io.distlock.testkit.Eventually.within(
                io.distlock.testkit.Timing.seconds(5), "woken by the snapshot", () -> wakeUps.get() == 1);
        long token = acquired(x.store().tryAcquire(lock(a), false));
        for (int i = 0; i < 3; i++) {
            token = granted(x.store().handOff(lock(i % 2 == 0 ? b : a), i % 2 == 0 ? a : b));
        }
        assertThat(x.store().release(held(b))).isTrue(); // a release of this client: wakes (once)
        long c1 = acquired(y.store().tryAcquire(lock(c), false));
        assertThat(c1).isGreaterThan(token);
        int before = wakeUps.get();
        assertThat(y.store().release(held(c))).isTrue();
        io.distlock.testkit.Eventually.within(
                io.distlock.testkit.Timing.seconds(5),
                "woken by the other client's release",
                () -> wakeUps.get() > before);
        // events come in order, so all are in: the hand-offs (and the lock node's deletion) woke nobody, each
        // release woke once
        assertThat(wakeUps.get()).as("wake-ups after the snapshot's").isEqualTo(1 + 2);
    }

    @Test
    void queuedAttempt_onALockNodeTheMirrorKnows_makesNoDoomedCreate() throws Exception {
        Client x = client(true);
        java.util.concurrent.atomic.AtomicInteger wakeUps = new java.util.concurrent.atomic.AtomicInteger();
        closeAfter.add(0, x.store().subscribe(key, wakeUps::incrementAndGet));
        io.distlock.testkit.Eventually.within(
                io.distlock.testkit.Timing.seconds(5), "woken by the snapshot", () -> wakeUps.get() == 1);
        acquired(x.store().tryAcquire(lock(a), true));
        for (int i = 0; i < 3; i++) {
            int seen = wakeUps.get();
            assertThat(x.store().release(held(a))).isTrue();
            io.distlock.testkit.Eventually.within(
                    io.distlock.testkit.Timing.seconds(5), "the release seen", () -> wakeUps.get() > seen);
            assertThat(admin.checkExists().forPath(ZooKeeperTestServers.lockPath(key.name())))
                    .as("with a local subscriber, the lock node stays")
                    .isNotNull();
            long before = requests(x);
            acquired(x.store().tryAcquire(lock(a), true));
            assertThat(requests(x) - before)
                    .as("requests of an attempt: the entry's create only")
                    .isEqualTo(1);
        }
        assertThat(x.store().release(held(a))).isTrue();
    }

    @ParameterizedTest(name = "subscribed: {0}")
    @ValueSource(booleans = {true, false})
    void handOff_toAnOwnerAlreadyQueued_grantsItsEntry_orLeavesItQueued(boolean subscribed) throws Exception {
        Client x = client(true);
        Client y = client(true);
        if (subscribed) {
            subscribeAndWaitForTheMirror(x);
        }
        long ta = acquired(x.store().tryAcquire(lock(a), false));
        assertThat(x.store().tryAcquire(lock(b), true)).isInstanceOf(Attempt.Busy.class);
        long tb = Long.parseLong(queue().get(1).substring(b.value().length() + 1));

        long before = requests(x);
        assertThat(granted(x.store().handOff(lock(b), a)))
                .as("the token of the receiver's own entry")
                .isEqualTo(tb)
                .isGreaterThan(ta);
        if (subscribed) {
            assertThat(requests(x) - before)
                    .as("requests with the queue mirrored")
                    .isEqualTo(1);
        }
        assertThat(queue()).containsExactly(at(b, tb));
        assertHolds(x, b, tb);

        // another client's entry ahead of the receiver's: the hold ends, the receiver keeps waiting
        assertThat(y.store().tryAcquire(lock(c), true)).isInstanceOf(Attempt.Busy.class);
        assertThat(x.store().tryAcquire(lock(d), true)).isInstanceOf(Attempt.Busy.class);
        List<String> q = queue();
        assertThat(q).hasSize(3);
        long tc = Long.parseLong(q.get(1).substring(c.value().length() + 1));
        long td = Long.parseLong(q.get(2).substring(d.value().length() + 1));
        assertThat(x.store().handOff(lock(d), b)).isEqualTo(HandOff.queued());
        assertThat(queue()).containsExactly(at(c, tc), at(d, td));
        assertThat(acquired(y.store().tryAcquire(lock(c), true))).isEqualTo(tc);
        assertThat(y.store().release(held(c))).isTrue();
        assertThat(acquiredOnceWoken(x, d)).isEqualTo(td);
        assertThat(x.store().release(held(d))).isTrue();
        assertThat(queue()).isEmpty();
    }
}
