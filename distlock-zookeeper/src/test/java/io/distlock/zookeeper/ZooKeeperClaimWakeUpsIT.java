package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedReadWriteLock;
import io.distlock.DistributedSemaphore;
import io.distlock.PermitHold;
import io.distlock.testkit.Timing;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a hand-off costs when many waiters of one client wait on a read-write lock or semaphore: a deletion wakes only
 * the owners it may let pass, so each hand-off costs the holder's delete and the next waiter's read of the queue,
 * however many of the client's waiters wait behind. The requests are the server's own count (the packets it received,
 * from its srvr answer) on a server this class starts, with nothing else talking to it while it counts.
 */
class ZooKeeperClaimWakeUpsIT {
    /** Waiters behind the holder: with every waiter woken by every hand-off, their reads grow with its square. */
    private static final int WAITERS = 40;
    /**
     * The requests a hand-off may cost: the holder's delete and the next waiter's read, and one spare for a waiter's
     * periodic re-check (a waiter parked for the session timeout reads the queue once more).
     */
    private static final int PER_HAND_OFF = 3;
    /** Requests that are no hand-off's, such as a session's ping. */
    private static final int SLACK = 10;

    private TestingServer server;
    private ZooKeeperLockClient client;

    @BeforeEach
    void start() throws Exception {
        server = ZooKeeperTestServers.startServer();
        // the longest session the test server allows, so an idle session pings seldom; a long lease: no renewal
        client = ZooKeeperLockClient.builder()
                .connectString(server.getConnectString())
                .sessionTimeout(Duration.ofSeconds(10))
                .leaseTime(Duration.ofMinutes(5))
                .build();
    }

    @AfterEach
    void stop() throws Exception {
        try {
            client.close();
        } finally {
            server.close();
        }
    }

    @Test
    void writeLock_manyWaitersOfOneClient_eachHandOffCostsADeleteAndOneRead() throws Exception {
        DistributedReadWriteLock rw = client.readWriteLock("wake-write");
        rw.writeLock().lock();
        List<Thread> waiters = start(WAITERS, () -> {
            rw.writeLock().lock();
            rw.writeLock().unlock();
        });
        long requests = handOffs("wake-write", waiters, () -> rw.writeLock().unlock());
        assertThat(requests)
                .as("%s writers behind a writer, %s hand-offs", WAITERS, WAITERS + 1)
                .isLessThanOrEqualTo(PER_HAND_OFF * (WAITERS + 1L) + SLACK);
    }

    @Test
    void readers_behindAWriter_allPassOnItsDelete_eachWithOneRead() throws Exception {
        DistributedReadWriteLock rw = client.readWriteLock("wake-read");
        rw.writeLock().lock();
        List<Thread> waiters = start(WAITERS, () -> {
            rw.readLock().lock();
            rw.readLock().unlock();
        });
        long requests = handOffs("wake-read", waiters, () -> rw.writeLock().unlock());
        assertThat(requests)
                .as("%s readers behind a writer: its delete, a read each, their deletes", WAITERS)
                .isLessThanOrEqualTo(PER_HAND_OFF * (WAITERS + 1L) + SLACK);
    }

    @Test
    void onePermitSemaphore_manyWaitersOfOneClient_eachHandOffCostsADeleteAndOneRead() throws Exception {
        DistributedSemaphore s = client.semaphore("wake-sem1", 1);
        PermitHold held = s.acquire(1);
        List<Thread> waiters = start(WAITERS, () -> s.acquire(1).release());
        long requests = handOffs("wake-sem1", waiters, held::release);
        assertThat(requests)
                .as("%s waiters on a one-permit semaphore, %s hand-offs", WAITERS, WAITERS + 1)
                .isLessThanOrEqualTo(PER_HAND_OFF * (WAITERS + 1L) + SLACK);
    }

    @Test
    void semaphore_waitersAskingSeveralPermits_wakeOnlyWhenThePermitsAheadFit() throws Exception {
        DistributedSemaphore s = client.semaphore("wake-sem3", 3);
        PermitHold held = s.acquire(3);
        List<Thread> waiters = new ArrayList<>();
        try (CuratorFramework admin = ZooKeeperTestServers.adminClient(server.getConnectString())) {
            for (int i = 0; i < WAITERS; i++) {
                int permits = 1 + i % 3;
                waiters.addAll(start(1, () -> s.acquire(permits).release()));
                awaitQueued(admin, "wake-sem3", i + 2); // one by one, so the queue mixes the sizes as started
            }
        }
        long requests = handOffs("wake-sem3", waiters, held::release);
        assertThat(requests)
                .as("%s waiters asking 1 to 3 of 3 permits", WAITERS)
                .isLessThanOrEqualTo(PER_HAND_OFF * (WAITERS + 1L) + SLACK);
    }

    @Test
    void writeLock_waitersJoiningAQueueTheClientWatches_eachCostsACreateOneReadAndOneWatch() throws Exception {
        DistributedReadWriteLock rw = client.readWriteLock("join-write");
        rw.writeLock().lock();
        Body waiter = () -> {
            rw.writeLock().lock();
            rw.writeLock().unlock();
        };
        long requests = joins("join-write", waiter, () -> rw.writeLock().unlock());
        assertThat(requests)
                .as("%s writers joining the queue behind a writer and a waiting writer", WAITERS)
                .isLessThanOrEqualTo(PER_JOIN * WAITERS + SLACK);
    }

    @Test
    void onePermitSemaphore_waitersJoiningAQueueTheClientWatches_eachCostsACreateOneReadAndOneWatch() throws Exception {
        DistributedSemaphore s = client.semaphore("join-sem1", 1);
        PermitHold held = s.acquire(1);
        long requests = joins("join-sem1", () -> s.acquire(1).release(), held::release);
        assertThat(requests)
                .as("%s waiters joining the queue of a one-permit semaphore behind a holder and a waiter", WAITERS)
                .isLessThanOrEqualTo(PER_JOIN * WAITERS + SLACK);
    }

    /**
     * The requests a waiter's joining costs on a name whose queue this client already watches: its create, one read
     * of the queue (busy) and the exists watch on the entry ahead of it; the engine's re-check right after that busy
     * answer reads nothing.
     */
    private static final int PER_JOIN = 3;

    /**
     * With {@code waiter}'s first thread queued behind the holder (so the client's subscription on the name exists),
     * counts the server's requests while {@code WAITERS} more threads run {@code waiter} until each is parked in the
     * queue; then runs {@code release} and lets every waiter have its turn.
     */
    private long joins(String name, Body waiter, Body release) throws Exception {
        List<Thread> first = start(1, waiter);
        awaitQueued(name, 2);
        awaitParked(first);
        long before = quiet();
        List<Thread> more = start(WAITERS, waiter);
        awaitParked(more);
        long after = quiet();
        awaitQueued(name, WAITERS + 2);
        release.run();
        for (Thread t : concat(first, more)) {
            t.join(TimeUnit.SECONDS.toMillis(60));
            assertThat(t.isAlive())
                    .as("%s got its turn within 60 s", t.getName())
                    .isFalse();
        }
        return after - before;
    }

    private static List<Thread> concat(List<Thread> a, List<Thread> b) {
        List<Thread> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }

    /** Waits until every thread of {@code threads} is parked by the engine's claim acquire (it waits in the queue). */
    private static void awaitParked(List<Thread> threads) {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < until) {
            boolean all = true;
            for (Thread t : threads) {
                Object blocker = LockSupport.getBlocker(t);
                if (blocker == null || !blocker.getClass().getSimpleName().equals("ClaimAcquirer")) {
                    all = false;
                    break;
                }
            }
            if (all) {
                return;
            }
            Timing.sleep(Duration.ofMillis(20));
        }
        throw new AssertionError("not every waiter parked in the queue within 30 s");
    }

    private interface Body {
        void run() throws Exception;
    }

    private static List<Thread> start(int n, Body body) {
        List<Thread> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Thread t = new Thread(
                    () -> {
                        try {
                            body.run();
                        } catch (Exception e) {
                            throw new AssertionError(e);
                        }
                    },
                    "waiter-" + i);
            t.start();
            out.add(t);
        }
        return out;
    }

    /**
     * Waits until the holder and {@code waiters} wait in the name's queue and the client is quiet (each waiter's
     * watch is set), then runs {@code release} and counts the server's requests until every waiter has had its turn
     * and the client is quiet again.
     */
    private long handOffs(String name, List<Thread> waiters, Body release) throws Exception {
        awaitQueued(name, waiters.size() + 1);
        long before = quiet();
        release.run();
        for (Thread t : waiters) {
            t.join(TimeUnit.SECONDS.toMillis(60));
            assertThat(t.isAlive())
                    .as("%s got its turn within 60 s", t.getName())
                    .isFalse();
        }
        long after = quiet();
        return after - before;
    }

    /** Polls the name node's children (through a client that is closed again) until {@code entries} are there. */
    private void awaitQueued(String name, int entries) throws Exception {
        try (CuratorFramework admin = ZooKeeperTestServers.adminClient(server.getConnectString())) {
            awaitQueued(admin, name, entries);
        }
    }

    private static void awaitQueued(CuratorFramework admin, String name, int entries) throws Exception {
        String path = ZooKeeperSynchronizersIT.syncPath(name);
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        int seen = -1;
        while (System.nanoTime() < until) {
            seen = admin.checkExists().forPath(path) == null
                    ? 0
                    : admin.getChildren().forPath(path).size();
            if (seen == entries) {
                return;
            }
            Timing.sleep(Duration.ofMillis(20));
        }
        throw new AssertionError(name + ": " + seen + " entries queued after 30 s, expected " + entries);
    }

    /** The srvr requests this test has sent, each counted by the server as a packet received. */
    private long srvrCalls;

    /**
     * The server's requests so far, not counting this class's srvr calls, once two readings 300 ms apart agree: the
     * client has nothing left in flight.
     */
    private long quiet() {
        long last = received() - ++srvrCalls;
        for (int i = 0; i < 100; i++) {
            Timing.sleep(Duration.ofMillis(300));
            long now = received() - ++srvrCalls;
            if (now == last) {
                return now;
            }
            last = now;
        }
        throw new AssertionError("the server kept receiving requests for 30 s");
    }

    /** The packets the server received so far, this srvr request included. */
    private long received() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", server.getPort()), 2000);
            s.setSoTimeout(2000);
            s.getOutputStream().write("srvr".getBytes(StandardCharsets.US_ASCII));
            String out = new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
            for (String line : out.split("\n")) {
                if (line.startsWith("Received:")) {
                    return Long.parseLong(line.substring(9).trim());
                }
            }
            throw new AssertionError("no Received line in the srvr answer: " + out);
        } catch (IOException e) {
            throw new AssertionError("srvr failed", e);
        }
    }
}
