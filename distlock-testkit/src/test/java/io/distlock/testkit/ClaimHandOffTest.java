package io.distlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedLockException;
import io.distlock.LockClient;
import io.distlock.LockHold;
import io.distlock.LockInfo;
import io.distlock.PermitHold;
import io.distlock.internal.EngineClient;
import io.distlock.internal.EngineConfig;
import io.distlock.internal.LockEngine;
import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.ClaimAdmin;
import io.distlock.spi.HandOff;
import io.distlock.spi.HandsOffClaims;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A release of a semaphore's or read-write lock's hold on a store that {@link HandsOffClaims} gives the permits to a
 * local waiter in the store's queue in the same round trip: the waiter makes no attempt after it, and a waiter that
 * gives up while the hand-off is on its way leaves nothing behind.
 */
@Timeout(30)
class ClaimHandOffTest {
    private final InMemoryLockServer server = InMemoryLockServer.create();
    private final Counting store = new Counting(InMemoryLockStore.of(server, false));
    private final LockClient client = new Client(LockEngine.create(store, EngineConfig.defaults()));

    @AfterEach
    void close() {
        client.close();
        server.close();
    }

    @Test
    void release_withALocalWaiterInTheQueue_handsThePermitToIt_withoutAnotherAttempt() throws Exception {
        var sem = client.semaphore("s", 1);
        PermitHold first = sem.acquire(1);
        CompletableFuture<PermitHold> waiter = CompletableFuture.supplyAsync(() -> acquire(sem));
        Eventually.within(Duration.ofSeconds(5), "the waiter queued", () -> store.attempts.get() == 3);
        Thread.sleep(100); // past its second, queued attempt's answer
        first.release();
        PermitHold second = waiter.get(5, TimeUnit.SECONDS);
        assertThat(store.handOffs).as("one hand-off").hasValue(1);
        assertThat(store.attempts).as("no attempt after it").hasValue(3);
        assertThat(second.isValid()).isTrue();
        assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
        assertThat(sem.availablePermits()).isZero();
        second.release();
        assertThat(server.residue("s")).as("nothing left").isEmpty();
    }

    @Test
    void waiterArrivingWhileTheNameIsSubscribed_asksOnce_andGetsThePermitInTurn() throws Exception {
        var sem = client.semaphore("s", 1);
        PermitHold first = sem.acquire(1);
        CompletableFuture<PermitHold> w1 = CompletableFuture.supplyAsync(() -> acquire(sem));
        Eventually.within(Duration.ofSeconds(5), "the first waiter queued", () -> store.attempts.get() == 3);
        Thread.sleep(100);
        CompletableFuture<PermitHold> w2 = CompletableFuture.supplyAsync(() -> acquire(sem));
        Thread.sleep(300);
        assertThat(store.attempts)
                .as("the second waiter joined before its one attempt: no second attempt")
                .hasValue(4);
        first.release();
        PermitHold second = w1.get(5, TimeUnit.SECONDS);
        second.release();
        w2.get(5, TimeUnit.SECONDS).release();
        assertThat(store.handOffs.get())
                .as("the first release handed the permit on")
                .isPositive();
        assertThat(server.residue("s")).isEmpty();
    }

    @Test
    void writeRelease_handsTheLockToAWaitingReader_andTheReadersShare() throws Exception {
        var rw = client.readWriteLock("rw");
        LockHold writer = rw.writeLock().acquire();
        CompletableFuture<LockHold> reader = CompletableFuture.supplyAsync(() -> {
            try {
                return rw.readLock().acquire();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        Eventually.within(Duration.ofSeconds(5), "the waiter queued", () -> store.attempts.get() == 3);
        Thread.sleep(100);
        writer.release();
        LockHold read = reader.get(5, TimeUnit.SECONDS);
        assertThat(store.handOffs).hasValue(1);
        Optional<LockHold> another = rw.readLock().tryAcquire(Duration.ZERO);
        assertThat(another).as("a second reader shares it").isPresent();
        another.get().release();
        read.release();
        assertThat(server.residue("rw")).isEmpty();
    }

    @Test
    void waiterThatTimesOut_whileTheHandOffIsOnItsWay_leavesNothingBehind() throws Exception {
        var sem = client.semaphore("s", 1);
        PermitHold first = sem.acquire(1);
        CompletableFuture<Void> release = releaseWhileTheWaiterTimesOut(sem, first);
        release.get(5, TimeUnit.SECONDS);
        assertThat(store.handOffs).hasValue(1);
        Eventually.within(
                Duration.ofSeconds(5), "the grant made for the waiter that left given back", () -> server.residue("s")
                        .isEmpty());
        assertThat(sem.availablePermits()).isEqualTo(1);
    }

    @Test
    void handOffWhoseAnswerIsLost_forAWaiterThatLeftMeanwhile_leavesNothingBehind() throws Exception {
        var sem = client.semaphore("s", 1);
        PermitHold first = sem.acquire(1);
        store.loseHandOffAnswer = true;
        CompletableFuture<Void> release = releaseWhileTheWaiterTimesOut(sem, first);
        assertThat(release).as("the release whose answer was lost fails").failsWithin(Duration.ofSeconds(5));
        assertThat(store.handOffs).hasValue(1);
        assertThat(server.residue("s"))
                .as("the grant made for the waiter that left, abandoned")
                .isEmpty();
        assertThat(sem.availablePermits()).isEqualTo(1);
    }

    @Test
    void handOffOfAHoldLostMeanwhile_forAWaiterThatLeft_leavesNothingBehind() throws Exception {
        var sem = client.semaphore("s", 1);
        PermitHold first = sem.acquire(1);
        store.loseHoldBeforeHandOff = true;
        CompletableFuture<Void> release = releaseWhileTheWaiterTimesOut(sem, first);
        assertThat(release).as("the release of a lost hold fails").failsWithin(Duration.ofSeconds(5));
        assertThat(server.residue("s"))
                .as("the queue entry of the waiter that left, abandoned")
                .isEmpty();
        assertThat(sem.availablePermits()).isEqualTo(1);
    }

    /**
     * A release hands the permit to a waiter whose own attempt is on its way; the attempt reaches the store after the
     * hand-off, and both answers carry the one grant: the waiter gets it once, and nothing else is granted.
     */
    @Test
    void handOffToAWaiterWhoseAttemptIsOnItsWay_theAttemptArrivingSecond_oneGrant() throws Exception {
        var sem = client.semaphore("s", 1);
        PermitHold first = sem.acquire(1);
        store.holdAttempt(3); // the waiter's second, queued attempt waits on its way
        CompletableFuture<PermitHold> waiter = CompletableFuture.supplyAsync(() -> acquire(sem));
        assertThat(store.attemptHeld.await(5, TimeUnit.SECONDS)).isTrue();
        first.release(); // hands off to the waiter though its attempt is on its way
        assertThat(store.handOffs).hasValue(1);
        store.attemptGate.countDown();
        PermitHold second = waiter.get(5, TimeUnit.SECONDS);
        assertThat(store.attempts).as("the attempt arrived after the hand-off").hasValue(3);
        assertThat(second.isValid()).isTrue();
        assertThat(sem.availablePermits()).as("one grant, not two").isZero();
        assertThat(sem.tryAcquire(1, Duration.ZERO)).isEmpty();
        second.release();
        assertThat(sem.availablePermits()).isEqualTo(1);
        assertThat(server.residue("s")).as("nothing left").isEmpty();
    }

    /**
     * The waiter's own attempt is granted first (a permit freed elsewhere) while a hand-off to it is on its way: the
     * hand-off answers the same grant, and the waiter returns it once the hand-off has come back.
     */
    @Test
    void handOffToAWaiterWhoseAttemptIsGrantedFirst_answersThatGrant() throws Exception {
        var sem = client.semaphore("s", 2);
        PermitHold first = sem.acquire(1);
        PermitHold other = sem.acquire(1);
        store.holdAttempt(4); // the waiter's second, queued attempt waits on its way
        CompletableFuture<PermitHold> waiter = CompletableFuture.supplyAsync(() -> acquire(sem));
        assertThat(store.attemptHeld.await(5, TimeUnit.SECONDS)).isTrue();
        store.slowHandOff = new CountDownLatch(1);
        CompletableFuture<Void> release = CompletableFuture.runAsync(first::release); // claims the waiter, held back
        Eventually.within(Duration.ofSeconds(5), "the hand-off on its way", () -> store.handOffs.get() == 1);
        other.release(); // no local waiter left to claim: a plain release frees a permit
        store.attemptGate.countDown(); // the waiter's attempt is granted
        Thread.sleep(200);
        assertThat(waiter).as("it waits for the hand-off on its way").isNotDone();
        store.slowHandOff.countDown();
        release.get(5, TimeUnit.SECONDS);
        PermitHold got = waiter.get(5, TimeUnit.SECONDS);
        assertThat(got.isValid()).isTrue();
        assertThat(sem.availablePermits()).as("one grant, not two").isEqualTo(1);
        got.release();
        assertThat(sem.availablePermits()).isEqualTo(2);
        assertThat(server.residue("s")).as("nothing left").isEmpty();
    }

    /**
     * Queues a waiter of {@code sem} (an 800 ms wait) behind {@code first}, then releases {@code first} with the
     * hand-off to that waiter held back until the wait has run out; returns the release, which the hand-off then ends.
     */
    private CompletableFuture<Void> releaseWhileTheWaiterTimesOut(
            io.distlock.DistributedSemaphore sem, PermitHold first) throws Exception {
        store.slowHandOff = new CountDownLatch(1);
        CompletableFuture<Optional<PermitHold>> waiter = CompletableFuture.supplyAsync(() -> {
            try {
                return sem.tryAcquire(1, Duration.ofMillis(800));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        Eventually.within(Duration.ofSeconds(5), "the waiter queued", () -> store.attempts.get() == 3);
        Thread.sleep(100);
        CompletableFuture<Void> release = CompletableFuture.runAsync(first::release);
        assertThat(waiter.get(5, TimeUnit.SECONDS))
                .as("the wait ran out during the hand-off")
                .isEmpty();
        store.slowHandOff.countDown();
        return release;
    }

    private static PermitHold acquire(io.distlock.DistributedSemaphore sem) {
        try {
            return sem.acquire(1);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The in-memory store, counting claim attempts and hand-offs; a hand-off may be held back by a latch. */
    private static final class Counting extends ForwardingClaimStore implements HandsOffClaims, ClaimAdmin {
        private final InMemoryLockStore handsOff;
        final AtomicInteger attempts = new AtomicInteger();
        final AtomicInteger handOffs = new AtomicInteger();
        volatile CountDownLatch slowHandOff = new CountDownLatch(0);
        volatile boolean loseHandOffAnswer;
        volatile boolean loseHoldBeforeHandOff;

        Counting(InMemoryLockStore delegate) {
            super(delegate);
            this.handsOff = delegate;
        }

        volatile int heldAttempt;
        volatile CountDownLatch attemptHeld = new CountDownLatch(0);
        volatile CountDownLatch attemptGate = new CountDownLatch(0);

        /** Holds the {@code n}th attempt on its way (before the store) until {@code attemptGate} opens. */
        void holdAttempt(int n) {
            attemptHeld = new CountDownLatch(1);
            attemptGate = new CountDownLatch(1);
            heldAttempt = n;
        }

        @Override
        public Attempt tryAcquire(Claim claim, boolean queue) {
            if (attempts.incrementAndGet() == heldAttempt) {
                attemptHeld.countDown();
                try {
                    var unused = attemptGate.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return super.tryAcquire(claim, queue);
        }

        @Override
        public Optional<LockInfo> inspect(LockKey key) {
            return handsOff.inspect(key);
        }

        @Override
        public List<LockInfo> list(String prefix, int limit) {
            return handsOff.list(prefix, limit);
        }

        @Override
        public Optional<LockInfo> forceRelease(LockKey key) {
            return handsOff.forceRelease(key);
        }

        @Override
        public Optional<LockInfo> forceRelease(LockKey key, OwnerId owner) {
            return handsOff.forceRelease(key, owner);
        }

        @Override
        public HandOff handOff(HeldClaim from, Claim to) {
            handOffs.incrementAndGet();
            try {
                var unused = slowHandOff.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (loseHoldBeforeHandOff) {
                var unused = handsOff.release(from); // as if its lease had run out
            }
            HandOff answer = handsOff.handOff(from, to);
            if (loseHandOffAnswer) {
                throw new DistributedLockException(
                        "the hand-off's answer was lost", new java.io.IOException("connection reset"));
            }
            return answer;
        }
    }

    private static final class Client extends EngineClient {
        Client(LockEngine engine) {
            super(engine);
        }
    }
}
