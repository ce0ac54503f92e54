package io.distlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLock;
import io.distlock.DistributedLockException;
import io.distlock.LockClient;
import io.distlock.LockHold;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Asynchronous acquisition of locks: a future completes on release; a timeout completes empty and leaves nothing;
 * cancellation in every phase leaves nothing, a cancel racing a grant included; many waiters wait on few threads; a
 * store that cannot be reached fails the future with the cause. The semaphores' and latches' part is {@link
 * AsyncSynchronizerContract}.
 */
public interface AsyncContract extends BackendUnderTest {

    /**
     * How soon after a cancel or timeout its clean-up (one round trip on the client's executor) must show: well within
     * the few seconds after which stores evict a queue entry nobody refreshes, so a cancel that leaves its entry fails.
     */
    Duration CLEANUP = Timing.seconds(2);

    /**
     * A client whose store cannot be reached (a closed port), or empty where the backend cannot make one; the test of
     * a failing store then does not run for it.
     */
    default Optional<LockClient> createUnreachableClient() {
        return Optional.empty();
    }

    /** How many acquisitions {@link #manyAsyncAcquisitions_completeOnABoundedNumberOfThreads} makes at once. */
    default int asyncAcquisitions() {
        return 10_000;
    }

    private static <T> T await(CompletableFuture<T> f) throws Exception {
        return f.get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
    }

    @Test
    default void acquireAsync_freeLock_completesWithAValidHold() throws Exception {
        String name = uniqueName();
        LockHold h = await(newClient().lock(name).acquireAsync());
        assertThat(h.isValid()).isTrue();
        assertThat(h.name()).isEqualTo(name);
        assertThat(newClient().lock(name).tryLock()).isFalse();
        await(h.releaseAsync());
        assertThat(h.isValid()).isFalse();
        assertThat(residue(name)).isEmpty();
    }

    @Test
    default void acquireAsync_waits_completesOnRelease_onTheClientsExecutor() throws Exception {
        String name = uniqueName();
        LockHold holder = newClient().lock(name).acquire();
        LockClient waiterClient = newClient();
        CompletableFuture<LockHold> f = waiterClient.lock(name).acquireAsync();
        AtomicReference<String> thread = new AtomicReference<>();
        CompletableFuture<LockHold> seen = f.thenApply(h -> {
            thread.set(Thread.currentThread().getName());
            return h;
        });
        Timing.sleep(Duration.ofMillis(300));
        assertThat(f).as("waits while the lock is held").isNotDone();
        holder.release();
        LockHold h = await(seen);
        assertThat(h.isValid()).isTrue();
        assertThat(thread.get())
                .as("completed on the client's executor, not the store's I/O thread")
                .startsWith("distlock-async-" + waiterClient.clientId());
        await(h.releaseAsync());
        assertThat(residue(name)).isEmpty();
    }

    @Test
    default void tryAcquireAsync_timesOut_completesEmpty_leavesNothing() throws Exception {
        String name = uniqueName();
        LockHold holder = newClient().lock(name).acquire();
        assertThat(await(newClient().lock(name).tryAcquireAsync(Duration.ofMillis(300))))
                .isEmpty();
        assertThat(await(newClient().fairLock(name).tryAcquireAsync(Duration.ofMillis(300))))
                .isEmpty();
        assertThat(await(newClient().lock(name).tryAcquireAsync(Duration.ZERO))).isEmpty();
        holder.release();
        assertThat(residue(name)).isEmpty();
        Optional<LockHold> later = await(newClient().lock(name).tryAcquireAsync(Duration.ZERO, Duration.ofSeconds(5)));
        assertThat(later).isPresent();
        later.get().release();
    }

    @Test
    default void cancel_beforeTheFirstAttempt_leavesNothing() throws Exception {
        String name = uniqueName();
        DistributedLock lock = newClient().lock(name);
        for (int i = 0; i < 20; i++) {
            CompletableFuture<LockHold> f = lock.acquireAsync();
            if (!f.cancel(false)) {
                f.join().release(); // the acquire won: its owner releases
            }
        }
        Eventually.within(
                CLEANUP, "nothing left: " + residue(name), () -> residue(name).isEmpty());
        assertThat(newClient().lock(name).tryLock()).isTrue();
    }

    @Test
    default void cancel_whileWaiting_leavesNothing() throws Exception {
        cancelWhileWaiting(false);
    }

    @Test
    default void fairCancel_whileWaiting_leavesNoQueueEntry() throws Exception {
        cancelWhileWaiting(true);
    }

    private void cancelWhileWaiting(boolean fair) throws Exception {
        String name = uniqueName();
        LockClient client = newClient();
        DistributedLock holder = fair ? client.fairLock(name) : client.lock(name);
        LockHold h = holder.acquire();
        List<CompletableFuture<LockHold>> waiting = new ArrayList<>();
        for (LockClient c : List.of(client, newClient())) {
            DistributedLock l = fair ? c.fairLock(name) : c.lock(name);
            waiting.add(l.acquireAsync());
            waiting.add(l.acquireAsync());
        }
        Timing.sleep(Duration.ofMillis(300));
        for (CompletableFuture<LockHold> f : waiting) {
            assertThat(f.cancel(false)).as("cancelled while waiting").isTrue();
        }
        h.release();
        Eventually.within(
                CLEANUP, "nothing left: " + residue(name), () -> residue(name).isEmpty());
        DistributedLock later = fair ? newClient().fairLock(name) : newClient().lock(name);
        long start = System.nanoTime();
        assertThat(later.tryLock(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        assertThat(System.nanoTime() - start)
                .as("granted at once: no cancelled waiter ahead of it")
                .isLessThan(Timing.seconds(2).toNanos());
        later.unlock();
    }

    @Test
    default void cancel_afterTheGrant_isRefused_andTheHoldStays() throws Exception {
        String name = uniqueName();
        CompletableFuture<LockHold> f = newClient().lock(name).acquireAsync();
        LockHold h = await(f);
        assertThat(f.cancel(false)).isFalse();
        assertThat(h.isValid()).isTrue();
        assertThat(newClient().lock(name).tryLock()).isFalse();
        h.release();
        assertThat(residue(name)).isEmpty();
    }

    /** The cancel and the grant race: whichever wins, the lock ends up free, never held by an owner nobody has. */
    @Test
    default void cancel_racingAGrant_leavesNoOrphanedHold() throws Exception {
        String name = uniqueName();
        LockClient one = newClient();
        LockClient other = newClient();
        for (int i = 0; i < 30; i++) {
            LockHold h = one.lock(name).acquire();
            LockClient waiterClient = i % 2 == 0 ? one : other; // a local hand-off, then a wake-up from the store
            CompletableFuture<LockHold> f = waiterClient.lock(name).acquireAsync();
            Timing.sleep(Duration.ofMillis(20));
            Thread releaser = new Thread(h::release);
            releaser.start();
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(50L * (i % 10)));
            boolean cancelled = f.cancel(false);
            releaser.join();
            if (!cancelled) {
                await(f).release(); // the grant came first: its owner releases it
            }
            Eventually.within(CLEANUP, "round " + i + ": nothing left: " + residue(name), () -> residue(name)
                    .isEmpty());
        }
        assertThat(newClient().lock(name).tryLock()).isTrue();
    }

    @Test
    default void completedFromOutside_orTimeout_leavesNothing() throws Exception {
        String name = uniqueName();
        LockHold holder = newClient().lock(name).acquire();
        CompletableFuture<LockHold> f =
                newClient().fairLock(name).acquireAsync().orTimeout(300, TimeUnit.MILLISECONDS);
        assertThatThrownBy(() -> await(f)).hasCauseInstanceOf(java.util.concurrent.TimeoutException.class);
        holder.release();
        Eventually.within(
                CLEANUP, "nothing left: " + residue(name), () -> residue(name).isEmpty());
    }

    /**
     * Many acquisitions at once in one client, over 100 names, each released when it completes: all complete, one at
     * a time per name, and the client waits for them on its own few threads, not one per waiter.
     */
    @Test
    default void manyAsyncAcquisitions_completeOnABoundedNumberOfThreads() throws Exception {
        String prefix = uniqueName() + "-";
        int n = asyncAcquisitions();
        int names = 100;
        LockClient client = newClient();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        int before = threads.getThreadCount();
        threads.resetPeakThreadCount();
        AtomicInteger[] inside = new AtomicInteger[names];
        for (int i = 0; i < names; i++) {
            inside[i] = new AtomicInteger();
        }
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger clientThreads = new AtomicInteger();
        List<CompletableFuture<Void>> all = new ArrayList<>(n);
        // the first holders keep their names until every acquisition was asked for, so that all the others wait
        CompletableFuture<Void> allAsked = new CompletableFuture<>();
        for (int i = 0; i < n; i++) {
            int k = i % names;
            all.add(client.lock(prefix + k).acquireAsync().thenCompose(h -> {
                if (inside[k].incrementAndGet() != 1) {
                    overlaps.incrementAndGet();
                }
                return allAsked.thenCompose(unused -> {
                    clientThreads.accumulateAndGet(countThreads(client.clientId()), Math::max);
                    inside[k].decrementAndGet();
                    return h.releaseAsync();
                });
            }));
        }
        Timing.sleep(Duration.ofMillis(500));
        allAsked.complete(null);
        CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0]))
                .get(Timing.seconds(120).toMillis(), TimeUnit.MILLISECONDS);
        int peak = threads.getPeakThreadCount();
        assertThat(overlaps.get()).as("two holders of one name at once").isZero();
        assertThat(peak - before)
                .as("threads started while %d acquisitions waited (peak %d, before %d)", n, peak, before)
                .isLessThan(100);
        // the client's own pool (docs/async.md: max(16, 2 x processors)), plus its timer, watchdog and store threads
        int ownBound = Math.max(16, 2 * Runtime.getRuntime().availableProcessors()) + 8;
        assertThat(clientThreads.get()).as("the client's own threads").isLessThanOrEqualTo(ownBound);
        for (int i = 0; i < names; i += 25) {
            assertThat(residue(prefix + i)).isEmpty();
        }
    }

    private static int countThreads(String clientId) {
        int count = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().contains(clientId)) {
                count++;
            }
        }
        return count;
    }

    @Test
    default void unreachableStore_completesExceptionallyWithTheCause() throws Exception {
        Optional<LockClient> made = createUnreachableClient();
        Assumptions.assumeTrue(made.isPresent(), "this backend makes no client of an unreachable store");
        try (LockClient client = made.get()) {
            String name = uniqueName();
            for (CompletableFuture<?> f : List.of(
                    client.lock(name).acquireAsync(),
                    client.lock(name).tryAcquireAsync(Duration.ofSeconds(1)),
                    client.fairLock(name).tryAcquireAsync(Duration.ZERO))) {
                ExecutionException e = (ExecutionException) catchThrown(f);
                Throwable failure = Objects.requireNonNull(e.getCause());
                assertThat(failure).isInstanceOf(DistributedLockException.class);
                assertThat(failure.getCause()).as("the store's failure").isNotNull();
            }
        }
    }

    private static Throwable catchThrown(CompletableFuture<?> f) {
        try {
            f.get(Timing.seconds(60).toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            return e;
        }
        throw new AssertionError("completed normally");
    }
}
