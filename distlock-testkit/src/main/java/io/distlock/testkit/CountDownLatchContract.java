package io.distlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedCountDownLatch;
import io.distlock.LockClient;
import io.distlock.PermitHold;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.junit.jupiter.api.Test;

/**
 * The count-down latch contract ({@link DistributedCountDownLatch}): a count set only when absent or at zero, count-downs
 * that stop at zero, a zero that wakes every waiter of every client promptly, and waits that end by timeout or interrupt
 * leaving nothing behind.
 */
public interface CountDownLatchContract extends BackendUnderTest {

    /**
     * How long a waiter may take to learn that the count reached zero; well under the engine's re-check interval, so a
     * lost notification fails the contract instead of being covered by the re-check.
     */
    default Duration latchWakeUp() {
        return Timing.seconds(3);
    }

    @Test
    default void trySetCount_onlyWhenAbsentOrAtZero() {
        String name = uniqueName();
        DistributedCountDownLatch a = newClient().countDownLatch(name);
        DistributedCountDownLatch b = newClient().countDownLatch(name);
        assertThat(a.getCount()).as("absent").isZero();
        assertThat(a.trySetCount(2)).isTrue();
        assertThat(b.getCount()).isEqualTo(2);
        assertThat(b.trySetCount(5)).as("while counting down").isFalse();
        assertThat(a.getCount()).isEqualTo(2);
        b.countDown();
        assertThat(a.getCount()).isEqualTo(1);
        assertThat(a.trySetCount(7)).as("at 1").isFalse();
        a.countDown();
        assertThat(b.getCount()).isZero();
        assertThat(b.trySetCount(3)).as("at zero: reused").isTrue();
        assertThat(a.getCount()).isEqualTo(3);
    }

    @Test
    default void countDown_atZeroOrAbsent_doesNothing() {
        String name = uniqueName();
        DistributedCountDownLatch latch = newClient().countDownLatch(name);
        latch.countDown();
        assertThat(latch.getCount()).as("absent, counted down").isZero();
        assertThat(latch.trySetCount(1)).isTrue();
        latch.countDown();
        latch.countDown();
        latch.countDown();
        assertThat(latch.getCount()).as("never below zero").isZero();
        assertThat(latch.trySetCount(2)).isTrue();
        latch.countDown();
        assertThat(latch.getCount()).as("a fresh count, not a debt").isEqualTo(1);
    }

    @Test
    default void countDowns_ofManyThreadsAndClients_eachCountOnce() throws Exception {
        String name = uniqueName();
        List<LockClient> clients = List.of(newClient(), newClient(), newClient());
        int calls = 60;
        assertThat(clients.get(0).countDownLatch(name).trySetCount(calls + 5)).isTrue();
        CountDownLatch gate = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            DistributedCountDownLatch l = clients.get(i % 3).countDownLatch(name);
            threads.add(new Thread(() -> {
                try {
                    gate.await();
                    for (int k = 0; k < calls / 6; k++) {
                        l.countDown();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        threads.forEach(Thread::start);
        gate.countDown();
        for (Thread t : threads) {
            t.join(Timing.seconds(20).toMillis());
        }
        assertThat(clients.get(1).countDownLatch(name).getCount()).isEqualTo(5);
    }

    /** Seed: a store that never tells the waiters, who then sleep until they poll. */
    @Test
    default void reachingZero_wakesEveryWaiterOfEveryClient_promptly() throws Exception {
        String name = uniqueName();
        List<LockClient> clients = List.of(newClient(), newClient(), newClient());
        assertThat(clients.get(0).countDownLatch(name).trySetCount(2)).isTrue();
        int waiters = 5;
        AtomicReferenceArray<Long> wokeAt = new AtomicReferenceArray<>(waiters);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch started = new CountDownLatch(waiters);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < waiters; i++) {
            int id = i;
            DistributedCountDownLatch l = clients.get(i % 3).countDownLatch(name);
            threads.add(new Thread(() -> {
                started.countDown();
                try {
                    if (id % 2 == 0) {
                        l.await();
                        wokeAt.set(id, System.nanoTime());
                    } else if (l.await(Timing.seconds(30))) {
                        wokeAt.set(id, System.nanoTime());
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        threads.forEach(Thread::start);
        started.await();
        Timing.sleep(Duration.ofMillis(300)); // every waiter is parked by now
        DistributedCountDownLatch counter = clients.get(1).countDownLatch(name);
        counter.countDown();
        Timing.sleep(Duration.ofMillis(200));
        for (int i = 0; i < waiters; i++) {
            assertThat(wokeAt.get(i)).as("waiter %d woke at count 1", i).isNull();
        }
        long zeroAt = System.nanoTime();
        counter.countDown();
        for (Thread t : threads) {
            t.join(Math.max(1, (zeroAt + latchWakeUp().toNanos() - System.nanoTime()) / 1_000_000));
        }
        assertThat(failure.get()).isNull();
        for (int i = 0; i < waiters; i++) {
            assertThat(wokeAt.get(i))
                    .as("waiter %d woke within %s of the zero", i, latchWakeUp())
                    .isNotNull();
        }
        threads.forEach(Thread::interrupt); // a waiter still parked must not outlive the test
    }

    @Test
    default void await_atZeroOrAbsent_returnsAtOnce() throws Exception {
        String name = uniqueName();
        DistributedCountDownLatch latch = newClient().countDownLatch(name);
        long start = System.nanoTime();
        latch.await();
        assertThat(latch.await(Duration.ofSeconds(30))).isTrue();
        assertThat(latch.await(Duration.ZERO)).isTrue();
        assertThat(latch.trySetCount(1)).isTrue();
        latch.countDown();
        latch.await();
        assertThat(latch.await(Duration.ofSeconds(30))).isTrue();
        assertThat(System.nanoTime() - start)
                .as("at once")
                .isLessThan(Timing.seconds(5).toNanos());
    }

    @Test
    default void await_timesOut_returnsFalse_leavesNothing() throws Exception {
        String name = uniqueName();
        DistributedCountDownLatch latch = newClient().countDownLatch(name);
        assertThat(latch.trySetCount(1)).isTrue();
        List<String> before = residue(name);
        long start = System.nanoTime();
        assertThat(latch.await(Duration.ofMillis(300))).isFalse();
        assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(290));
        assertThat(latch.await(Duration.ZERO)).as("a zero wait tries once").isFalse();
        assertThat(latch.await(Duration.ofSeconds(-1))).isFalse();
        assertThat(residue(name))
                .as("what the store keeps after the timed-out waits")
                .isEqualTo(before);
        assertThat(latch.getCount()).isEqualTo(1);
        latch.countDown();
        assertThat(latch.await(Duration.ZERO)).isTrue();
    }

    @Test
    default void await_interrupted_throws_leavesNothing() throws Exception {
        String name = uniqueName();
        DistributedCountDownLatch latch = newClient().countDownLatch(name);
        assertThat(latch.trySetCount(1)).isTrue();
        List<String> before = residue(name);
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicLong returned = new AtomicLong();
        Thread t = new Thread(() -> {
            try {
                latch.await();
                returned.set(1);
            } catch (Throwable e) {
                thrown.set(e);
            }
        });
        t.start();
        Timing.sleep(Duration.ofMillis(300));
        t.interrupt();
        t.join(Timing.seconds(5).toMillis());
        assertThat(returned.get()).isZero();
        assertThat(thrown.get()).isInstanceOf(InterruptedException.class);
        assertThat(residue(name)).isEqualTo(before);
        assertThat(latch.getCount()).isEqualTo(1);
    }

    @Test
    default void latch_badNameCountOrNull_isRejected() {
        LockClient client = newClient();
        assertThatThrownBy(() -> client.countDownLatch(BadInput.nullOf()))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("name");
        assertThatThrownBy(() -> client.countDownLatch("\n"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("name");
        DistributedCountDownLatch latch = client.countDownLatch(uniqueName());
        assertThatThrownBy(() -> latch.trySetCount(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("count")
                .hasMessageContaining("0");
        assertThatThrownBy(() -> latch.trySetCount(-7))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("-7");
        assertThatThrownBy(() -> latch.await(BadInput.nullOf())).isInstanceOf(NullPointerException.class);
        assertThat(latch.getCount()).isZero();
    }

    /** One name is one primitive: a latch refuses a name in use as a semaphore or read-write lock, and vice versa. */
    @Test
    default void nameInUseAsAnotherKind_isRefused_andNothingIsCorrupted() {
        String latchName = uniqueName();
        LockClient a = newClient();
        LockClient b = newClient();
        assertThat(a.countDownLatch(latchName).trySetCount(2)).isTrue();
        assertThatThrownBy(() -> b.semaphore(latchName, 2).tryAcquire(1)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> b.readWriteLock(latchName).writeLock().tryLock())
                .isInstanceOf(IllegalStateException.class);
        assertThat(b.countDownLatch(latchName).getCount())
                .as("the latch is unchanged")
                .isEqualTo(2);

        String semaphoreName = uniqueName();
        PermitHold p = a.semaphore(semaphoreName, 2).tryAcquire(1).orElseThrow();
        DistributedCountDownLatch onSemaphore = b.countDownLatch(semaphoreName);
        assertThatThrownBy(() -> onSemaphore.trySetCount(1)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(onSemaphore::countDown).isInstanceOf(IllegalStateException.class);
        assertThat(b.semaphore(semaphoreName, 2).availablePermits())
                .as("the semaphore is unchanged")
                .isEqualTo(1);
        p.release();

        String lockName = uniqueName();
        a.readWriteLock(lockName).readLock().lock();
        DistributedCountDownLatch onLock = b.countDownLatch(lockName);
        assertThatThrownBy(() -> onLock.trySetCount(1)).isInstanceOf(IllegalStateException.class);
        assertThat(b.readWriteLock(lockName).writeLock().tryLock())
                .as("the read lock still holds off writers")
                .isFalse();
        a.readWriteLock(lockName).readLock().unlock();
        assertThat(residue(lockName)).isEmpty();
    }

    @Test
    default void closedClient_rejectsLatches() {
        LockClient client = createClient(defaultLease());
        DistributedCountDownLatch latch = client.countDownLatch(uniqueName());
        client.close();
        assertThatThrownBy(() -> client.countDownLatch("x")).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> latch.trySetCount(1)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(latch::countDown).isInstanceOf(IllegalStateException.class);
    }
}
