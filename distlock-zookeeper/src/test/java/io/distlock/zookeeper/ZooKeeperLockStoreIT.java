package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLock;
import io.distlock.DistributedLockException;
import io.distlock.LockHold;
import io.distlock.LockInfo;
import io.distlock.LockLostException;
import io.distlock.testkit.Eventually;
import io.distlock.testkit.RecordingLockListener;
import io.distlock.testkit.Timing;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.test.TestingServer;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Testable;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What is particular to the ZooKeeper store: the node layout, czxid fencing, name encoding, session and connection
 * loss. Each test gets its own server, since some stop and restart it.
 */
class ZooKeeperLockStoreIT {
    private TestingServer server;
    private CuratorFramework admin;
    private final List<AutoCloseable> closeAfter = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        server = ZooKeeperTestServers.startServer();
        admin = ZooKeeperTestServers.adminClient(server.getConnectString());
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : closeAfter) {
            try {
                c.close();
            } catch (Exception e) {
                // the test may have broken it on purpose
            }
        }
        admin.close();
        server.close();
    }

    private ZooKeeperLockClient client(Duration leaseTime) {
        ZooKeeperLockClient c = ZooKeeperLockClient.builder()
                .connectString(server.getConnectString())
                .sessionTimeout(ZooKeeperTestServers.SESSION_TIMEOUT)
                .connectionTimeout(Duration.ofSeconds(2))
                .leaseTime(leaseTime)
                .build();
        closeAfter.add(0, c);
        return c;
    }

    private ZooKeeperLockClient client() {
        return client(Duration.ofSeconds(30));
    }

    /** A lock client on {@code curator}, a started Curator client of the test's: the lock client does not close it. */
    private ZooKeeperLockClient clientOn(CuratorFramework curator, Duration leaseTime) {
        ZooKeeperLockClient c = ZooKeeperLockClient.builder()
                .curator(curator)
                .leaseTime(leaseTime)
                .build();
        closeAfter.add(0, c);
        return c;
    }

    private List<String> entries(String name) throws Exception {
        try {
            return admin.getChildren().forPath(ZooKeeperTestServers.lockPath(name));
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
    }

    // ---------------------------------------------------------------- layout and fencing

    @Test
    void fencingToken_comesFromTheEntrysCzxid_andGrowsWhenTheLockNodeIsMadeAgain() throws Exception {
        ZooKeeperLockClient c = client();
        DistributedLock lock = c.lock("orders/42");
        String lockPath = ZooKeeperTestServers.lockPath("orders/42");

        LockHold first = lock.acquire();
        List<String> queue = entries("orders/42");
        assertThat(queue).hasSize(1);
        Stat stat = admin.checkExists().forPath(ZKPaths.makePath(lockPath, queue.get(0)));
        assertThat(first.fencingToken())
                .as("the czxid times the spare tokens + 1")
                .isEqualTo(stat.getCzxid() * (ZooKeeperLockStore.SPARE_TOKEN_CAP + 1));
        assertThat(stat.getEphemeralOwner()).as("an ephemeral node").isNotZero();
        assertThat(new String(admin.getData().forPath(lockPath), java.nio.charset.StandardCharsets.UTF_8))
                .as("the lock node keeps the full name")
                .isEqualTo("orders/42");
        first.release();
        assertThat(admin.checkExists().forPath(lockPath))
                .as("an uncontended release deletes the lock node too")
                .isNull();

        LockHold second = lock.acquire(); // a new lock node, whose sequence numbers start again at 0
        assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
        second.release();
    }

    /**
     * Threads of one client take the hold over from each other without a round trip (successions on the spare tokens
     * every grant reserves), which passes another client's queued waiter; but only until the spare tokens run out:
     * the hand-off after them respects the queue, and the other client's token is greater than all of them.
     */
    @Test
    void successions_passAnotherClientsWaiter_onlyWhileTheSpareTokensLast() throws Exception {
        ZooKeeperLockClient x = client();
        ZooKeeperLockClient y = client();
        DistributedLock lx = x.lock("succ");
        lx.lock();
        List<String> order = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Long> tokens = java.util.Collections.synchronizedList(new ArrayList<>());
        order.add("x");
        tokens.add(lx.fencingToken());
        AtomicReference<LockHold> yHold = new AtomicReference<>();
        Thread yWaiter = acquireInThread(y.lock("succ"), yHold);
        Eventually.within(
                Timing.seconds(5), "y queued", () -> entriesQuietly("succ").size() == 2);
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        List<Thread> xs = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Thread t = new Thread(() -> {
                for (int n = 0; n < 100 && !stop.get(); n++) {
                    lx.lock();
                    try {
                        order.add("x");
                        tokens.add(lx.fencingToken());
                    } finally {
                        lx.unlock();
                    }
                }
            });
            t.start();
            xs.add(t);
        }
        for (Thread t : xs) {
            Eventually.within(
                    Timing.seconds(5),
                    "x's threads wait",
                    () -> t.getState() == Thread.State.WAITING || t.getState() == Thread.State.TIMED_WAITING);
        }
        lx.unlock();
        yWaiter.join(Timing.seconds(10).toMillis());
        LockHold yHeld = yHold.get();
        assertThat(yHeld).as("y acquired").isNotNull();
        order.add("y");
        tokens.add(java.util.Objects.requireNonNull(yHeld).fencingToken());
        yHeld.release();
        stop.set(true);
        for (Thread t : xs) {
            t.join(Timing.seconds(10).toMillis());
            assertThat(t.isAlive()).isFalse();
        }
        List<String> before;
        List<Long> seen;
        synchronized (order) {
            before = new ArrayList<>(order.subList(0, order.indexOf("y")));
            seen = new ArrayList<>(tokens);
        }
        assertThat(before)
                .as("x's holds before y's: its grant and at most its spare tokens' worth of successions")
                .hasSizeBetween(2, ZooKeeperLockStore.SPARE_TOKEN_CAP + 1);
        for (int i = 1; i < seen.size(); i++) {
            assertThat(seen.get(i))
                    .as("tokens in the order of the holds: %s", seen)
                    .isGreaterThan(seen.get(i - 1));
        }
        assertThat(entries("succ")).isEmpty();
    }

    @Test
    void queuedRelease_leavesTheLockNodeForTheWaiter_andTokensFollowTheQueue() throws Exception {
        ZooKeeperLockClient a = client();
        ZooKeeperLockClient b = client();
        LockHold held = a.lock("q").acquire();
        AtomicReference<LockHold> next = new AtomicReference<>();
        Thread waiter = acquireInThread(b.lock("q"), next);
        Eventually.within(Timing.seconds(5), "waiter queued", () -> {
            try {
                return entries("q").size() == 2;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        held.release();
        waiter.join(Timing.seconds(5).toMillis());
        assertThat(next.get()).isNotNull();
        assertThat(java.util.Objects.requireNonNull(next.get()).fencingToken()).isGreaterThan(held.fencingToken());
        java.util.Objects.requireNonNull(next.get()).release();
        assertThat(entries("q")).isEmpty();
    }

    @Test
    void names_withPathCharacters_unicode_andLongNames_neverShareANode_andAreListed() throws Exception {
        List<String> names = List.of(
                "a/b",
                "a",
                "b",
                "a%2Fb",
                ".",
                "..",
                "zookeeper",
                "line\nbreak\u0000nul",
                "ünïcødé ✓",
                "{braces}'\"quotes\"",
                "x".repeat(1024),
                "x".repeat(1023) + "y");
        ZooKeeperLockClient c = client();
        List<LockHold> holds = new ArrayList<>();
        for (String name : names) {
            holds.add(c.lock(name).tryAcquire(Duration.ZERO).orElseThrow(() -> new AssertionError("busy: " + name)));
        }
        List<String> nodes = admin.getChildren().forPath(ZooKeeperLockClient.DEFAULT_ROOT_PATH + "/locks");
        assertThat(nodes).hasSize(names.size());
        for (String node : nodes) {
            assertThat(node.length()).isLessThanOrEqualTo(ZkNames.MAX_ESCAPED + 2);
        }
        List<String> listed =
                c.admin().list("", 100).stream().map(LockInfo::name).toList();
        assertThat(listed).containsExactlyInAnyOrderElementsOf(names);
        assertThat(c.admin().list("a", 100).stream().map(LockInfo::name))
                .containsExactlyInAnyOrder("a/b", "a", "a%2Fb");
        LockInfo longOne = c.admin().inspect("x".repeat(1024)).orElseThrow();
        assertThat(longOne.owner()).startsWith(c.clientId());
        assertThat(longOne.remainingLease()).isZero();
        assertThat(longOne.waiters()).isZero();
        for (LockHold h : holds) {
            h.release();
        }
        assertThat(c.admin().list("", 100)).isEmpty();
    }

    @Test
    void forceUnlock_deletesTheHoldersNode_ownerFindsItLost() throws Exception {
        ZooKeeperLockClient owner = client(Duration.ofMillis(600));
        ZooKeeperLockClient operator = client();
        RecordingLockListener listener = new RecordingLockListener();
        DistributedLock lock = owner.lock("forced");
        lock.addListener(listener);
        LockHold hold = lock.acquire();
        LockInfo removed = operator.admin().forceUnlock("forced").orElseThrow();
        assertThat(removed.fencingToken()).isEqualTo(hold.fencingToken());
        assertThat(removed.owner()).startsWith(owner.clientId());
        Eventually.within(
                Timing.seconds(3), "owner told lost", () -> listener.lost().contains(hold.fencingToken()));
        assertThatThrownBy(hold::release).isInstanceOf(LockLostException.class);
        assertThat(operator.admin().forceUnlock("forced")).isEmpty();
    }

    @Test
    void forceRelease_ofOneOwner_endsItsHoldOnly_neitherAnotherOwnersNorAWait() throws Exception {
        String name = "forced/one";
        ZooKeeperLockClient owner = client(Duration.ofMillis(600));
        ZooKeeperLockClient waiter = client();
        ZooKeeperLockClient operator = client();
        RecordingLockListener listener = new RecordingLockListener();
        DistributedLock lock = owner.lock(name);
        lock.addListener(listener);
        LockHold hold = lock.acquire();
        String holder = operator.admin().inspect(name).orElseThrow().owner();
        AtomicReference<LockHold> next = new AtomicReference<>();
        Thread waiting = acquireInThread(waiter.lock(name), next);
        Eventually.within(
                Timing.seconds(5),
                "the waiter queued",
                () -> entriesQuietly(name).size() == 2);
        String waiterNode = entries(name).stream()
                .sorted(java.util.Comparator.comparing(n -> n.substring(n.length() - 10)))
                .toList()
                .get(1);
        String waiterOwner = new String(
                admin.getData().forPath(ZKPaths.makePath(ZooKeeperTestServers.lockPath(name), waiterNode)),
                java.nio.charset.StandardCharsets.UTF_8);

        assertThat(operator.admin().forceRelease(name, operator.clientId() + ":t1"))
                .as("an owner with nothing of the lock")
                .isEmpty();
        assertThat(operator.admin().forceRelease(name, waiterOwner))
                .as("an owner that only waits")
                .isEmpty();
        assertThat(entries(name)).hasSize(2);

        LockInfo removed = operator.admin().forceRelease(name, holder).orElseThrow();
        assertThat(removed.owner()).isEqualTo(holder);
        assertThat(removed.fencingToken()).isEqualTo(hold.fencingToken());
        Eventually.within(
                Timing.seconds(3), "owner told lost", () -> listener.lost().contains(hold.fencingToken()));
        assertThatThrownBy(hold::release).isInstanceOf(LockLostException.class);
        waiting.join(Timing.seconds(10).toMillis());
        LockHold taken = Objects.requireNonNull(next.get(), "the waiter was granted");
        assertThat(taken.fencingToken()).isGreaterThan(hold.fencingToken());
        assertThat(operator.admin().forceRelease(name, holder)).isEmpty();
        taken.release();
        assertThat(entries(name)).isEmpty();
    }

    // ---------------------------------------------------------------- connection and session loss

    @Test
    void timedOutWait_duringConnectionLoss_deletesItsNodeAfterTheReconnect() throws Exception {
        ZooKeeperLockClient holderClient = client();
        ZooKeeperLockClient waiterClient = client();
        LockHold held = holderClient.lock("t").acquire();
        AtomicReference<Object> outcome = new AtomicReference<>();
        CountDownLatch queued = new CountDownLatch(1);
        Thread waiter = new Thread(() -> {
            try {
                queued.countDown();
                outcome.set(waiterClient.lock("t").tryLock(1500, TimeUnit.MILLISECONDS));
            } catch (Throwable e) {
                outcome.set(e);
            }
        });
        waiter.start();
        queued.await();
        Eventually.within(
                Timing.seconds(5), "waiter queued", () -> entriesQuietly("t").size() == 2);
        Timing.sleep(Duration.ofMillis(500)); // parked: the outage hits the wait, not a round trip
        server.stop(); // the wait times out while the client cannot reach ZooKeeper
        waiter.join(Timing.seconds(10).toMillis());
        assertThat(outcome.get()).isEqualTo(Boolean.FALSE);
        server.restart(); // within the session timeout: both sessions survive
        Eventually.within(Timing.seconds(10), "only the holder's node is left", () -> {
            List<String> left = entriesQuietly("t");
            return left.size() <= 1 && left.stream().noneMatch(n -> n.contains(waiterClient.clientId()));
        });
        assertThatThrownBy(held::release)
                .as("the holder's connection was suspended: its hold is presumed lost")
                .isInstanceOf(LockLostException.class);
        Eventually.within(
                Timing.seconds(10), "nothing left", () -> entriesQuietly("t").isEmpty());
    }

    @Test
    void interruptedWait_duringConnectionLoss_deletesItsNodeAfterTheReconnect() throws Exception {
        ZooKeeperLockClient holderClient = client();
        ZooKeeperLockClient waiterClient = client();
        LockHold held = holderClient.lock("i").acquire();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                waiterClient.lock("i").lockInterruptibly();
                thrown.set(new AssertionError("acquired"));
            } catch (Throwable e) {
                thrown.set(e);
            }
        });
        waiter.start();
        Eventually.within(
                Timing.seconds(5), "waiter queued", () -> entriesQuietly("i").size() == 2);
        // let it finish its re-check and park: an interrupt during a round trip is a store failure, not this test
        Timing.sleep(Duration.ofMillis(500));
        server.stop();
        waiter.interrupt();
        waiter.join(Timing.seconds(10).toMillis());
        assertThat(thrown.get()).isInstanceOf(InterruptedException.class);
        server.restart();
        Eventually.within(Timing.seconds(10), "the waiter's node is deleted", () -> entriesQuietly("i").stream()
                .noneMatch(n -> n.contains(waiterClient.clientId())));
        assertThatThrownBy(held::release).isInstanceOf(LockLostException.class);
        Eventually.within(
                Timing.seconds(10), "nothing left", () -> entriesQuietly("i").isEmpty());
    }

    @Test
    void suspendedConnection_marksHoldsLost_withinTheCheckInterval() throws Exception {
        ZooKeeperLockClient c = client(Duration.ofMillis(600));
        RecordingLockListener listener = new RecordingLockListener();
        DistributedLock lock = c.lock("s");
        lock.addListener(listener);
        lock.lock();
        long token = lock.fencingToken();
        long stopped = System.nanoTime();
        server.stop();
        Eventually.within(
                Timing.seconds(3), "listener told lost", () -> listener.lost().contains(token));
        assertThat(System.nanoTime() - stopped).isLessThan(Timing.seconds(3).toNanos());
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        server.restart();
        assertThatThrownBy(lock::unlock).isInstanceOf(LockLostException.class);
        Eventually.within(Timing.seconds(10), "the lost hold's node is deleted", () -> entriesQuietly("s")
                .isEmpty());
        assertThat(lock.tryLock(5, TimeUnit.SECONDS))
                .as("usable after the reconnect")
                .isTrue();
        assertThat(lock.fencingToken()).isGreaterThan(token);
        lock.unlock();
    }

    @Test
    void suspendedConnection_isReportedAtOnce_notAtTheNextCheck() throws Exception {
        serverStopped_holderToldAtOnce(client(Duration.ofSeconds(90)), "suspended-now"); // holds checked every 30 s
    }

    /**
     * Holds {@code name} on {@code c} (a client whose holds are checked far less often than every 5 s), stops the
     * server, asserts the holder is told within 5 s, and restarts the server.
     */
    private void serverStopped_holderToldAtOnce(ZooKeeperLockClient c, String name) throws Exception {
        RecordingLockListener listener = new RecordingLockListener();
        DistributedLock lock = c.lock(name);
        lock.addListener(listener);
        lock.lock();
        long token = lock.fencingToken();
        Timing.sleep(Duration.ofMillis(200));
        server.stop();
        Eventually.within(
                Timing.seconds(5), "listener told lost", () -> listener.lost().contains(token));
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        server.restart();
        assertThatThrownBy(lock::unlock).isInstanceOf(LockLostException.class);
    }

    @Test
    void expiredSession_holdReportedLost_waiterGetsAGreaterToken_noNodesLeft() throws Exception {
        CuratorFramework holderCurator = ZooKeeperTestServers.adminClient(server.getConnectString());
        closeAfter.add(holderCurator);
        ZooKeeperLockClient holderClient = clientOn(holderCurator, Duration.ofMillis(600));
        ZooKeeperLockClient waiterClient = client();
        RecordingLockListener listener = new RecordingLockListener();
        DistributedLock lock = holderClient.lock("e");
        lock.addListener(listener);
        LockHold held = lock.acquire();
        AtomicReference<LockHold> next = new AtomicReference<>();
        Thread waiter = acquireInThread(waiterClient.lock("e"), next);
        Eventually.within(
                Timing.seconds(5), "waiter queued", () -> entriesQuietly("e").size() == 2);

        holderCurator.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();

        Eventually.within(
                Timing.seconds(3), "holder told lost", () -> listener.lost().contains(held.fencingToken()));
        waiter.join(Timing.seconds(10).toMillis());
        assertThat(next.get()).as("the waiter got the lock").isNotNull();
        assertThat(java.util.Objects.requireNonNull(next.get()).fencingToken()).isGreaterThan(held.fencingToken());
        assertThat(held.isValid()).isFalse();
        assertThatThrownBy(held::release).isInstanceOf(LockLostException.class);
        java.util.Objects.requireNonNull(next.get()).release();
        Eventually.within(
                Timing.seconds(10), "no nodes left", () -> entriesQuietly("e").isEmpty());
        assertThat(lock.tryLock())
                .as("the holder's client works on its new session")
                .isTrue();
        lock.unlock();
    }

    /**
     * The holder's handle reports its session expired while the connection is up: what ZooKeeper's
     * injectSessionExpiration does first (Curator injects one itself after a suspension as long as the session
     * timeout), queued alone here so that the connection stays up. Curator answers by closing the handle, which ends
     * the session on the server, and tells its listeners only after that, from its connection-state thread, held up
     * here (in CI such a waiter was granted 103 ms before the holder was told). The store hears of the expiry from the
     * handle, before Curator: the holder is told without Curator's LOST, and the engine's check is under way before
     * the server closes the session; it then races the server's close and the waiter's wake-up, so the order of the
     * two is asserted where a quorum write sets the pace (ZooKeeperClusterIT). Curator's LOST, once it comes, finds
     * the holder's new session connected and must leave its holds alone.
     */
    @Test
    void expiredWhileConnected_curatorsStateThreadHeldUp_holderToldAtOnce_newSessionsHoldOutlivesTheLateLost()
            throws Exception {
        ZooKeeperLockClient holderClient = client(Duration.ofSeconds(90)); // holds checked every 30 s: events tell
        CuratorFramework curator = holderClient.curator();
        StateThreadHeldUp stateThread = StateThreadHeldUp.on(curator);
        RecordingLockListener listener = new RecordingLockListener();
        DistributedLock lock = holderClient.lock("x");
        lock.addListener(listener);
        LockHold held = lock.acquire();
        AtomicReference<LockHold> next = new AtomicReference<>();
        Thread waiter = acquireInThread(client().lock("x"), next);
        Eventually.within(
                Timing.seconds(5), "waiter queued", () -> entriesQuietly("x").size() == 2);

        LockHold again;
        try {
            curator.getZookeeperClient()
                    .getZooKeeper()
                    .getTestable()
                    .queueEvent(
                            new WatchedEvent(Watcher.Event.EventType.None, Watcher.Event.KeeperState.Expired, null));
            Eventually.within(
                    Timing.seconds(2), "holder told lost while Curator's state thread is held up", () -> listener.lost()
                            .contains(held.fencingToken()));
            assertThat(held.isValid()).isFalse();
            assertThatThrownBy(held::release).isInstanceOf(LockLostException.class);
            waiter.join(Timing.seconds(10).toMillis());
            LockHold theirs = Objects.requireNonNull(next.get(), "the waiter got the lock");
            assertThat(theirs.fencingToken()).isGreaterThan(held.fencingToken());
            theirs.release();
            again = lock.acquire(); // in the holder's new session
        } finally {
            stateThread.release();
        }
        // the store's state listener runs before the test's on Curator's thread: once the test has seen LOST, so has
        // the store (the fake blip's RECONNECTED at the start is not enough: it comes before)
        Eventually.within(Timing.seconds(5), "Curator's late LOST delivered, then its RECONNECTED", () -> {
            List<ConnectionState> seen = stateThread.seen();
            return seen.contains(ConnectionState.LOST)
                    && seen.lastIndexOf(ConnectionState.RECONNECTED) > seen.indexOf(ConnectionState.LOST);
        });
        // a late LOST has every hold checked, one round trip to this local server: give it time to end this one if
        // it were going to
        Timing.sleep(Duration.ofSeconds(1));
        assertThat(again.isValid())
                .as("a hold of the new session outlives the old session's late LOST")
                .isTrue();
        again.release(); // would throw LockLostException had the late LOST counted
    }

    /**
     * Curator's reset() of a connected client closes the session (the server deletes its entries at once) with only a
     * Closed event on the old handle, and reports LOST once the new session is up: the holder is told then, not at the
     * next check.
     */
    @Test
    void sessionResetWhileConnected_holderToldAtTheLateLost_notAtTheNextCheck() throws Exception {
        ZooKeeperLockClient c = client(Duration.ofSeconds(90)); // holds checked every 30 s
        RecordingLockListener listener = new RecordingLockListener();
        DistributedLock lock = c.lock("reset");
        lock.addListener(listener);
        LockHold held = lock.acquire();
        long session = c.curator().getZookeeperClient().getZooKeeper().getSessionId();

        c.curator().getZookeeperClient().reset();

        Eventually.within(
                Timing.seconds(5), "listener told lost", () -> listener.lost().contains(held.fencingToken()));
        assertThat(c.curator().getZookeeperClient().getZooKeeper().getSessionId())
                .as("a new session")
                .isNotEqualTo(session);
        assertThatThrownBy(held::release).isInstanceOf(LockLostException.class);
    }

    /**
     * A holder cut off from the server is told as soon as its handle sees the connection drop, not when Curator's
     * connection-state thread gets round to it: the server may expire the session a third of the session timeout
     * later. Through a Curator client given by the user, whose events the store hears through Curator's event listener.
     */
    @Test
    void disconnected_curatorsStateThreadHeldUp_holderToldAtOnce() throws Exception {
        CuratorFramework given = ZooKeeperTestServers.adminClient(server.getConnectString());
        closeAfter.add(given);
        ZooKeeperLockClient c = clientOn(given, Duration.ofSeconds(90)); // holds checked every 30 s: events tell
        StateThreadHeldUp stateThread = StateThreadHeldUp.on(given);
        RecordingLockListener listener = new RecordingLockListener();
        DistributedLock lock = c.lock("cut-off");
        lock.addListener(listener);
        LockHold held = lock.acquire();
        try {
            given.getZookeeperClient().getZooKeeper().getTestable().closeSocket();
            Eventually.within(Timing.seconds(3), "listener told lost", () -> listener.lost()
                    .contains(held.fencingToken()));
            assertThat(held.isValid()).isFalse();
        } finally {
            stateThread.release();
        }
        assertThatThrownBy(held::release).isInstanceOf(LockLostException.class);
    }

    /**
     * Holds up Curator's connection-state thread from the next state change until released, as a slow listener of the
     * application can. A blip that changes nothing gets the thread in: Disconnected and SyncConnected events queued on
     * the handle, whose connection stays up (Curator reports SUSPENDED, RECONNECTED).
     */
    private static final class StateThreadHeldUp implements ConnectionStateListener {
        private final CountDownLatch in = new CountDownLatch(1);
        private final CountDownLatch out = new CountDownLatch(1);
        private final List<ConnectionState> seen = new CopyOnWriteArrayList<>();

        static StateThreadHeldUp on(CuratorFramework curator) throws Exception {
            StateThreadHeldUp held = new StateThreadHeldUp();
            curator.getConnectionStateListenable().addListener(held);
            Testable handle = curator.getZookeeperClient().getZooKeeper().getTestable();
            handle.queueEvent(
                    new WatchedEvent(Watcher.Event.EventType.None, Watcher.Event.KeeperState.Disconnected, null));
            handle.queueEvent(
                    new WatchedEvent(Watcher.Event.EventType.None, Watcher.Event.KeeperState.SyncConnected, null));
            assertThat(held.in.await(Timing.seconds(5).toMillis(), TimeUnit.MILLISECONDS))
                    .as("Curator's connection-state thread held up")
                    .isTrue();
            Eventually.within(Timing.seconds(5), "connected again", () -> curator.getZookeeperClient()
                    .isConnected());
            return held;
        }

        @Override
        public void stateChanged(CuratorFramework client, ConnectionState newState) {
            seen.add(newState);
            if (in.getCount() > 0) {
                in.countDown();
                try {
                    var unused = out.await(Timing.seconds(60).toMillis(), TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        List<ConnectionState> seen() {
            return List.copyOf(seen);
        }

        void release() {
            out.countDown();
        }
    }

    // ---------------------------------------------------------------- builder

    @Test
    void givenCurator_isNotClosedByTheClient() throws Exception {
        CuratorFramework mine = ZooKeeperTestServers.adminClient(server.getConnectString());
        closeAfter.add(mine);
        ZooKeeperLockClient c = ZooKeeperLockClient.builder().curator(mine).build();
        DistributedLock lock = c.lock("given");
        lock.lock();
        lock.unlock();
        c.close();
        assertThat(mine.getState()).isEqualTo(CuratorFrameworkState.STARTED);
        assertThat(mine.getZookeeperClient().isConnected()).isTrue();
    }

    /**
     * A namespaced Curator client (usingNamespace) has no event listener to offer: the store hears connection trouble
     * through Curator's connection states alone, still at once, and its nodes go under the namespace.
     */
    @Test
    void givenNamespacedCurator_works_andASuspendedConnectionIsReportedAtOnce() throws Exception {
        CuratorFramework mine = ZooKeeperTestServers.adminClient(server.getConnectString());
        closeAfter.add(mine);
        ZooKeeperLockClient c = clientOn(mine.usingNamespace("app"), Duration.ofSeconds(90)); // checked every 30 s
        try (LockHold unused = c.lock("in-namespace").acquire()) {
            assertThat(admin.getChildren().forPath("/app" + ZooKeeperTestServers.lockPath("in-namespace")))
                    .hasSize(1);
        }
        serverStopped_holderToldAtOnce(c, "namespaced");
    }

    @Test
    void givenCurator_closingTheClient_deletesItsWaitingNodes() throws Exception {
        CuratorFramework mine = ZooKeeperTestServers.adminClient(server.getConnectString());
        closeAfter.add(mine);
        ZooKeeperLockClient holder = client();
        LockHold held = holder.lock("w").acquire();
        ZooKeeperLockClient c = ZooKeeperLockClient.builder().curator(mine).build();
        Thread waiter = new Thread(() -> {
            try {
                var unused = c.lock("w").tryLock(20, TimeUnit.SECONDS);
            } catch (InterruptedException | RuntimeException e) {
                // closed under it
            }
        });
        waiter.start();
        Eventually.within(
                Timing.seconds(5), "waiter queued", () -> entriesQuietly("w").size() == 2);
        c.close();
        waiter.join(Timing.seconds(5).toMillis());
        Eventually.within(
                Timing.seconds(5),
                "the waiter's node is gone",
                () -> entriesQuietly("w").size() == 1);
        held.release();
    }

    @Test
    void builder_rejectsBadSettings() {
        assertThatThrownBy(() -> ZooKeeperLockClient.builder().build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("connectString");
        assertThatThrownBy(() -> ZooKeeperLockClient.builder().connectString(" "))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("connectString");
        assertThatThrownBy(() -> ZooKeeperLockClient.builder().rootPath("no-slash"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no-slash");
        assertThatThrownBy(() -> ZooKeeperLockClient.builder().leaseTime(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaseTime");
        assertThatThrownBy(() -> ZooKeeperLockClient.builder().clientId("a:b"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("a:b");
        assertThatThrownBy(() -> ZooKeeperLockClient.builder().sessionTimeout(Duration.ofDays(365)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("sessionTimeout");
    }

    @Test
    void create_unreachableServer_failsWithinTheConnectionTimeout() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        long start = System.nanoTime();
        assertThatThrownBy(() -> ZooKeeperLockClient.builder()
                        .connectString("127.0.0.1:" + port)
                        .connectionTimeout(Duration.ofMillis(800))
                        .build())
                .isInstanceOf(DistributedLockException.class)
                .hasMessageContaining("connect");
        assertThat(System.nanoTime() - start).isLessThan(Timing.seconds(5).toNanos());
    }

    @Test
    void rootPath_isHonoured() throws Exception {
        ZooKeeperLockClient c = ZooKeeperLockClient.builder()
                .connectString(server.getConnectString())
                .rootPath("/apps/billing/locks-root")
                .build();
        closeAfter.add(0, c);
        LockHold h = c.lock("r").acquire();
        assertThat(admin.getChildren().forPath("/apps/billing/locks-root/locks"))
                .containsExactly(ZkNames.lockNode("r"));
        h.release();
    }

    private static Thread acquireInThread(DistributedLock lock, AtomicReference<LockHold> into) {
        Thread t = new Thread(() -> {
            try {
                into.set(lock.acquire());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        t.start();
        return t;
    }

    private List<String> entriesQuietly(String name) {
        try {
            return entries(name);
        } catch (Exception e) {
            return List.of("unreadable: " + e);
        }
    }
}
