package io.distlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLock;
import io.distlock.LockHold;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * How a client's holds end when their owner cannot end them: a thread that died holding a lock (FAULTS.md X2), and a
 * JVM that shuts down with the client open (X4). The fake store keeps holds until they are released (it expires
 * nothing), so a hold that the engine does not end stays held.
 */
class LockEngineEndingTest {
    final FakeLockStore store = new FakeLockStore();
    final List<LockEngine> engines = new ArrayList<>();

    LockEngine engine(Duration lease) {
        LockEngine e = LockEngine.create(store.view(), EngineConfig.defaults().withWatchdogLease(lease));
        engines.add(e);
        return e;
    }

    @AfterEach
    void close() {
        engines.forEach(LockEngine::close);
    }

    /** X2: a thread that dies of an uncaught exception holding a lock has it released within a watchdog tick. */
    @Test
    void threadDiesHoldingLock_holdReleasedWithinATick_otherClientTakesIt() throws Exception {
        LockEngine holder = engine(Duration.ofMillis(600)); // ticks every 200 ms
        LockEngine other = engine(Duration.ofMillis(600));
        AtomicLong token = new AtomicLong();
        Thread dies = new Thread(() -> {
            DistributedLock lock = holder.lock("orphan");
            lock.lock();
            lock.lock(); // re-entered: a dead thread's hold ends whatever its count
            token.set(lock.fencingToken());
            throw new IllegalStateException("the worker failed while holding the lock");
        });
        dies.setUncaughtExceptionHandler((t, e) -> {});
        dies.start();
        dies.join();
        assertThat(token.get()).isPositive();
        long start = System.nanoTime();
        Optional<LockHold> taken = other.lock("orphan").tryAcquire(Duration.ofSeconds(5));
        long tookMillis = (System.nanoTime() - start) / 1_000_000;
        assertThat(taken).as("another client takes the dead thread's lock").isPresent();
        assertThat(tookMillis).as("within about one watchdog tick").isLessThan(2_000);
        assertThat(taken.get().fencingToken()).isGreaterThan(token.get());
        taken.get().release();
    }

    /** A live thread's hold is never taken from it, however many ticks pass while another thread dies. */
    @Test
    void liveThreadsHold_keptWhileAnotherThreadDies() throws Exception {
        LockEngine engine = engine(Duration.ofMillis(300));
        DistributedLock mine = engine.lock("kept");
        mine.lock();
        Thread dies = new Thread(() -> {
            engine.lock("other").lock();
            throw new IllegalStateException("dies holding 'other'");
        });
        dies.setUncaughtExceptionHandler((t, e) -> {});
        dies.start();
        dies.join();
        Thread.sleep(700);
        assertThat(mine.isHeldByCurrentThread()).isTrue();
        assertThat(engine("kept-check").lock("kept").tryAcquire(Duration.ZERO)).isEmpty();
        assertThat(engine.lock("other").tryAcquire(Duration.ofSeconds(2))).isPresent();
        mine.unlock();
    }

    private LockEngine engine(String unused) {
        return engine(Duration.ofSeconds(30));
    }

    /**
     * X4: the JVM's shutdown runs the engine's hook, which closes it: its holds are released (another client takes
     * them at once) and it refuses further use. close() removes the hook.
     */
    @Test
    void shutdownHook_closesTheClient_releasingItsHolds() throws Exception {
        LockEngine holder = engine(Duration.ofSeconds(30));
        LockEngine other = engine(Duration.ofSeconds(30));
        Thread hook = holder.shutdownHook();
        holder.lock("a").lock();
        LockHold b = holder.lock("b").acquire();
        assertThat(other.lock("a").tryAcquire(Duration.ZERO)).isEmpty();
        hook.start(); // as the JVM would at SIGTERM
        hook.join(5_000);
        assertThat(b.isValid()).isFalse();
        assertThat(other.lock("a").tryAcquire(Duration.ZERO))
                .as("released, not left to expire")
                .isPresent();
        assertThat(other.lock("b").tryAcquire(Duration.ZERO)).isPresent();
        assertThatThrownBy(() -> holder.lock("c")).isInstanceOf(IllegalStateException.class);
        assertThat(Runtime.getRuntime().removeShutdownHook(hook))
                .as("the close the hook ran removed it (outside a shutdown, as here, removal works)")
                .isFalse();
    }

    @Test
    @org.junit.jupiter.api.Timeout(60)
    void shutdownHook_storeNeverAnswers_returnsAfterItsBound() throws Exception {
        LockEngine holder = engine(Duration.ofSeconds(30));
        holder.lock("a").lock();
        java.util.concurrent.CountDownLatch never = new java.util.concurrent.CountDownLatch(1);
        store.duringRelease = () -> {
            try {
                never.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        try {
            Thread hook = holder.shutdownHook();
            long start = System.nanoTime();
            hook.start(); // as the JVM would at SIGTERM, with the release never answered
            hook.join(30_000);
            long millis = (System.nanoTime() - start) / 1_000_000;
            assertThat(hook.isAlive())
                    .as("the hook ended although the close could not")
                    .isFalse();
            assertThat(millis).as("it waited for the close first").isGreaterThanOrEqualTo(4_000L);
        } finally {
            store.duringRelease = null;
            never.countDown();
        }
    }

    @Test
    void close_removesTheShutdownHook() {
        LockEngine e = engine(Duration.ofSeconds(30));
        Thread hook = e.shutdownHook();
        e.close();
        assertThat(Runtime.getRuntime().removeShutdownHook(hook)).isFalse();
    }
}
