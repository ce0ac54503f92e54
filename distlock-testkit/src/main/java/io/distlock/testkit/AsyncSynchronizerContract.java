package io.distlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedCountDownLatch;
import io.distlock.DistributedReadWriteLock;
import io.distlock.DistributedSemaphore;
import io.distlock.LockClient;
import io.distlock.LockHold;
import io.distlock.PermitHold;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * The asynchronous part of semaphores, read-write locks and count-down latches: futures complete when permits, the
 * lock or the zero come; timeouts complete empty (or false) and leave nothing; cancellation leaves nothing, a cancel
 * racing a grant included. Locks have {@link AsyncContract}.
 */
public interface AsyncSynchronizerContract extends BackendUnderTest {

    private static <T> T await(CompletableFuture<T> f) throws Exception {
        return f.get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
    }

    @Test
    default void semaphoreAcquireAsync_completesWhenPermitsAreReleased() throws Exception {
        String name = uniqueName();
        DistributedSemaphore a = newClient().semaphore(name, 3);
        DistributedSemaphore b = newClient().semaphore(name, 3);
        PermitHold two = a.acquire(2);
        CompletableFuture<PermitHold> f = b.acquireAsync(2);
        Timing.sleep(Duration.ofMillis(300));
        assertThat(f).as("2 of 3 permits held: 2 more wait").isNotDone();
        two.release();
        PermitHold got = await(f);
        assertThat(got.permits()).isEqualTo(2);
        assertThat(got.isValid()).isTrue();
        await(got.releaseAsync());
        assertThat(residue(name)).isEmpty();
    }

    @Test
    default void semaphoreTryAcquireAsync_timesOut_completesEmpty_leavesNothing() throws Exception {
        String name = uniqueName();
        PermitHold all = newClient().semaphore(name, 2).acquire(2);
        DistributedSemaphore s = newClient().semaphore(name, 2);
        assertThat(await(s.tryAcquireAsync(1, Duration.ofMillis(300)))).isEmpty();
        assertThat(await(s.tryAcquireAsync(2, Duration.ZERO, Duration.ofSeconds(5))))
                .isEmpty();
        all.release();
        assertThat(residue(name)).isEmpty();
        Optional<PermitHold> later = await(s.tryAcquireAsync(2, Duration.ZERO));
        assertThat(later).isPresent();
        later.get().release();
        assertThat(residue(name)).isEmpty();
    }

    @Test
    default void semaphoreCancel_whileWaiting_leavesNothing() throws Exception {
        String name = uniqueName();
        PermitHold all = newClient().semaphore(name, 2).acquire(2);
        List<CompletableFuture<PermitHold>> waiting = new ArrayList<>();
        for (LockClient c : List.of(newClient(), newClient())) {
            waiting.add(c.semaphore(name, 2).acquireAsync(2));
            waiting.add(c.semaphore(name, 2).acquireAsync(1));
        }
        Timing.sleep(Duration.ofMillis(300));
        for (CompletableFuture<PermitHold> f : waiting) {
            assertThat(f.cancel(false)).isTrue();
        }
        all.release();
        Eventually.within(AsyncContract.CLEANUP, "nothing left: " + residue(name), () -> residue(name)
                .isEmpty());
        assertThat(newClient().semaphore(name, 2).tryAcquire(2)).isPresent();
    }

    @Test
    default void semaphoreCancel_racingAGrant_leavesNoOrphanedPermits() throws Exception {
        String name = uniqueName();
        DistributedSemaphore holder = newClient().semaphore(name, 1);
        DistributedSemaphore waiter = newClient().semaphore(name, 1);
        for (int i = 0; i < 20; i++) {
            PermitHold h = holder.acquire(1);
            CompletableFuture<PermitHold> f = waiter.acquireAsync(1);
            Timing.sleep(Duration.ofMillis(20));
            Thread releaser = new Thread(h::release);
            releaser.start();
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(50L * (i % 10)));
            boolean cancelled = f.cancel(false);
            releaser.join();
            if (!cancelled) {
                await(f).release();
            }
            Eventually.within(
                    AsyncContract.CLEANUP, "round " + i + ": nothing left: " + residue(name), () -> residue(name)
                            .isEmpty());
        }
    }

    @Test
    default void writeLockAsync_waitsForTheReaders_readLockAsync_sharesWithReaders() throws Exception {
        String name = uniqueName();
        DistributedReadWriteLock a = newClient().readWriteLock(name);
        DistributedReadWriteLock b = newClient().readWriteLock(name);
        LockHold read = a.readLock().acquire();
        LockHold otherRead = await(b.readLock().acquireAsync());
        CompletableFuture<LockHold> write = b.writeLock().acquireAsync();
        Timing.sleep(Duration.ofMillis(300));
        assertThat(write).as("the writer waits for the readers").isNotDone();
        read.release();
        otherRead.release();
        LockHold w = await(write);
        assertThat(await(a.readLock().tryAcquireAsync(Duration.ofMillis(200)))).isEmpty();
        CompletableFuture<Optional<LockHold>> cancelled = a.readLock().tryAcquireAsync(Duration.ofSeconds(30));
        Timing.sleep(Duration.ofMillis(100));
        assertThat(cancelled.cancel(false)).isTrue();
        await(w.releaseAsync());
        Eventually.within(AsyncContract.CLEANUP, "nothing left: " + residue(name), () -> residue(name)
                .isEmpty());
    }

    @Test
    default void latchAwaitAsync_completesTrueAtZero_falseOnTimeout() throws Exception {
        String name = uniqueName();
        DistributedCountDownLatch latch = newClient().countDownLatch(name);
        assertThat(latch.trySetCount(2)).isTrue();
        DistributedCountDownLatch waiter = newClient().countDownLatch(name);
        assertThat(await(waiter.awaitAsync(Duration.ofMillis(200)))).isFalse();
        assertThat(await(waiter.awaitAsync(Duration.ZERO))).isFalse();
        CompletableFuture<Boolean> zero = waiter.awaitAsync(Timing.seconds(30));
        CompletableFuture<Boolean> cancelled = waiter.awaitAsync(Timing.seconds(30));
        latch.countDown();
        Timing.sleep(Duration.ofMillis(200));
        assertThat(zero).isNotDone();
        assertThat(cancelled.cancel(false)).isTrue();
        latch.countDown();
        assertThat(await(zero)).isTrue();
        assertThat(await(waiter.awaitAsync(Duration.ZERO))).isTrue();
    }
}
