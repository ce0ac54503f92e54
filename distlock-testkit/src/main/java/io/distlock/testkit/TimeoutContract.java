package io.distlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedLock;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Contract 8, the other half: timeouts and interrupts end a wait and leave nothing behind. */
public interface TimeoutContract extends BackendUnderTest {

    @Test
    default void tryLock_timesOut_returnsFalse_leavesNothing() throws Exception {
        String name = uniqueName();
        DistributedLock holder = newClient().lock(name);
        DistributedLock waiter = newClient().lock(name);
        holder.lock();
        long start = System.nanoTime();
        assertThat(waiter.tryLock(300, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(290));
        holder.unlock();
        assertThat(residue(name)).isEmpty();
        assertThat(newClient().lock(name).tryLock()).isTrue();
    }

    /** A waiter that timed out must not stay queued ahead of later waiters. */
    @Test
    default void fairTryLock_timesOut_leavesNoQueueEntry() throws Exception {
        String name = uniqueName();
        DistributedLock holder = newClient().fairLock(name);
        DistributedLock gaveUp = newClient().fairLock(name);
        DistributedLock later = newClient().fairLock(name);
        holder.lock();
        assertThat(gaveUp.tryLock(300, TimeUnit.MILLISECONDS)).isFalse();
        holder.unlock();
        assertThat(residue(name)).isEmpty();
        long start = System.nanoTime();
        assertThat(later.tryLock(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        assertThat(System.nanoTime() - start)
                .as("granted at once")
                .isLessThan(Timing.seconds(2).toNanos());
        later.unlock();
    }

    @Test
    default void lockInterruptibly_interrupted_throws_leavesNothing() throws Exception {
        interruptedWait_leavesNothing(false);
    }

    @Test
    default void fairLockInterruptibly_interrupted_throws_leavesNothing() throws Exception {
        interruptedWait_leavesNothing(true);
    }

    private void interruptedWait_leavesNothing(boolean fair) throws Exception {
        String name = uniqueName();
        DistributedLock holder = fair ? newClient().fairLock(name) : newClient().lock(name);
        DistributedLock waiter = fair ? newClient().fairLock(name) : newClient().lock(name);
        holder.lock();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        CountDownLatch started = new CountDownLatch(1);
        Thread t = new Thread(() -> {
            started.countDown();
            try {
                waiter.lockInterruptibly();
                thrown.set(new AssertionError("acquired"));
            } catch (Throwable e) {
                thrown.set(e);
            }
        });
        t.start();
        started.await();
        Timing.sleep(Duration.ofMillis(300));
        t.interrupt();
        t.join(Timing.seconds(5).toMillis());
        assertThat(thrown.get()).isInstanceOf(InterruptedException.class);
        holder.unlock();
        Eventually.within(Timing.seconds(2), "nothing left: " + residue(name), () -> residue(name)
                .isEmpty());
        DistributedLock later = newClient().lock(name);
        assertThat(later.tryLock()).isTrue();
        later.unlock();
    }

    @Test
    default void lock_interrupted_keepsWaiting_andKeepsTheFlag() throws Exception {
        String name = uniqueName();
        DistributedLock holder = newClient().lock(name);
        DistributedLock waiter = newClient().lock(name);
        holder.lock();
        AtomicBoolean flagAfter = new AtomicBoolean();
        AtomicBoolean held = new AtomicBoolean();
        Thread t = new Thread(() -> {
            waiter.lock();
            held.set(waiter.isHeldByCurrentThread());
            flagAfter.set(Thread.currentThread().isInterrupted());
            waiter.unlock();
        });
        t.start();
        Timing.sleep(Duration.ofMillis(200));
        t.interrupt();
        Timing.sleep(Duration.ofMillis(200));
        assertThat(t.isAlive()).as("lock() ignores the interrupt").isTrue();
        holder.unlock();
        t.join(Timing.seconds(5).toMillis());
        assertThat(held.get()).isTrue();
        assertThat(flagAfter.get()).as("interrupt flag re-asserted").isTrue();
    }

    @Test
    default void tryLock_zeroOrNegativeWait_triesOnce() throws Exception {
        String name = uniqueName();
        DistributedLock a = newClient().lock(name);
        DistributedLock b = newClient().lock(name);
        assertThat(a.tryLock(0, TimeUnit.SECONDS)).isTrue();
        long start = System.nanoTime();
        assertThat(b.tryLock(-5, TimeUnit.SECONDS)).isFalse();
        assertThat(b.tryAcquire(Duration.ofSeconds(-1))).isEmpty();
        assertThat(System.nanoTime() - start).isLessThan(Timing.seconds(2).toNanos());
        a.unlock();
    }

    @Test
    default void tryAcquire_timesOut_leavesNothing() throws Exception {
        String name = uniqueName();
        DistributedLock holder = newClient().lock(name);
        var hold = holder.acquire();
        assertThat(newClient().lock(name).tryAcquire(Duration.ofMillis(200))).isEmpty();
        assertThat(newClient().fairLock(name).tryAcquire(Duration.ofMillis(200)))
                .isEmpty();
        hold.release();
        assertThat(residue(name)).isEmpty();
    }
}
