package io.distlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedSemaphore;
import io.distlock.LockClient;
import io.distlock.LockLostException;
import io.distlock.PermitHold;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * The semaphore contract ({@link DistributedSemaphore}): never more than its size held at once across threads and
 * clients, every acquisition an owned and leased hold whose permits come back when its lease ends, first come first
 * served, a size stored by the first user, fencing tokens, and waits that leave nothing behind. A semaphore of size 1
 * also runs the whole lock contract through {@link SemaphoreAsLock}.
 */
public interface SemaphoreContract extends BackendUnderTest {

    // ---------------------------------------------------------------- counting

    @Test
    default void tryAcquire_upToTheSize_acrossClients_thenNoMore() {
        String name = uniqueName();
        DistributedSemaphore a = newClient().semaphore(name, 3);
        DistributedSemaphore b = newClient().semaphore(name, 3);
        assertThat(a.size()).isEqualTo(3);
        assertThat(a.availablePermits()).isEqualTo(3);
        PermitHold two = a.tryAcquire(2).orElseThrow();
        assertThat(two.permits()).isEqualTo(2);
        assertThat(two.name()).isEqualTo(name);
        assertThat(b.availablePermits()).isEqualTo(1);
        assertThat(b.tryAcquire(2)).as("two permits when one is free").isEmpty();
        PermitHold one = b.tryAcquire(1).orElseThrow();
        assertThat(a.availablePermits()).isZero();
        assertThat(a.tryAcquire(1)).as("a permit when none is free").isEmpty();
        two.release();
        assertThat(b.availablePermits()).isEqualTo(2);
        PermitHold again = b.tryAcquire(2).orElseThrow();
        again.release();
        one.release();
        assertThat(a.availablePermits()).isEqualTo(3);
        assertThat(residue(name)).isEmpty();
    }

    /** Seed: a store that counts permits per client, or not at all, lets more than the size in at once. */
    @Test
    default void concurrentHolders_neverHoldMoreThanTheSize() {
        String name = uniqueName();
        int size = 3;
        List<LockClient> clients = List.of(newClient(), newClient(), newClient());
        AtomicInteger held = new AtomicInteger();
        AtomicInteger maxHeld = new AtomicInteger();
        AtomicLong acquisitions = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch gate = new CountDownLatch(1);
        long end = System.nanoTime() + Duration.ofMillis(1500).toNanos();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            int permits = 1 + i % 2;
            DistributedSemaphore s = clients.get(i % 3).semaphore(name, size);
            threads.add(new Thread(() -> {
                try {
                    gate.await();
                    while (System.nanoTime() - end < 0) {
                        try (PermitHold h = s.acquire(permits)) {
                            maxHeld.accumulateAndGet(held.addAndGet(permits), Math::max);
                            acquisitions.incrementAndGet();
                            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
                            held.addAndGet(-permits);
                        }
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }));
        }
        threads.forEach(Thread::start);
        gate.countDown();
        joinAll(threads, Timing.seconds(30));
        assertThat(failure.get()).as("a worker failed").isNull();
        assertThat(acquisitions.get()).as("acquisitions").isPositive();
        assertThat(maxHeld.get()).as("permits held at once").isBetween(1, size);
        assertThat(residue(name)).isEmpty();
    }

    /** Seed: a store that grants whatever fits, whoever waits: acquire(2) waits for ever behind a stream of 1s. */
    @Test
    default void waitingLargeAcquire_blocksSmallerAcquiresThatArriveAfterIt() throws Exception {
        String name = uniqueName();
        DistributedSemaphore holder = newClient().semaphore(name, 2);
        DistributedSemaphore large = newClient().semaphore(name, 2);
        DistributedSemaphore small = newClient().semaphore(name, 2);
        PermitHold first = holder.acquire(1);
        AtomicReference<PermitHold> got = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                large.tryAcquire(2, Timing.seconds(20)).ifPresent(got::set);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        t.start();
        Eventually.parked(t, Timing.seconds(10));
        Timing.sleep(Duration.ofMillis(100)); // the large acquire waits in the store by now
        assertThat(small.tryAcquire(1))
                .as("a free permit, but an earlier waiter needs it")
                .isEmpty();
        assertThat(small.tryAcquire(1, Duration.ofMillis(200))).isEmpty();
        first.release();
        t.join(Timing.seconds(5).toMillis());
        PermitHold large2 = got.get();
        assertThat(large2).as("the large acquire after the release").isNotNull();
        assertThat(small.availablePermits()).isZero();
        java.util.Objects.requireNonNull(large2).release();
        assertThat(residue(name)).isEmpty();
    }

    /** First come, first served as a liveness check: acquire(5) gets in while others keep taking single permits. */
    @Test
    default void acquireOfAllPermits_notStarvedByAStreamOfSingleAcquires() throws Exception {
        String name = uniqueName();
        int size = 5;
        List<LockClient> clients = List.of(newClient(), newClient());
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> stream = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            DistributedSemaphore s = clients.get(i % 2).semaphore(name, size);
            stream.add(new Thread(() -> {
                try {
                    while (!stop.get()) {
                        try (PermitHold h = s.acquire(1)) {
                            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
                        }
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }));
        }
        stream.forEach(Thread::start);
        Timing.sleep(Duration.ofMillis(200));
        Optional<PermitHold> all = newClient().semaphore(name, size).tryAcquire(size, Timing.seconds(6));
        stop.set(true);
        assertThat(all)
                .as("acquire(%d) while a stream of acquire(1) runs", size)
                .isPresent();
        assertThat(all.orElseThrow().permits()).isEqualTo(size);
        all.orElseThrow().release();
        joinAll(stream, Timing.seconds(20));
        assertThat(failure.get()).isNull();
        assertThat(residue(name)).isEmpty();
    }

    @Test
    default void release_wakesAsManyWaitersAsTheFreedPermitsServe() throws Exception {
        String name = uniqueName();
        int size = 3;
        List<LockClient> clients = List.of(newClient(), newClient(), newClient());
        PermitHold all = clients.get(0).semaphore(name, size).acquire(size);
        CountDownLatch allIn = new CountDownLatch(size);
        AtomicInteger together = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            DistributedSemaphore s = clients.get(i).semaphore(name, size);
            threads.add(new Thread(() -> {
                try {
                    Optional<PermitHold> h = s.tryAcquire(1, Timing.seconds(20));
                    if (h.isPresent()) {
                        allIn.countDown();
                        if (allIn.await(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS)) {
                            together.incrementAndGet();
                        }
                        h.get().release();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        threads.forEach(Thread::start);
        Timing.sleep(Duration.ofMillis(300));
        assertThat(allIn.getCount()).as("waiters in while every permit is held").isEqualTo(size);
        all.release();
        assertThat(allIn.await(Timing.seconds(5).toMillis(), TimeUnit.MILLISECONDS))
                .as("every waiter in at once after the release")
                .isTrue();
        joinAll(threads, Timing.seconds(15));
        assertThat(together.get()).isEqualTo(size);
        assertThat(residue(name)).isEmpty();
    }

    // ---------------------------------------------------------------- size

    @Test
    default void otherSize_throwsIllegalStateNamingBothSizes_andChangesNothing() {
        String name = uniqueName();
        DistributedSemaphore three = newClient().semaphore(name, 3);
        PermitHold h = three.tryAcquire(1).orElseThrow();
        DistributedSemaphore five = newClient().semaphore(name, 5);
        assertThatThrownBy(() -> five.tryAcquire(1))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("3")
                .hasMessageContaining("5");
        assertThatThrownBy(() -> five.tryAcquire(1, Duration.ofSeconds(1))).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(five::availablePermits).isInstanceOf(IllegalStateException.class);
        assertThat(three.availablePermits())
                .as("the stored semaphore is unchanged")
                .isEqualTo(2);
        PermitHold rest = three.tryAcquire(2).orElseThrow();
        assertThat(three.tryAcquire(1)).isEmpty();
        rest.release();
        h.release();
        assertThat(residue(name)).isEmpty();
    }

    @Test
    default void permitsOutOfRange_throwIllegalArgumentAtOnce_withTheValue() {
        DistributedSemaphore s = newClient().semaphore(uniqueName(), 2);
        long start = System.nanoTime();
        for (int bad : new int[] {0, -1, 3, Integer.MIN_VALUE}) {
            String value = Integer.toString(bad);
            assertThatThrownBy(() -> s.acquire(bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("permits")
                    .hasMessageContaining(value);
            assertThatThrownBy(() -> s.tryAcquire(bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(value);
            assertThatThrownBy(() -> s.tryAcquire(bad, Duration.ofSeconds(30)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(value);
            assertThatThrownBy(() -> s.tryAcquire(bad, Duration.ofSeconds(30), Duration.ofSeconds(1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(value);
        }
        assertThat(System.nanoTime() - start)
                .as("at once")
                .isLessThan(Timing.seconds(5).toNanos());
        assertThat(s.availablePermits()).isEqualTo(2);
    }

    @Test
    default void semaphore_badNameSizeLeaseOrNull_isRejected() {
        LockClient client = newClient();
        assertThatThrownBy(() -> client.semaphore(BadInput.nullOf(), 1))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("name");
        assertThatThrownBy(() -> client.semaphore(" ", 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("name");
        assertThatThrownBy(() -> client.semaphore(uniqueName(), 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("permits")
                .hasMessageContaining("0");
        assertThatThrownBy(() -> client.semaphore(uniqueName(), -4))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("-4");
        DistributedSemaphore s = client.semaphore(uniqueName(), 2);
        assertThatThrownBy(() -> s.tryAcquire(1, Duration.ZERO, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lease")
                .hasMessageContaining("PT0S");
        assertThatThrownBy(() -> s.tryAcquire(1, Duration.ZERO, Duration.ofSeconds(-2)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("PT-2S");
        assertThatThrownBy(() -> s.tryAcquire(1, BadInput.nullOf())).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> s.tryAcquire(1, Duration.ZERO, BadInput.nullOf()))
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> s.addListener(BadInput.nullOf())).isInstanceOf(NullPointerException.class);
        assertThat(s.availablePermits()).isEqualTo(2);
    }

    /** One name is one primitive: used as a read-write lock it refuses to be a semaphore, and nothing is corrupted. */
    @Test
    default void nameInUseAsReadWriteLock_refusesTheSemaphore_andKeepsTheLock() {
        String name = uniqueName();
        LockClient a = newClient();
        LockClient b = newClient();
        a.readWriteLock(name).writeLock().lock();
        DistributedSemaphore s = b.semaphore(name, 1);
        assertThatThrownBy(() -> s.tryAcquire(1)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(s::availablePermits).isInstanceOf(IllegalStateException.class);
        assertThat(b.readWriteLock(name).readLock().tryLock())
                .as("the write lock still excludes readers")
                .isFalse();
        a.readWriteLock(name).writeLock().unlock();
        assertThat(residue(name)).isEmpty();
        String other = uniqueName();
        PermitHold p = a.semaphore(other, 2).tryAcquire(1).orElseThrow();
        assertThatThrownBy(() -> b.readWriteLock(other).writeLock().tryLock())
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> b.readWriteLock(other).readLock().tryLock()).isInstanceOf(IllegalStateException.class);
        assertThat(b.semaphore(other, 2).availablePermits())
                .as("the semaphore is unchanged")
                .isEqualTo(1);
        p.release();
    }

    @Test
    default void closedClient_rejectsSemaphores() {
        LockClient client = createClient(defaultLease());
        DistributedSemaphore s = client.semaphore(uniqueName(), 2);
        client.close();
        assertThatThrownBy(() -> client.semaphore("x", 1)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> s.tryAcquire(1)).isInstanceOf(IllegalStateException.class);
    }

    // ---------------------------------------------------------------- owned, leased holds

    /** Seed: permits taken from a bare counter never come back when their owner dies. */
    @Test
    default void fixedLeaseHold_ends_andItsPermitsComeBack() throws Exception {
        String name = uniqueName();
        DistributedSemaphore s = newClient().semaphore(name, 3);
        RecordingLockListener listener = new RecordingLockListener();
        s.addListener(listener);
        PermitHold h = s.tryAcquire(2, Duration.ZERO, Duration.ofMillis(500)).orElseThrow();
        assertThat(listener.acquired()).containsExactly(h.fencingToken());
        DistributedSemaphore other = newClient().semaphore(name, 3);
        Optional<PermitHold> all = other.tryAcquire(3, Timing.seconds(6));
        assertThat(all).as("every permit, within the fixed lease").isPresent();
        assertThat(h.isValid()).isFalse();
        Eventually.within(
                Timing.seconds(3), "listener told lost", () -> listener.lost().contains(h.fencingToken()));
        assertThatThrownBy(h::release).isInstanceOf(LockLostException.class).hasMessageContaining(name);
        all.orElseThrow().release();
        assertThat(residue(name)).isEmpty();
    }

    @Test
    default void watchdog_keepsPermitsPastTheirLease() {
        String name = uniqueName();
        Duration lease = Duration.ofMillis(900);
        DistributedSemaphore s = newClient(lease).semaphore(name, 2);
        PermitHold h = s.tryAcquire(2).orElseThrow();
        Timing.sleep(lease.multipliedBy(3));
        assertThat(h.isValid()).isTrue();
        assertThat(newClient().semaphore(name, 2).tryAcquire(1)).isEmpty();
        assertThat(s.availablePermits()).isZero();
        h.release();
        assertThat(s.availablePermits()).isEqualTo(2);
    }

    @Test
    default void holdRemovedBehindItsBack_isToldLost_releaseThrowsLockLost_permitsFree() throws Exception {
        String name = uniqueName();
        DistributedSemaphore s = newClient(Duration.ofMillis(600)).semaphore(name, 2);
        RecordingLockListener listener = new RecordingLockListener();
        s.addListener(listener);
        PermitHold h = s.acquire(2);
        expireHold(name);
        Eventually.within(
                Timing.seconds(3), "listener told lost", () -> listener.lost().contains(h.fencingToken()));
        assertThat(h.isValid()).isFalse();
        assertThat(newClient().semaphore(name, 2).availablePermits()).isEqualTo(2);
        assertThatThrownBy(h::release).isInstanceOf(LockLostException.class);
        h.close();
        assertThat(listener.released()).isEmpty();
        assertThat(residue(name)).isEmpty();
    }

    @Test
    default void hold_releasedFromAnotherThread_releaseTwiceThrows_closeTwiceDoesNothing() throws Exception {
        String name = uniqueName();
        DistributedSemaphore s = newClient().semaphore(name, 2);
        RecordingLockListener listener = new RecordingLockListener();
        s.addListener(listener);
        PermitHold h = s.acquire(2);
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                h.release();
            } catch (Throwable e) {
                thrown.set(e);
            }
        });
        t.start();
        t.join(Timing.seconds(5).toMillis());
        assertThat(thrown.get()).isNull();
        assertThat(h.isValid()).isFalse();
        assertThat(listener.released()).containsExactly(h.fencingToken());
        assertThatThrownBy(h::release).isExactlyInstanceOf(IllegalMonitorStateException.class);
        h.close();
        PermitHold second = s.acquire(1);
        second.close();
        second.close();
        assertThat(s.availablePermits()).isEqualTo(2);
        assertThat(residue(name)).isEmpty();
    }

    @Test
    default void close_releasesPermits() throws Exception {
        String name = uniqueName();
        LockClient client = createClient(defaultLease());
        PermitHold h = client.semaphore(name, 2).acquire(2);
        client.close();
        assertThat(h.isValid()).isFalse();
        assertThat(newClient().semaphore(name, 2).tryAcquire(2)).isPresent();
    }

    // ---------------------------------------------------------------- fencing

    @Test
    default void tokens_exceedEveryTokenIssuedBefore_concurrentHoldsDiffer() throws Exception {
        String name = uniqueName();
        LockClient a = newClient();
        LockClient b = newClient();
        long highest = Long.MIN_VALUE;
        List<PermitHold> open = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            DistributedSemaphore s = (i % 2 == 0 ? a : b).semaphore(name, 3);
            if (open.size() == 3) {
                open.remove(0).release();
            }
            PermitHold h = s.acquire(1);
            assertThat(h.fencingToken()).as("acquisition %d", i).isGreaterThan(highest);
            highest = h.fencingToken();
            open.add(h);
        }
        for (PermitHold h : open) {
            h.release();
        }
        PermitHold held = a.semaphore(name, 3).acquire(3);
        expireHold(name);
        PermitHold after = b.semaphore(name, 3).tryAcquire(3).orElseThrow();
        assertThat(after.fencingToken()).as("after an expired hold").isGreaterThan(held.fencingToken());
        after.release();
    }

    // ---------------------------------------------------------------- timeouts and interrupts

    /** A waiter that gave up must not keep its place ahead of later acquires. */
    @Test
    default void tryAcquire_timesOut_leavesNothing_laterAcquiresGetIn() throws Exception {
        String name = uniqueName();
        DistributedSemaphore holder = newClient().semaphore(name, 2);
        PermitHold one = holder.acquire(1);
        DistributedSemaphore waiter = newClient().semaphore(name, 2);
        long start = System.nanoTime();
        assertThat(waiter.tryAcquire(2, Duration.ofMillis(300))).isEmpty();
        assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(290));
        Optional<PermitHold> later = newClient().semaphore(name, 2).tryAcquire(1);
        assertThat(later).as("the free permit, once the waiter gave up").isPresent();
        later.orElseThrow().release();
        one.release();
        assertThat(residue(name)).isEmpty();
    }

    @Test
    default void acquire_interrupted_throws_leavesNothing() throws Exception {
        String name = uniqueName();
        PermitHold one = newClient().semaphore(name, 2).acquire(1);
        DistributedSemaphore waiter = newClient().semaphore(name, 2);
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                var unused = waiter.acquire(2);
                thrown.set(new AssertionError("acquired"));
            } catch (Throwable e) {
                thrown.set(e);
            }
        });
        t.start();
        Timing.sleep(Duration.ofMillis(300));
        t.interrupt();
        t.join(Timing.seconds(5).toMillis());
        assertThat(thrown.get()).isInstanceOf(InterruptedException.class);
        Optional<PermitHold> later = newClient().semaphore(name, 2).tryAcquire(1);
        assertThat(later).as("the free permit, once the waiter was interrupted").isPresent();
        later.orElseThrow().release();
        one.release();
        Eventually.within(Timing.seconds(2), "nothing left: " + residue(name), () -> residue(name)
                .isEmpty());
    }

    @Test
    default void tryAcquire_zeroOrNegativeWait_triesOnce() throws Exception {
        String name = uniqueName();
        PermitHold all = newClient().semaphore(name, 1).acquire(1);
        DistributedSemaphore other = newClient().semaphore(name, 1);
        long start = System.nanoTime();
        assertThat(other.tryAcquire(1, Duration.ZERO)).isEmpty();
        assertThat(other.tryAcquire(1, Duration.ofSeconds(-5))).isEmpty();
        assertThat(System.nanoTime() - start).isLessThan(Timing.seconds(2).toNanos());
        all.release();
        assertThat(residue(name)).isEmpty();
    }

    private static void joinAll(List<Thread> threads, Duration bound) {
        List<String> stuck = new CopyOnWriteArrayList<>();
        for (Thread t : threads) {
            try {
                t.join(bound.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
            if (t.isAlive()) {
                stuck.add(t + " " + List.of(t.getStackTrace()));
            }
        }
        assertThat(stuck).as("stuck threads").isEmpty();
    }
}
