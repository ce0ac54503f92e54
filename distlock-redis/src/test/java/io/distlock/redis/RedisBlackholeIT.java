package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLock;
import io.distlock.DistributedLockException;
import io.distlock.DistributedSemaphore;
import io.distlock.LockHold;
import io.distlock.LockListener;
import io.distlock.LockLostException;
import io.distlock.PermitHold;
import io.distlock.testkit.Timing;
import io.distlock.testkit.fault.Fault;
import io.distlock.testkit.fault.FaultProxy;
import io.distlock.testkit.server.RedisServer;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A link to the server that drops every packet silently (no RST, no FIN), as a network partition does: the client's
 * calls must end within the command timeout instead of Lettuce's 60 s default, and a hold whose renewals get no
 * answer must be told lost by its validity deadline, not when the link heals. The client talks to the server through a
 * {@link FaultProxy} in blackhole mode; its watchdog lease is 2 s, so its default command timeout is 1 s (the renewal
 * interval, 2/3 s, raised to the 1 s floor). Every bound below has a margin of seconds: they tell a bounded call from one that waits for the
 * heal (15 s) or Lettuce's default timeout (60 s).
 */
class RedisBlackholeIT {
    @RegisterExtension
    static final RedisServer redis = RedisServer.onFreePort();

    private static final String PREFIX = "blackhole-it:";
    private static final Duration LEASE = Duration.ofSeconds(2);
    private static final Duration RENEWAL_INTERVAL = LEASE.dividedBy(3);
    /** The default command timeout of a client with {@link #LEASE}: the renewal interval, but at least 1 s. */
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(1);

    private static final Duration HEAL_AFTER = Duration.ofSeconds(15);
    private static final Duration MARGIN = Timing.millis(1500);

    /** A client with a 2 s watchdog lease and its default command timeout, through {@code proxy}. */
    private static RedisLockClient client(FaultProxy proxy) {
        return client(proxy, LEASE);
    }

    private static RedisLockClient client(FaultProxy proxy, Duration lease) {
        return RedisLockClient.builder()
                .uri("redis://127.0.0.1:" + proxy.port())
                .keyPrefix(PREFIX)
                .leaseTime(lease)
                .build();
    }

    /** A client straight to the server. */
    private static RedisLockClient direct() {
        return RedisLockClient.builder()
                .uri(redis.uri())
                .keyPrefix(PREFIX)
                .leaseTime(LEASE)
                .build();
    }

    /** Tells its first loss. */
    private static final class LossLatch implements LockListener {
        final CountDownLatch lost = new CountDownLatch(1);
        volatile @Nullable Throwable cause;

        @Override
        public void lost(String name, long fencingToken, @Nullable Throwable cause) {
            this.cause = cause;
            lost.countDown();
        }
    }

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aBlackholedLink_tellsAWatchdogHoldLost_byItsValidityDeadline() throws Exception {
        try (FaultProxy proxy = FaultProxy.start(redis.port());
                RedisLockClient client = client(proxy)) {
            DistributedLock lock = client.lock("lost-by-deadline");
            LossLatch listener = new LossLatch();
            lock.addListener(listener);
            LockHold hold = lock.acquire();
            try (Fault cut = proxy.blackhole(HEAL_AFTER)) {
                // the last renewal the server confirmed was sent before the cut: the hold is valid until at most a
                // lease after it, and the overdue check runs four times per renewal interval
                Duration bound = LEASE.plus(RENEWAL_INTERVAL).plus(MARGIN);
                assertThat(listener.lost.await(bound.toMillis(), TimeUnit.MILLISECONDS))
                        .as("lost told within %s of the cut (lease + renewal interval + margin)", bound)
                        .isTrue();
                assertThat(cut.isActive()).as("still cut off when told").isTrue();
                assertThat(listener.cause)
                        .as("told with the reason: no renewal confirmed in time")
                        .isInstanceOf(TimeoutException.class);
                assertThat(hold.isValid()).isFalse();
                assertThatThrownBy(hold::release).isInstanceOf(LockLostException.class);
            }
        }
    }

    @Test
    void defaultCommandTimeout_isTheRenewalIntervalAtLeast1s_orTheUrisTimeoutWhenShorter() {
        try (FaultProxy proxy = FaultProxy.start(redis.port());
                RedisLockClient client = client(proxy)) {
            assertThat(client.store().connections().timeout()).isEqualTo(COMMAND_TIMEOUT);
        }
        try (RedisLockClient client = RedisLockClient.builder()
                .uri(redis.uri() + "?timeout=200ms")
                .leaseTime(LEASE)
                .build()) {
            assertThat(client.store().connections().timeout()).isEqualTo(Duration.ofMillis(200));
        }
        try (RedisLockClient client = RedisLockClient.builder()
                .uri(redis.uri())
                .leaseTime(LEASE)
                .commandTimeout(Duration.ofSeconds(5))
                .build()) {
            assertThat(client.store().connections().timeout()).isEqualTo(Duration.ofSeconds(5));
        }
    }

    /**
     * A hold granted with the wake-up of a release is valid for its claim time (1 s) only, until a renewal of its own,
     * ahead of the watchdog's tick (3 s with a 9 s lease), confirms it. When that renewal gets no answer, the hold must
     * be told lost when the claim time ends, not when the renewal's command times out (3 s) or the link heals.
     */
    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aBlackholedLink_tellsAHoldGrantedWithTheWakeUpLost_byTheEndOfItsClaimTime() throws Exception {
        Duration lease = Duration.ofSeconds(9);
        try (FaultProxy proxy = FaultProxy.start(redis.port());
                RedisLockClient client = client(proxy, lease);
                RedisLockClient other = direct()) {
            String name = "granted-with-wake-up";
            LockHold theirs = other.lock(name).acquire();
            DistributedLock lock = client.lock(name);
            LossLatch listener = new LossLatch();
            lock.addListener(listener);
            CompletableFuture<LockHold> waiting = CompletableFuture.supplyAsync(() -> {
                try {
                    return lock.acquire();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            });
            String order = KeyLayout.key(new KeyLayout(PREFIX).tag(name), KeyLayout.WAKE_ORDER);
            long deadline = System.nanoTime() + Timing.seconds(10).toNanos();
            while (redis.command("ZCARD", order).equals("0") && System.nanoTime() < deadline) {
                Thread.sleep(10); // until the waiter is in the server's queue, so the release grants it to it
            }
            theirs.release();
            LockHold hold = waiting.get(10, TimeUnit.SECONDS);
            // cut at once: the early renewal is due half-way through the claim time
            try (Fault cut = proxy.blackhole(HEAL_AFTER)) {
                while (client.store().waits().grantsTaken() == 0 && System.nanoTime() < deadline) {
                    Thread.sleep(5); // counted on the I/O thread just after the waiter was handed the grant
                }
                assertThat(client.store().waits().grantsTaken())
                        .as("granted with the wake-up, for the claim time")
                        .isEqualTo(1);
                // the overdue check runs four times per renewal interval (every 0.75 s here)
                Duration bound = WaitRegistry.CLAIM.plus(lease.dividedBy(12)).plus(Timing.millis(1000));
                assertThat(listener.lost.await(bound.toMillis(), TimeUnit.MILLISECONDS))
                        .as("lost told within %s of the grant (claim time + overdue check + margin)", bound)
                        .isTrue();
                assertThat(cut.isActive()).as("still cut off when told").isTrue();
                assertThat(hold.isValid()).isFalse();
            }
        }
    }

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aBlackholedLink_tellsAPermitHoldLost_byItsValidityDeadline() throws Exception {
        try (FaultProxy proxy = FaultProxy.start(redis.port());
                RedisLockClient client = client(proxy)) {
            DistributedSemaphore semaphore = client.semaphore("permits-lost-by-deadline", 2);
            LossLatch listener = new LossLatch();
            semaphore.addListener(listener);
            PermitHold hold = semaphore.acquire();
            try (Fault cut = proxy.blackhole(HEAL_AFTER)) {
                Duration bound = LEASE.plus(RENEWAL_INTERVAL).plus(MARGIN);
                assertThat(listener.lost.await(bound.toMillis(), TimeUnit.MILLISECONDS))
                        .as("lost told within %s of the cut (lease + renewal interval + margin)", bound)
                        .isTrue();
                assertThat(cut.isActive()).as("still cut off when told").isTrue();
                assertThat(hold.isValid()).isFalse();
                assertThatThrownBy(hold::release).isInstanceOf(LockLostException.class);
            }
        }
    }

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aBlackholedLink_failsATryAcquire_withinItsWaitAndTwiceTheCommandTimeout() throws Exception {
        try (FaultProxy proxy = FaultProxy.start(redis.port());
                RedisLockClient client = client(proxy)) {
            DistributedLock lock = client.lock("try-acquire");
            lock.acquire().release(); // scripts loaded, connection warm
            try (Fault cut = proxy.blackhole(HEAL_AFTER)) {
                Duration wait = Duration.ofSeconds(1);
                CompletableFuture<Optional<LockHold>> attempt = CompletableFuture.supplyAsync(() -> {
                    try {
                        return lock.tryAcquire(wait);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException(e);
                    }
                });
                // the attempt times out, then its clean-up (the attempt may have been granted): a timeout each
                Duration bound = wait.plus(COMMAND_TIMEOUT.multipliedBy(2)).plus(MARGIN);
                Throwable failure = awaitFailure(attempt, bound);
                assertThat(cut.isActive()).as("still cut off when it ended").isTrue();
                // a store that does not answer is a failure with its cause, never a silent "busy"
                assertThat(failure).isInstanceOf(DistributedLockException.class);
                assertThat(failure.getCause()).as("cause of %s", failure).isNotNull();
            }
        }
    }

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aBlackholedLink_failsARelease_withinTheCommandTimeout_andLeavesTheHoldToItsLease() throws Exception {
        try (FaultProxy proxy = FaultProxy.start(redis.port());
                RedisLockClient client = client(proxy);
                RedisLockClient other = direct()) {
            DistributedLock lock = client.lock("release");
            LockHold hold = lock.acquire();
            try (Fault cut = proxy.blackhole(HEAL_AFTER)) {
                CompletableFuture<Void> release = CompletableFuture.runAsync(hold::release);
                // a renewal in flight is waited for (one command timeout), then the release itself (another)
                Duration bound = COMMAND_TIMEOUT.multipliedBy(2).plus(MARGIN);
                Throwable failure = awaitFailure(release, bound);
                assertThat(failure).isInstanceOf(DistributedLockException.class);
                assertThat(failure.getCause()).as("cause of %s", failure).isNotNull();
                assertThat(hold.isValid()).isFalse();
                // the hold is still on the server, and ends there with its lease, while the link is still cut
                DistributedLock theirs = other.lock("release");
                Optional<LockHold> taken = theirs.tryAcquire(LEASE.plus(MARGIN));
                assertThat(taken)
                        .as("granted to another client once the lease ended")
                        .isPresent();
                assertThat(cut.isActive()).as("still cut off when granted").isTrue();
                taken.get().release();
            }
        }
    }

    /**
     * Waits at most {@code bound} for {@code call} to fail; returns its failure. Fails the test when it did not end in
     * time, or returned.
     */
    private static Throwable awaitFailure(CompletableFuture<?> call, Duration bound) throws Exception {
        try {
            Object result = call.get(bound.toMillis(), TimeUnit.MILLISECONDS);
            throw new AssertionError("the call returned " + result + " while the store could not be reached");
        } catch (ExecutionException e) {
            Throwable t = Objects.requireNonNull(e.getCause(), "cause");
            Throwable inner = t.getCause();
            return t instanceof CompletionException && inner != null ? inner : t;
        } catch (TimeoutException e) {
            throw new AssertionError("the call did not end within " + bound + " of the cut", e);
        }
    }
}
