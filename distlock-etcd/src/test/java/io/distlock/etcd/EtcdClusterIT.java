package io.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedLock;
import io.distlock.DistributedLockException;
import io.distlock.DistributedSemaphore;
import io.distlock.LockClient;
import io.distlock.LockHold;
import io.distlock.PermitHold;
import io.distlock.testkit.CounterWorkload;
import io.distlock.testkit.Eventually;
import io.distlock.testkit.FencedResource;
import io.distlock.testkit.Timing;
import io.distlock.testkit.server.EtcdCluster;
import io.etcd.jetcd.maintenance.StatusResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A three-member etcd cluster whose leader is killed while a lock is held and waited on, and while a semaphore and a
 * read-write lock are held and contended.
 */
class EtcdClusterIT {
    private static final String NAMESPACE = "cluster-it/";

    @RegisterExtension
    static final EtcdCluster cluster = EtcdCluster.ofMembers(3);

    private static EtcdFixture fixture;

    @BeforeAll
    static void connect() {
        fixture = new EtcdFixture(cluster.endpoints(), NAMESPACE);
    }

    @AfterAll
    static void disconnect() {
        fixture.close();
    }

    private static LockClient client() {
        return EtcdLockClient.builder()
                .endpoints(cluster.endpoints())
                .namespace(NAMESPACE)
                .leaseTtl(Duration.ofSeconds(3))
                .requestTimeout(Duration.ofSeconds(3))
                .build();
    }

    @Test
    void leaderKilled_whileHeldAndWaitedOn_noTwoHolders_lockKeepsWorking_nothingLeft() throws Exception {
        String name = "failover-" + UUID.randomUUID();
        FencedResource resource = new FencedResource();
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger maxInside = new AtomicInteger();
        List<LockClient> clients = List.of(client(), client(), client());
        int killed = -1;
        try {
            // the holder: client 0, a watchdog hold (3 s lease, renewed every second) across the failover
            DistributedLock holderLock = clients.get(0).lock(name);
            LockHold hold = holderLock.acquire();
            long holderToken = hold.fencingToken();
            Object holderAcquisition = new Object();
            enter(inside, maxInside);
            assertThat(resource.read(holderToken, holderAcquisition)).isPresent();

            // four waiters on the other two clients: the first of each client queued in etcd behind the holder, the
            // other lined up locally behind it (a non-fair lock hands off within a client)
            List<Long> waiterTokens = Collections.synchronizedList(new ArrayList<>());
            AtomicInteger storeErrors = new AtomicInteger();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            CountDownLatch done = new CountDownLatch(4);
            List<Thread> waiters = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                DistributedLock lock = clients.get(1 + i % 2).lock(name);
                Thread t = new Thread(() -> {
                    try {
                        long deadline = System.nanoTime() + Timing.seconds(15).toNanos();
                        while (System.nanoTime() - deadline < 0) {
                            boolean got;
                            try {
                                got = lock.tryLock(Timing.seconds(15).toMillis(), TimeUnit.MILLISECONDS);
                            } catch (DistributedLockException e) {
                                storeErrors.incrementAndGet(); // a request that hit the dying leader: try again
                                continue;
                            }
                            if (!got) {
                                continue;
                            }
                            try {
                                enter(inside, maxInside);
                                Object acquisition = new Object();
                                long token = lock.fencingToken();
                                var v = resource.read(token, acquisition);
                                Timing.sleep(Duration.ofMillis(20));
                                if (v.isPresent() && resource.write(token, acquisition, v.getAsLong() + 1)) {
                                    waiterTokens.add(token);
                                }
                                inside.decrementAndGet();
                            } finally {
                                lock.unlock();
                            }
                            return;
                        }
                        throw new AssertionError("waiter never acquired");
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    } finally {
                        done.countDown();
                    }
                });
                t.setDaemon(true);
                waiters.add(t);
                t.start();
            }
            Eventually.within(
                    Timing.seconds(5),
                    "two waiters queued in etcd, four waiting",
                    () -> clients.get(0)
                                    .admin()
                                    .inspect(name)
                                    .map(info -> info.waiters() == 2)
                                    .orElse(false)
                            && waiters.stream().allMatch(t -> t.getState() == Thread.State.TIMED_WAITING));

            killed = leader();
            cluster.kill(killed);
            // longer than the election and than the holder's lease: the watchdog must carry the hold across
            Timing.sleep(Duration.ofSeconds(4));
            assertThat(hold.isValid()).as("the hold survived the failover").isTrue();
            assertThat(resource.write(holderToken, holderAcquisition, 100)).isTrue();
            assertThat(leader()).as("a new leader").isNotEqualTo(killed);
            inside.decrementAndGet();
            hold.release();

            assertThat(done.await(Timing.seconds(20).toMillis(), TimeUnit.MILLISECONDS))
                    .isTrue();
            if (failure.get() != null) {
                throw new AssertionError("a waiter failed", failure.get());
            }
            assertThat(waiterTokens).hasSize(4);
            assertThat(waiterTokens).isSorted();
            assertThat(waiterTokens.get(0)).isGreaterThan(holderToken);
            assertThat(resource.value()).isEqualTo(104);
            assertThat(resource.rejected())
                    .as("stale tokens at the fenced resource")
                    .isZero();
            assertThat(maxInside.get()).as("holders at once").isEqualTo(1);

            // the lock keeps working on the two survivors
            List<DistributedLock> locks = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                locks.add(clients.get(i % 3).lock(name));
            }
            CounterWorkload.Result r = CounterWorkload.run(locks, Duration.ofSeconds(2), Duration.ofMillis(1));
            assertThat(r.increments()).isPositive();
            assertThat(r.maxInside()).isEqualTo(1);
            assertThat(r.rejected()).isZero();
            assertThat(r.lostIncrements()).isZero();
        } finally {
            for (LockClient c : clients) {
                c.close();
            }
        }
        assertThat(fixture.allKeys()).as("keys left").isEmpty();
        assertThat(leases()).as("leases left").isEmpty();
        cluster.restart(killed);
    }

    /**
     * A semaphore of 2 with one permit held across the failover, a read lock held across it, and four threads of two
     * other clients taking permits and the write lock all along: never more than 2 permits in use, no writer while the
     * read lock is held, no stale write token at the fenced resource, and nothing left in etcd after.
     */
    @Test
    void leaderKilled_whileSemaphoreAndReadLockHeld_neverBeyondTheSize_noWriterDuringTheRead_nothingLeft()
            throws Exception {
        String semName = "failover-sem-" + UUID.randomUUID();
        String rwName = "failover-rw-" + UUID.randomUUID();
        FencedResource resource = new FencedResource();
        AtomicInteger permitsInUse = new AtomicInteger();
        AtomicInteger maxPermitsInUse = new AtomicInteger();
        AtomicInteger semaphoreGrants = new AtomicInteger();
        AtomicInteger writesDuringRead = new AtomicInteger();
        java.util.concurrent.atomic.AtomicBoolean readHeld = new java.util.concurrent.atomic.AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<LockClient> clients = List.of(client(), client(), client());
        int killed = -1;
        try {
            DistributedSemaphore held = clients.get(0).semaphore(semName, 2);
            PermitHold permit = held.acquire(1);
            enter(permitsInUse, maxPermitsInUse);
            LockHold read = clients.get(0).readWriteLock(rwName).readLock().acquire();
            readHeld.set(true);

            long end = System.nanoTime() + Timing.seconds(14).toNanos();
            List<Thread> workers = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                LockClient c = clients.get(1 + i % 2);
                boolean permits = i < 2;
                Thread t = new Thread(() -> {
                    try {
                        while (System.nanoTime() - end < 0) {
                            try {
                                if (permits) {
                                    Optional<PermitHold> p =
                                            c.semaphore(semName, 2).tryAcquire(1, Duration.ofSeconds(2));
                                    if (p.isPresent()) {
                                        enter(permitsInUse, maxPermitsInUse);
                                        Timing.sleep(Duration.ofMillis(20));
                                        permitsInUse.decrementAndGet();
                                        semaphoreGrants.incrementAndGet();
                                        p.get().release();
                                    }
                                } else {
                                    DistributedLock w = c.readWriteLock(rwName).writeLock();
                                    if (w.tryLock(2, TimeUnit.SECONDS)) {
                                        try {
                                            if (readHeld.get()) {
                                                writesDuringRead.incrementAndGet();
                                            }
                                            Object acquisition = new Object();
                                            long token = w.fencingToken();
                                            var v = resource.read(token, acquisition);
                                            Timing.sleep(Duration.ofMillis(10));
                                            if (v.isPresent()) {
                                                var unused = resource.write(token, acquisition, v.getAsLong() + 1);
                                            }
                                        } finally {
                                            w.unlock();
                                        }
                                    }
                                }
                            } catch (DistributedLockException e) {
                                // a request that hit the dying leader, or a hold lost in the failover: try again
                            }
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                });
                t.setDaemon(true);
                workers.add(t);
                t.start();
            }
            Eventually.within(Timing.seconds(5), "permits taken by the workers", () -> semaphoreGrants.get() > 0);

            killed = leader();
            cluster.kill(killed);
            Timing.sleep(Duration.ofSeconds(4)); // longer than the election and than the holds' 3 s lease
            assertThat(permit.isValid()).as("the permit survived the failover").isTrue();
            assertThat(read.isValid()).as("the read hold survived the failover").isTrue();
            assertThat(resource.acceptedWrites())
                    .as("writes while the read lock is held")
                    .isZero();
            readHeld.set(false);
            read.release();
            permitsInUse.decrementAndGet();
            permit.release();
            for (Thread t : workers) {
                t.join(Timing.seconds(30).toMillis());
            }
            if (failure.get() != null) {
                throw new AssertionError("a worker failed", failure.get());
            }
            assertThat(maxPermitsInUse.get()).as("permits in use at once").isLessThanOrEqualTo(2);
            assertThat(writesDuringRead.get())
                    .as("writers inside while the read lock was held")
                    .isZero();
            assertThat(resource.acceptedWrites())
                    .as("writes after the read lock")
                    .isPositive();
            assertThat(resource.rejected())
                    .as("stale tokens at the fenced resource")
                    .isZero();
        } finally {
            for (LockClient c : clients) {
                c.close();
            }
        }
        assertThat(fixture.allKeys()).as("keys left").isEmpty();
        assertThat(leases()).as("leases left").isEmpty();
        cluster.restart(killed);
    }

    private static void enter(AtomicInteger inside, AtomicInteger maxInside) {
        maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
    }

    /** The index of the member that is the Raft leader, asked through the maintenance status API. */
    private static int leader() throws Exception {
        long deadline = System.nanoTime() + Timing.seconds(10).toNanos();
        while (System.nanoTime() - deadline < 0) {
            for (int i = 0; i < cluster.size(); i++) {
                if (!cluster.isRunning(i)) {
                    continue;
                }
                try {
                    StatusResponse s = fixture.client()
                            .getMaintenanceClient()
                            .statusMember(cluster.endpoint(i))
                            .get(2, TimeUnit.SECONDS);
                    if (s.getLeader() != 0 && s.getLeader() == s.getHeader().getMemberId()) {
                        return i;
                    }
                } catch (Exception e) {
                    // a member without a leader yet, or unreachable: ask the next one
                }
            }
            Timing.sleep(Duration.ofMillis(100));
        }
        throw new AssertionError("no leader within 10 s");
    }

    private static List<String> leases() {
        String out = cluster.etcdctl("lease", "list");
        return Arrays.stream(out.split("\n"))
                .map(String::trim)
                .filter(l -> !l.isEmpty() && !l.startsWith("found"))
                .collect(Collectors.toList());
    }
}
