package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.distlock.DistributedLock;
import io.distlock.DistributedLockException;
import io.distlock.LockLostException;
import io.distlock.PermitHold;
import io.distlock.testkit.Timing;
import io.distlock.testkit.fault.Fault;
import io.distlock.testkit.fault.FaultProxy;
import io.distlock.testkit.server.RedisServer;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A release that Redis applied but whose answer was lost with the connection (FAULTS.md G6): Lettuce writes the
 * command again once it has reconnected, and that second write finds the hold gone. The release must then answer
 * "unknown" ({@link DistributedLockException}), never "lost": the caller's hold did not end behind its back, its own
 * release ended it. The client talks to the server through a {@link FaultProxy} that forwards the release, drops the
 * answer and closes the connection (and does the same to every connection for 200 ms, so the reconnect is tried a few
 * times); its command timeout, 2 s, outlasts the reconnect.
 */
class RedisReleaseReplyLostIT {
    @RegisterExtension
    static final RedisServer redis = RedisServer.onFreePort();

    private static final String PREFIX = "reply-lost-it:";
    private static final Duration LEASE = Duration.ofSeconds(6);
    private static final Duration FAULT = Duration.ofMillis(200);

    private static RedisLockClient client(String uri) {
        return RedisLockClient.builder()
                .uri(uri)
                .keyPrefix(PREFIX)
                .leaseTime(LEASE)
                .build();
    }

    private static String name() {
        return "g6-" + UUID.randomUUID();
    }

    /** What {@code release} threw once the proxy dropped its answer, with the proxy's count of dropped answers. */
    private static @Nullable Throwable releasedWhileAnswersDrop(FaultProxy proxy, Runnable release) {
        long before = proxy.droppedReplies();
        Throwable thrown;
        try (Fault f = proxy.dropReplies(FAULT)) {
            thrown = catchThrowable(release::run);
        }
        assertThat(proxy.droppedReplies() - before)
                .as("the release's answer was dropped")
                .isPositive();
        return thrown;
    }

    /** The proxy drops the first answer of every connection, so the release cannot have been answered "released". */
    private static void assertUnknownNotLost(@Nullable Throwable thrown) {
        assertThat(thrown)
                .as("an applied release whose answer was lost")
                .isInstanceOf(DistributedLockException.class)
                .isNotInstanceOf(LockLostException.class)
                .hasMessageContaining("unknown");
    }

    @Test
    void lockRelease_applied_answerLost_isUnknown_notLost() {
        String name = name();
        try (FaultProxy proxy = FaultProxy.start(redis.port());
                RedisLockClient holder = client("redis://127.0.0.1:" + proxy.port());
                RedisLockClient other = client(redis.uri())) {
            DistributedLock lock = holder.lock(name);
            lock.lock();
            assertUnknownNotLost(releasedWhileAnswersDrop(proxy, lock::unlock));
            assertThat(other.lock(name).tryLock()).as("the release took effect").isTrue();
            other.lock(name).unlock();
        }
    }

    @Test
    void lockRelease_toAWaitingClient_applied_answerLost_isUnknown_notLost() throws Exception {
        String name = name();
        try (FaultProxy proxy = FaultProxy.start(redis.port());
                RedisLockClient holder = client("redis://127.0.0.1:" + proxy.port());
                RedisLockClient other = client(redis.uri())) {
            DistributedLock lock = holder.lock(name);
            // a first contended release: the name is seen contended, so the next release runs lock-release.lua at once
            lock.lock();
            Thread first = waitFor(other.lock(name));
            lock.unlock();
            first.join(Timing.seconds(20).toMillis());
            lock.lock();
            Thread second = waitFor(other.lock(name));
            assertUnknownNotLost(releasedWhileAnswersDrop(proxy, lock::unlock));
            second.join(Timing.seconds(20).toMillis());
            assertThat(second.isAlive())
                    .as("the waiting client got the lock and left")
                    .isFalse();
            assertThat(other.lock(name).tryLock()).as("nothing left held").isTrue();
            other.lock(name).unlock();
        }
    }

    /** A thread that waits up to 20 s for {@code lock}, holds it for a moment and unlocks; started once it waits. */
    private static Thread waitFor(DistributedLock lock) throws InterruptedException {
        Thread waiter = new Thread(() -> {
            try {
                if (lock.tryLock(Timing.seconds(20).toMillis(), TimeUnit.MILLISECONDS)) {
                    Thread.sleep(50);
                    lock.unlock();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        waiter.start();
        Thread.sleep(300); // queued in the store by then
        return waiter;
    }

    @Test
    void semaphoreRelease_applied_answerLost_isUnknown_notLost() {
        String name = name();
        try (FaultProxy proxy = FaultProxy.start(redis.port());
                RedisLockClient holder = client("redis://127.0.0.1:" + proxy.port());
                RedisLockClient other = client(redis.uri())) {
            Optional<PermitHold> hold = holder.semaphore(name, 1).tryAcquire(1);
            assertThat(hold).isPresent();
            assertUnknownNotLost(releasedWhileAnswersDrop(proxy, hold.get()::release));
            Optional<PermitHold> again = other.semaphore(name, 1).tryAcquire(1);
            assertThat(again).as("the permit came back").isPresent();
            again.get().release();
        }
    }
}
