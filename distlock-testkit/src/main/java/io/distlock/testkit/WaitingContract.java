package io.distlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedLock;
import io.distlock.LockClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Contract 8: waiters sleep until the store says the holder is gone, and never miss that. */
public interface WaitingContract extends BackendUnderTest {

    /** A missed wake-up would make the waiter sleep out the holder's 30 s lease. */
    @Test
    default void lock_waitsForRelease_andWakesPromptly() throws Exception {
        String name = uniqueName();
        DistributedLock holder = newClient().lock(name);
        DistributedLock waiter = newClient().lock(name);
        holder.lock();
        AtomicLong acquiredAt = new AtomicLong();
        CountDownLatch waiting = new CountDownLatch(1);
        Thread t = new Thread(() -> {
            waiting.countDown();
            waiter.lock();
            acquiredAt.set(System.nanoTime());
            waiter.unlock();
        });
        t.start();
        waiting.await();
        Timing.sleep(Duration.ofMillis(300));
        assertThat(acquiredAt.get()).as("acquired while held").isZero();
        long releasedAt = System.nanoTime();
        holder.unlock();
        t.join(Timing.seconds(5).toMillis());
        assertThat(t.isAlive()).as("waiter still waiting 5 s after the release").isFalse();
        assertThat(acquiredAt.get() - releasedAt).isLessThan(Timing.seconds(5).toNanos());
    }

    /** When the holder vanishes without releasing, waiting is bounded by its remaining lease. */
    @Test
    default void waiter_holderNeverReleases_acquiresAfterTheLease() throws Exception {
        String name = uniqueName();
        DistributedLock holder = newClient().lock(name);
        DistributedLock waiter = newClient().lock(name);
        assertThat(holder.tryLock(0, 800, TimeUnit.MILLISECONDS)).isTrue();
        assertThat(waiter.tryLock(Timing.seconds(6).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        waiter.unlock();
    }

    @Test
    default void manyWaiters_acrossClients_allAcquire() throws Exception {
        String name = uniqueName();
        List<LockClient> clients = List.of(newClient(), newClient());
        AtomicInteger done = new AtomicInteger();
        CountDownLatch gate = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            DistributedLock lock = clients.get(i % 2).lock(name);
            threads.add(new Thread(() -> {
                try {
                    gate.await();
                    for (int k = 0; k < 5; k++) {
                        if (lock.tryLock(Timing.seconds(15).toMillis(), TimeUnit.MILLISECONDS)) {
                            Timing.sleep(Duration.ofMillis(2));
                            lock.unlock();
                            done.incrementAndGet();
                        }
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
        assertThat(done.get()).isEqualTo(30);
        assertThat(residue(name)).isEmpty();
    }

    @Test
    default void acquire_waitsForHold_andAnyThreadReleases() throws Exception {
        String name = uniqueName();
        DistributedLock lock = newClient().lock(name);
        var first = lock.acquire();
        AtomicLong second = new AtomicLong();
        Thread t = new Thread(() -> {
            try (var hold = lock.acquire()) {
                second.set(hold.fencingToken());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        t.start();
        Timing.sleep(Duration.ofMillis(200));
        assertThat(second.get()).isZero();
        Thread releaser = new Thread(first::release);
        releaser.start();
        releaser.join();
        t.join(Timing.seconds(5).toMillis());
        assertThat(second.get()).isGreaterThan(first.fencingToken());
    }
}
