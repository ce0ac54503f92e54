package io.distlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLock;
import io.distlock.DistributedLockException;
import io.distlock.LockHold;
import io.distlock.LockLostException;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The engine's round-trip economy and watchdog rules, counted on a fake store with a hand-driven clock. */
class LockEngineTest {
    final FakeLockStore store = new FakeLockStore();
    final FakeTicker ticker = new FakeTicker();
    final List<LockEngine> engines = new ArrayList<>();

    /** An engine on the real clock: for tests that wait. */
    LockEngine engine(Duration lease) {
        return engine(lease, Ticker.system());
    }

    /** An engine on the hand-driven clock: for tests of lease bookkeeping that never wait. */
    LockEngine engine(Duration lease, Ticker clock) {
        LockEngine e = LockEngine.create(
                store.view(), EngineConfig.defaults().withWatchdogLease(lease).withTicker(clock));
        engines.add(e);
        return e;
    }

    @AfterEach
    void close() {
        engines.forEach(LockEngine::close);
    }

    @Test
    void lockUnlock_uncontended_isOneRoundTripEach() {
        DistributedLock lock = engine(Duration.ofSeconds(30)).lock("a");
        lock.lock();
        lock.unlock();
        assertThat(store.tryAcquireCalls).hasValue(1);
        assertThat(store.releaseCalls).hasValue(1);
        assertThat(store.subscribeCalls).hasValue(0);
    }

    @Test
    void reentry_costsNoRoundTrip() {
        DistributedLock lock = engine(Duration.ofSeconds(30)).lock("a");
        lock.lock();
        for (int i = 0; i < 100; i++) {
            lock.lock();
        }
        for (int i = 0; i < 100; i++) {
            lock.unlock();
        }
        assertThat(store.tryAcquireCalls).hasValue(1);
        assertThat(store.releaseCalls).hasValue(0);
        lock.unlock();
        assertThat(store.releaseCalls).hasValue(1);
    }

    @Test
    void release_withLocalWaiter_handsOffInOneRoundTrip() throws Exception {
        LockEngine engine = engine(Duration.ofSeconds(30));
        DistributedLock lock = engine.lock("a");
        lock.lock();
        long first = lock.fencingToken();
        long[] second = new long[1];
        CountDownLatch started = new CountDownLatch(1);
        Thread t = new Thread(() -> {
            started.countDown();
            lock.lock();
            second[0] = lock.fencingToken();
            lock.unlock();
        });
        t.start();
        started.await();
        Thread.sleep(100);
        int triesBefore = store.tryAcquireCalls.get();
        lock.unlock();
        t.join(5000);
        assertThat(store.handOffCalls).hasValue(1);
        assertThat(store.tryAcquireCalls)
                .as("the waiter asked the store nothing")
                .hasValue(triesBefore);
        assertThat(second[0]).isGreaterThan(first);
    }

    /** Starts threads that each lock, note their token and unlock; returns once all of them are parked waiting. */
    private static List<Thread> parkedWaiters(DistributedLock lock, int count, List<Long> tokens)
            throws InterruptedException {
        List<Thread> waiters = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Thread t = new Thread(() -> {
                lock.lock();
                tokens.add(lock.fencingToken());
                lock.unlock();
            });
            t.start();
            waiters.add(t);
        }
        for (Thread t : waiters) {
            awaitParked(t);
        }
        return waiters;
    }

    /** Runs a timed tryLock that must fail in a thread of its own, and waits for it. */
    private static void failedTryLockInAThread(DistributedLock lock, long millis) throws InterruptedException {
        Thread t = new Thread(() -> {
            try {
                assertThat(lock.tryLock(millis, TimeUnit.MILLISECONDS)).isFalse();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        t.start();
        t.join(5000);
    }

    private static void joinAll(List<Thread> threads) throws InterruptedException {
        for (Thread t : threads) {
            t.join(5000);
            assertThat(t.isAlive()).isFalse();
        }
    }

    @Test
    void succession_withSpareTokens_noRoundTrip_thenHandOffWhenTheyRunOut() throws Exception {
        store.spareTokens = 2;
        LockEngine engine = engine(Duration.ofSeconds(30));
        DistributedLock lock = engine.lock("s");
        lock.lock();
        long first = lock.fencingToken();
        int triesBefore = store.tryAcquireCalls.get();
        List<Long> tokens = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<Thread> waiters = parkedWaiters(lock, 4, tokens);
        Thread.sleep(50);
        engine.tickWatchdog(); // a renewal while the first owner holds
        lock.unlock();
        joinAll(waiters);
        // first -> w1 and w1 -> w2 take the two spare tokens; then the spares are used up and w2 -> w3 and w3 -> w4 are
        // hand-offs through the store with fresh tokens (a store hand-off reserves none)
        assertThat(tokens).containsExactly(first + 1, first + 2, first + 3, first + 4);
        assertThat(store.handOffCalls).as("store hand-offs").hasValue(2);
        assertThat(store.tryAcquireCalls).as("waiters asked the store nothing").hasValue(triesBefore);
        assertThat(store.releaseCalls)
                .as("one release, under the owner the store knows")
                .hasValue(1);
        assertThat(store.holders).isEmpty();
    }

    @Test
    void succession_onAQueueOrderedStore_lastsAsLongAsTheSpareTokens_thenTheHandOffRespectsTheQueue() throws Exception {
        // ZooKeeper: its queue is the order between clients, and its grants (hand-offs too) reserve spare tokens
        store.queuesEveryWaiter = true;
        store.spareTokens = 2;
        store.handOffSpareTokens = 2;
        LockEngine engine = engine(Duration.ofSeconds(30));
        DistributedLock lock = engine.lock("q");
        lock.lock();
        long first = lock.fencingToken();
        int triesBefore = store.tryAcquireCalls.get();
        List<Long> tokens = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<Thread> waiters = parkedWaiters(lock, 6, tokens);
        lock.unlock();
        joinAll(waiters);
        // two successions on the acquisition's spare tokens, a hand-off through the store (which would answer
        // "queued" if another client waited: the queue is respected), two successions on its spare tokens, a hand-off
        assertThat(tokens).containsExactly(first + 1, first + 2, first + 3, first + 4, first + 5, first + 6);
        assertThat(store.handOffCalls).as("store hand-offs").hasValue(2);
        assertThat(store.tryAcquireCalls).as("waiters asked the store nothing").hasValue(triesBefore);
        assertThat(store.releaseCalls).as("one release").hasValue(1);
        assertThat(store.holders).isEmpty();
    }

    @Test
    void succession_isRenewedAndReleasedUnderTheAcquiringOwner() throws Exception {
        store.spareTokens = 5;
        LockEngine engine = engine(Duration.ofSeconds(30));
        DistributedLock lock = engine.lock("r");
        lock.lock();
        OwnerId acquiring = store.holders.get("r");
        Thread waiter = new Thread(() -> {
            lock.lock();
            // the releasing thread puts the successor under the watchdog just after handing it over
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (engine.watchdogSize() == 0 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            engine.tickWatchdog();
            assertThat(lock.isHeldByCurrentThread()).as("renewed, not lost").isTrue();
            assertThat(store.holders.get("r"))
                    .as("the store's owner is unchanged")
                    .isEqualTo(acquiring);
            lock.unlock();
        });
        waiter.start();
        awaitParked(waiter);
        Thread.sleep(50);
        lock.unlock();
        waiter.join(5000);
        assertThat(waiter.isAlive()).isFalse();
        assertThat(store.renewBatchSizes).contains(1);
        assertThat(store.holders).as("released through the acquiring owner").isEmpty();
    }

    /**
     * A hold found lost in a store without leases of its own is ended there by its token, under the owner the store
     * keeps it under: after a succession that is the acquiring owner, which may be acquiring again by then, so ending
     * "whatever that owner has" could end its new hold.
     */
    @Test
    void lostSuccession_inAStoreWithoutLeases_isEndedByItsStoreOwnerAndToken() throws Exception {
        store.expiresHolds = false;
        store.spareTokens = 5;
        LockEngine engine = engine(Duration.ofSeconds(30));
        DistributedLock lock = engine.lock("l");
        lock.lock();
        OwnerId acquiring = java.util.Objects.requireNonNull(store.holders.get("l"));
        long acquired = lock.fencingToken();
        java.util.concurrent.atomic.AtomicLong successorToken = new java.util.concurrent.atomic.AtomicLong();
        Thread successor = new Thread(() -> {
            lock.lock();
            successorToken.set(lock.fencingToken());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (engine.watchdogSize() == 0 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            store.holders.put("l", new OwnerId("other:t1")); // taken over behind the client's back
            engine.tickWatchdog();
            assertThat(lock.isHeldByCurrentThread()).as("found lost").isFalse();
        });
        successor.start();
        awaitParked(successor);
        lock.unlock();
        successor.join(5000);
        assertThat(successor.isAlive()).isFalse();
        assertThat(successorToken.get()).as("a succession").isEqualTo(acquired + 1);
        assertThat(store.abandonedHolds).containsExactly(HeldClaim.lock(new LockKey("l"), acquiring, acquired));
        assertThat(store.holders.get("l")).as("the other owner's hold stays").isEqualTo(new OwnerId("other:t1"));
    }

    /**
     * Holds that one renewal finds lost are all told before any of them is ended in the store: in a store without
     * leases of its own each ending is a round trip, a slow one when the store cannot be reached.
     */
    @Test
    void holdsFoundLostTogether_areAllToldBeforeAnyIsEndedInTheStore() throws Exception {
        store.expiresHolds = false;
        LockEngine engine = engine(Duration.ofSeconds(30));
        List<String> told = new CopyOnWriteArrayList<>();
        List<LockHold> holds = new ArrayList<>();
        for (String name : List.of("a", "b", "c")) {
            DistributedLock lock = engine.lock(name);
            lock.addListener(new io.distlock.LockListener() {
                @Override
                public void lost(String n, long token, @org.jspecify.annotations.Nullable Throwable cause) {
                    told.add(n);
                }
            });
            holds.add(lock.acquire());
            store.holders.put(name, new OwnerId("other:t1")); // taken over behind the client's back
        }
        CountDownLatch inAbandon = new CountDownLatch(1);
        CountDownLatch storeBack = new CountDownLatch(1);
        List<String> toldAtFirstAbandon = new CopyOnWriteArrayList<>();
        store.duringAbandonHold = () -> {
            if (inAbandon.getCount() > 0) {
                toldAtFirstAbandon.addAll(told);
                inAbandon.countDown();
            }
            try {
                var unused = storeBack.await(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        Thread tick = new Thread(engine::tickWatchdog);
        tick.start();
        try {
            assertThat(inAbandon.await(5, TimeUnit.SECONDS))
                    .as("a lost hold ended in the store")
                    .isTrue();
            assertThat(toldAtFirstAbandon).containsExactlyInAnyOrder("a", "b", "c");
        } finally {
            storeBack.countDown();
            tick.join(5000);
        }
        assertThat(store.abandonedHolds).hasSize(3);
        for (LockHold h : holds) {
            assertThat(h.isValid()).isFalse();
            assertThatThrownBy(h::release).isInstanceOf(LockLostException.class);
        }
    }

    /** A lost hold whose telling throws (a metrics hook) keeps neither the others from being told nor from being ended. */
    @Test
    void holdsFoundLostTogether_aTellingThatThrows_othersStillToldAndEndedInTheStore() throws Exception {
        store.expiresHolds = false;
        LockEngine engine = LockEngine.create(
                store.view(),
                EngineConfig.defaults()
                        .withWatchdogLease(Duration.ofSeconds(30))
                        .withMetrics(new LockMetrics() {
                            @Override
                            public void lost(String name) {
                                if (name.equals("b")) {
                                    throw new IllegalStateException("metrics backend down");
                                }
                            }
                        }));
        engines.add(engine);
        List<LockHold> holds = new ArrayList<>();
        for (String name : List.of("a", "b", "c")) {
            holds.add(engine.lock(name).acquire());
            store.holders.put(name, new OwnerId("other:t1")); // taken over behind the client's back
        }

        engine.tickWatchdog();

        for (LockHold h : holds) {
            assertThat(h.isValid()).isFalse();
        }
        assertThat(store.abandonedHolds)
                .extracting(held -> held.key().name())
                .as("ended in the store, but for the one whose telling threw")
                .containsExactlyInAnyOrder("a", "c");
    }

    /** On a store that subscribes freely, an acquire of a name that was just busy subscribes before its attempt. */
    @Test
    void contendedAcquire_onAStoreThatSubscribesFreely_makesOneAttemptBeforeWaiting() throws Exception {
        store.subscribesFreely = true;
        DistributedLock lock = engine(Duration.ofSeconds(30)).lock("r");
        store.holders.put("r", new OwnerId("other:t1"));
        failedTryLockInAThread(lock, 200);
        assertThat(store.tryAcquireCalls).as("attempt, subscribe, re-check").hasValue(2);
        Thread second = new Thread(() -> {
            lock.lock();
            lock.unlock();
        });
        second.start();
        awaitParked(second);
        assertThat(store.tryAcquireCalls)
                .as("subscribed first: its one attempt was the re-check")
                .hasValue(3);
        assertThat(store.release(HeldClaim.lock(new LockKey("r"), new OwnerId("other:t1"), 0)))
                .isTrue();
        second.join(5000);
        assertThat(second.isAlive()).isFalse();
        assertThat(store.holders).doesNotContainKey("r");
    }

    /**
     * Subscribed before its first attempt, a waiter whose attempt was on its way when the wake-up came (and found no
     * waiter to wake) tries again at once instead of sleeping until its retry time (found by the benchmark: 1 s
     * stalls with 8 clients).
     */
    @Test
    void wakeUpDuringTheFirstAttempt_isNotLost() throws Exception {
        store.subscribesFreely = true;
        DistributedLock lock = engine(Duration.ofSeconds(30)).lock("r");
        LockKey key = new LockKey("r");
        store.holders.put("r", new OwnerId("other:t1"));
        failedTryLockInAThread(lock, 100);
        int before = store.tryAcquireCalls.get();
        Thread second = new Thread(() -> {
            lock.lock();
            lock.unlock();
        });
        store.delayedThread = second;
        second.start();
        assertThat(store.delayedArrived.await(5, TimeUnit.SECONDS)).isTrue();
        // while its attempt is on its way: the holder releases (a wake-up) and another client takes the lock
        assertThat(store.release(HeldClaim.lock(key, new OwnerId("other:t1"), 0)))
                .isTrue();
        store.holders.put("r", new OwnerId("other:t2"));
        store.gate.countDown();
        awaitParked(second);
        assertThat(store.tryAcquireCalls.get() - before)
                .as("the busy attempt, then at once another for the wake-up it missed")
                .isEqualTo(2);
        assertThat(store.release(HeldClaim.lock(key, new OwnerId("other:t2"), 0)))
                .isTrue();
        second.join(5000);
        assertThat(second.isAlive()).isFalse();
    }

    /** A store gave the lock to this client with the wake-up: the waiting thread takes it as it is, with no request. */
    @Test
    void storeGrant_isTakenByTheWaiter_withoutARoundTrip() throws Exception {
        DistributedLock lock = engine(Duration.ofSeconds(30)).lock("g");
        store.holders.put("g", new OwnerId("other:t1"));
        long[] token = new long[1];
        CountDownLatch acquired = new CountDownLatch(1);
        CountDownLatch mayRelease = new CountDownLatch(1);
        Thread t = new Thread(() -> {
            lock.lock();
            token[0] = lock.fencingToken();
            acquired.countDown();
            awaitQuietly(mayRelease);
            lock.unlock();
        });
        t.start();
        awaitParked(t);
        int attempts = store.tryAcquireCalls.get();
        assertThat(store.grant("g", "c9:w1#40", 40, 3, Duration.ofSeconds(5))).isTrue();
        assertThat(acquired.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(token[0]).isEqualTo(40);
        assertThat(store.tryAcquireCalls).as("no attempt after the grant").hasValue(attempts);
        mayRelease.countDown();
        t.join(5000);
        // the release is owner-checked: it ended the hold only because it used the grant's id
        assertThat(store.holders).doesNotContainKey("g");
        assertThat(store.releaseCalls).hasValue(1);
    }

    /** A grant that lasts less than a watchdog tick is renewed, under the grant's id, before it ends. */
    @Test
    void storeGrant_isRenewedBeforeItsShortValidityEnds() throws Exception {
        DistributedLock lock = engine(Duration.ofSeconds(30)).lock("g");
        store.holders.put("g", new OwnerId("other:t1"));
        AtomicBoolean heldLater = new AtomicBoolean();
        CountDownLatch acquired = new CountDownLatch(1);
        Thread t = new Thread(() -> {
            lock.lock();
            acquired.countDown();
            try {
                Thread.sleep(700);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            heldLater.set(lock.isHeldByCurrentThread());
            lock.unlock();
        });
        t.start();
        awaitParked(t);
        assertThat(store.grant("g", "c9:w1#7", 7, 0, Duration.ofMillis(300))).isTrue();
        assertThat(acquired.await(5, TimeUnit.SECONDS)).isTrue();
        t.join(5000);
        assertThat(store.renewBatchSizes)
                .as("renewed ahead of the watchdog tick")
                .isNotEmpty();
        assertThat(heldLater).as("still held after the grant's own validity").isTrue();
        assertThat(store.holders).doesNotContainKey("g");
    }

    /** No grant is taken while an attempt of the client is on its way: that attempt may take the hold over itself. */
    @Test
    void storeGrant_isRefusedWhileAnAttemptIsOnItsWay() throws Exception {
        DistributedLock lock = engine(Duration.ofSeconds(30)).lock("g");
        store.holders.put("g", new OwnerId("other:t1"));
        Thread waiter = new Thread(() -> {
            lock.lock();
            lock.unlock();
        });
        waiter.start();
        awaitParked(waiter);
        AtomicBoolean triedAndGot = new AtomicBoolean(true);
        Thread newcomer = new Thread(() -> triedAndGot.set(lock.tryLock()));
        store.delayedThread = newcomer; // its one attempt is held on the way
        newcomer.start();
        assertThat(store.delayedArrived.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(store.grant("g", "c9:w1#9", 9, 0, Duration.ofSeconds(5)))
                .as("not taken while the newcomer's attempt is on its way")
                .isFalse();
        store.gate.countDown();
        newcomer.join(5000);
        assertThat(triedAndGot).isFalse();
        assertThat(store.release(HeldClaim.lock(new LockKey("g"), new OwnerId("c9:w1#9"), 0)))
                .isTrue();
        waiter.join(5000);
        assertThat(waiter.isAlive()).isFalse();
    }

    /** A waiter with a fixed lease does not take a grant as it is: its lease must start at its own grant. */
    @Test
    void storeGrant_isNotTakenByAWaiterWithAFixedLease() throws Exception {
        DistributedLock lock = engine(Duration.ofSeconds(30)).lock("g");
        store.holders.put("g", new OwnerId("other:t1"));
        AtomicBoolean got = new AtomicBoolean();
        Thread t = new Thread(() -> {
            try {
                // a wait long enough to be seen parked on a loaded machine
                got.set(lock.tryLock(2_000, 10_000, TimeUnit.MILLISECONDS));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        t.start();
        awaitParked(t);
        assertThat(store.grant("g", "c9:w1#11", 11, 0, Duration.ofSeconds(5))).isFalse();
        t.join(10_000);
        assertThat(got).isFalse();
    }

    private static void awaitParked(Thread t) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (t.getState() != Thread.State.WAITING && t.getState() != Thread.State.TIMED_WAITING) {
            assertThat(System.nanoTime() - deadline).as("thread parked in time").isNegative();
            Thread.sleep(5);
        }
        Thread.sleep(50); // its attempts are done
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            var unused = latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** How many spare tokens a grant reserves is the engine's policy: the claim asks for the hand-off limit. */
    @Test
    void spareTokens_theClaimAsksForTheHandOffLimit_theStoreReservesAtMostThat() {
        FakeLockStore own = new FakeLockStore();
        own.spareTokens = 100; // what the store could reserve
        LockEngine e = LockEngine.create(own.view(), EngineConfig.defaults().withHandOffLimit(3));
        engines.add(e);
        DistributedLock lock = e.lock("spare");
        lock.lock();
        long first = lock.fencingToken();
        lock.unlock();
        lock.lock();
        long second = lock.fencingToken();
        lock.unlock();
        assertThat(own.askedSpareTokens).isEqualTo(3);
        assertThat(second - first)
                .as("the store reserved 3 tokens after the first grant")
                .isEqualTo(4);
    }

    /** A thread that released through the store and comes back at once does not pass the waiter the release woke. */
    @Test
    void newcomer_doesNotBargePastItsOwnClientsWaiter() throws Exception {
        FakeLockStore own = new FakeLockStore();
        LockEngine e = LockEngine.create(own.view(), EngineConfig.defaults().withHandOffLimit(0));
        engines.add(e);
        DistributedLock lock = e.lock("nb");
        lock.lock();
        long[] waiterToken = new long[1];
        Thread waiter = new Thread(() -> {
            lock.lock();
            waiterToken[0] = lock.fencingToken();
            lock.unlock();
        });
        waiter.start();
        awaitParked(waiter);
        Thread.sleep(50);
        lock.unlock(); // through the store (no hand-off allowed): wakes the waiter
        lock.lock(); // straight back
        long mine = lock.fencingToken();
        lock.unlock();
        waiter.join(5000);
        assertThat(waiterToken[0])
                .as("the woken waiter got the lock first")
                .isPositive()
                .isLessThan(mine);
    }

    @Test
    void handOffs_inARow_areLimited_unlessTheStoresQueueIsTheOrder() throws Exception {
        // limit 2: two hand-offs, a release through the store (the next waiter acquires there), two more
        assertThat(handOffChain(false)).as("hand-offs of 5 with a limit of 2").isEqualTo(4);
        assertThat(handOffChain(true))
                .as("hand-offs of 5 on a queue-ordered store")
                .isEqualTo(5);
    }

    @Test
    void firstWaitingAttempt_onAQueueOrderedStore_takesItsPlaceInTheQueue() throws Exception {
        FakeLockStore own = new FakeLockStore();
        own.queuesEveryWaiter = true;
        DistributedLock remoteLock = engineOn(own).lock("q");
        DistributedLock lock = engineOn(own).lock("q");
        remoteLock.lock();
        own.acquireQueueFlags.clear();
        Thread waiter = new Thread(() -> {
            lock.lock();
            lock.unlock();
        });
        waiter.start();
        awaitParked(waiter);
        // its first attempt queues at once; the re-check after subscribing keeps the place
        assertThat(own.acquireQueueFlags)
                .as("queue argument of the waiter's attempts")
                .isNotEmpty()
                .containsOnly(true);
        assertThat(own.log).as("the place is kept while it waits").doesNotContain("abandon q");
        remoteLock.unlock();
        waiter.join(5000);
        assertThat(waiter.isAlive()).isFalse();
        assertThat(own.holders).isEmpty();
    }

    @Test
    void queuedAttempt_findingALocalWaiterAhead_givesItsPlaceBack() throws Exception {
        FakeLockStore own = new FakeLockStore();
        own.queuesEveryWaiter = true;
        DistributedLock remoteLock = engineOn(own).lock("q");
        DistributedLock lock = engineOn(own).lock("q");
        remoteLock.lock();
        Runnable lockUnlock = () -> {
            lock.lock();
            lock.unlock();
        };
        Thread early = new Thread(lockUnlock);
        own.delayedThread = early;
        early.start(); // queues (no attempt in flight), and is held on its way to the store
        assertThat(own.delayedArrived.await(5, TimeUnit.SECONDS)).isTrue();
        Thread late = new Thread(lockUnlock);
        late.start(); // an attempt is in flight: it does not queue, is told busy and becomes the first local waiter
        awaitParked(late);
        own.gate.countDown();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!own.log.contains("abandon q") && System.nanoTime() < deadline) {
            Thread.sleep(5); // the early attempt's busy answer comes back
        }
        assertThat(own.log.stream().filter(l -> l.startsWith("abandon")))
                .as("the early attempt's place is given back: one client keeps one place for a non-fair lock")
                .containsExactly("abandon q");
        remoteLock.unlock();
        early.join(5000);
        late.join(5000);
        assertThat(early.isAlive()).isFalse();
        assertThat(late.isAlive()).isFalse();
        assertThat(own.holders).isEmpty();
    }

    private LockEngine engineOn(FakeLockStore own) {
        LockEngine e = LockEngine.create(own.view(), EngineConfig.defaults());
        engines.add(e);
        return e;
    }

    /** Five threads of one client wait behind a holder; returns how many of the six releases handed off. */
    private int handOffChain(boolean queueOrdered) throws Exception {
        FakeLockStore own = new FakeLockStore();
        own.queuesEveryWaiter = queueOrdered;
        LockEngine e = LockEngine.create(own.view(), EngineConfig.defaults().withHandOffLimit(2));
        engines.add(e);
        DistributedLock lock = e.lock("chain");
        lock.lock();
        List<Thread> waiters = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            Thread t = new Thread(() -> {
                lock.lock();
                lock.unlock();
            });
            t.start();
            waiters.add(t);
        }
        for (Thread t : waiters) {
            awaitParked(t);
        }
        Thread.sleep(50); // every waiter has made its attempt and parked
        lock.unlock();
        for (Thread t : waiters) {
            t.join(5000);
            assertThat(t.isAlive()).isFalse();
        }
        assertThat(own.holders).isEmpty();
        return own.handOffCalls.get();
    }

    /** Found by the benchmark: a hand-off to a waiter whose own attempt was in flight made the store grant twice. */
    @Test
    void release_neverHandsOffToAWaiterWhoseAttemptIsInFlight() throws Exception {
        store.regrantSameOwner = true;
        LockEngine remote = engine(Duration.ofSeconds(30));
        LockEngine local = engine(Duration.ofSeconds(30));
        DistributedLock remoteLock = remote.lock("a");
        DistributedLock lock = local.lock("a");
        java.util.concurrent.atomic.AtomicInteger lost = new java.util.concurrent.atomic.AtomicInteger();
        lock.addListener(new io.distlock.LockListener() {
            @Override
            public void lost(String name, long token, @org.jspecify.annotations.Nullable Throwable cause) {
                lost.incrementAndGet();
            }
        });
        remoteLock.lock();
        long[] waiterToken = new long[1];
        Thread waiter = new Thread(() -> {
            lock.lock();
            waiterToken[0] = lock.fencingToken();
            lock.unlock();
        });
        waiter.start();
        while (store.subscribeCalls.get() == 0) {
            Thread.sleep(5); // the waiter is subscribed and parked on the remote holder
        }
        Thread.sleep(50);
        store.delayedThread = waiter;
        remoteLock.unlock(); // wakes the waiter, whose next attempt is held back on its way to the store
        assertThat(store.delayedArrived.await(5, TimeUnit.SECONDS)).isTrue();
        Thread barger = new Thread(() -> {
            assertThat(lock.tryLock()).isTrue(); // takes the free lock first
            lock.unlock(); // the waiter is attempting: this must release through the store, not hand off
        });
        barger.start();
        barger.join(5000);
        store.gate.countDown();
        waiter.join(5000);
        assertThat(store.handOffCalls).hasValue(0);
        assertThat(lost).as("holds reported lost").hasValue(0);
        assertThat(waiterToken[0]).isPositive();
        assertThat(store.holders).isEmpty();
    }

    @Test
    void subscribeFailure_throwsWithCause_leavesNoWaiter() {
        LockEngine local = engine(Duration.ofSeconds(30));
        engine(Duration.ofSeconds(30)).lock("a").lock();
        store.failSubscribe = true;
        assertThatThrownBy(() -> local.lock("a").tryLock(1, TimeUnit.SECONDS))
                .isInstanceOf(DistributedLockException.class)
                .hasRootCauseMessage("subscribe refused");
        assertThat(local.stateCount()).isZero();
    }

    @Test
    void possibleLoss_fromTheStore_checksHoldsAtOnce() throws Exception {
        LockEngine engine = engine(Duration.ofSeconds(30));
        LockHold hold = engine.lock("a").acquire();
        store.expire("a");
        Runnable checkNow = java.util.Objects.requireNonNull(store.checkNow);
        checkNow.run();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (hold.isValid() && System.nanoTime() < end) {
            Thread.sleep(5);
        }
        assertThat(hold.isValid()).as("found lost well before the 10 s tick").isFalse();
    }

    @Test
    void waiting_onRemoteHolder_doesNotPoll() throws Exception {
        DistributedLock holder = engine(Duration.ofSeconds(30)).lock("a");
        DistributedLock waiter = engine(Duration.ofSeconds(30)).lock("a");
        holder.lock();
        assertThat(waiter.tryLock(1, TimeUnit.SECONDS)).isFalse();
        // one barging attempt, then subscribe and one re-check; then sleep until the 1 s deadline
        assertThat(store.tryAcquireCalls).hasValueLessThanOrEqualTo(3 + 1);
        assertThat(store.subscribeCalls).hasValue(1);
        holder.unlock();
    }

    @Test
    void waiters_sleepWithoutSpinning() throws Exception {
        LockEngine engine = engine(Duration.ofSeconds(30));
        DistributedLock lock = engine.lock("a");
        lock.lock();
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        List<Thread> waiters = new ArrayList<>();
        long[] cpu = new long[4];
        for (int i = 0; i < 4; i++) {
            int id = i;
            Thread t = new Thread(() -> {
                lock.lock();
                cpu[id] = mx.getCurrentThreadCpuTime();
                lock.unlock();
            });
            waiters.add(t);
            t.start();
        }
        Thread.sleep(1000);
        lock.unlock();
        for (Thread t : waiters) {
            t.join(5000);
        }
        for (long c : cpu) {
            assertThat(c).as("CPU time of a waiter over 1 s of waiting").isLessThan(TimeUnit.MILLISECONDS.toNanos(200));
        }
    }

    @Test
    void watchdog_renewsAllHoldsInOneBatchPerTick() throws Exception {
        LockEngine engine = engine(Duration.ofSeconds(30));
        List<LockHold> holds = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            holds.add(engine.lock("k" + i).acquire());
        }
        store.renewBatchSizes.clear();
        engine.tickWatchdog();
        assertThat(store.renewBatchSizes).containsExactly(1000);
        for (LockHold h : holds) {
            h.release();
        }
        store.renewBatchSizes.clear();
        engine.tickWatchdog();
        assertThat(store.renewBatchSizes).as("nothing to renew, no round trip").isEmpty();
    }

    /**
     * A renewal that gets no answer (the store stopped replying) does not hold up the telling: the hold is told lost
     * when its last confirmed lease ends, while the round trip still waits.
     */
    @Test
    void renewalWithNoAnswer_holdToldLostWhenItsLeaseEnds_notWhenTheRoundTripGivesUp() throws Exception {
        Duration lease = Duration.ofMillis(600);
        LockEngine engine = engine(lease);
        CountDownLatch inRenew = new CountDownLatch(1);
        CountDownLatch answer = new CountDownLatch(1);
        store.duringRenew = () -> {
            inRenew.countDown();
            try {
                var unused = answer.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        DistributedLock lock = engine.lock("silent");
        CountDownLatch lost = new CountDownLatch(1);
        List<Throwable> causes = new CopyOnWriteArrayList<>();
        lock.addListener(new io.distlock.LockListener() {
            @Override
            public void lost(String name, long fencingToken, @org.jspecify.annotations.Nullable Throwable cause) {
                if (cause != null) {
                    causes.add(cause);
                }
                lost.countDown();
            }
        });
        long start = System.nanoTime();
        LockHold hold = lock.acquire();
        try {
            assertThat(inRenew.await(5, TimeUnit.SECONDS))
                    .as("a renewal went out")
                    .isTrue();
            assertThat(lost.await(5, TimeUnit.SECONDS)).as("told lost").isTrue();
            long toldAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(answer.getCount())
                    .as("the renewal still waits for its answer")
                    .isEqualTo(1);
            assertThat(toldAfter)
                    .as("told within the lease and a quarter tick, not after the round trip's 10 s")
                    .isBetween(lease.toMillis() - 50, lease.toMillis() + 1_500);
            assertThat(hold.isValid()).isFalse();
            assertThat(causes).singleElement().isInstanceOf(java.util.concurrent.TimeoutException.class);
        } finally {
            answer.countDown();
            store.duringRenew = null;
        }
        assertThatThrownBy(hold::release).isInstanceOf(LockLostException.class);
    }

    /**
     * The watchdog tells a loss in two steps (the hold's status, then its name's state); a thread that unlocks between
     * them is told by its release, and its next unlock finds the lock simply not held.
     */
    @Test
    void lossToldWhileTheThreadUnlocks_isReportedOnce() {
        LockEngine engine = engine(Duration.ofSeconds(30));
        EngineLock lock = (EngineLock) engine.lock("told-once");
        lock.lock();
        HoldImpl h = java.util.Objects.requireNonNull(engine.threadHold(lock));
        assertThat(h.finish(EngineHold.LOST)).as("the watchdog's first step").isTrue();
        assertThatThrownBy(lock::unlock).isInstanceOf(LockLostException.class);
        LockState s = java.util.Objects.requireNonNull(engine.state("told-once"));
        s.mutex.lock();
        try {
            s.lost(h); // the watchdog's second step, after the release
        } finally {
            s.mutex.unlock();
        }
        assertThatThrownBy(lock::unlock)
                .as("the loss is reported once")
                .isExactlyInstanceOf(IllegalMonitorStateException.class);
        assertThat(lock.getHoldCount()).isZero();
    }

    /** A flood of waiters is refused at the client, before it reaches the store's queues. */
    @Test
    void waiters_overMaxWaiters_refusedAtOnce_tryWithoutWaitStillAnswers() throws Exception {
        FakeLockStore own = new FakeLockStore();
        LockEngine e = LockEngine.create(own.view(), EngineConfig.defaults().withMaxWaiters(2));
        engines.add(e);
        DistributedLock held = e.lock("flood");
        LockHold holder = held.acquire();
        List<Thread> waiting = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            Thread t = new Thread(() -> {
                DistributedLock mine = e.lock("flood");
                mine.lock(); // acquired after the holder's release
                mine.unlock();
            });
            t.start();
            waiting.add(t);
            awaitParked(t);
        }
        int attemptsBefore = own.tryAcquireCalls.get();
        assertThatThrownBy(() -> e.lock("other").tryAcquire(Duration.ofSeconds(5)))
                .isInstanceOf(java.util.concurrent.RejectedExecutionException.class)
                .hasMessageContaining("maxWaiters");
        assertThat(own.tryAcquireCalls.get())
                .as("nothing sent for the refused wait")
                .isEqualTo(attemptsBefore);
        assertThat(e.lock("other").tryAcquire(Duration.ZERO))
                .as("a try without waiting is no waiter")
                .isPresent();
        holder.release();
        for (Thread t : waiting) {
            t.join(5000);
            assertThat(t.isAlive()).isFalse();
        }
        assertThat(e.lock("flood").tryAcquire(Duration.ofSeconds(1)))
                .as("room again once the waiters are done")
                .isPresent();
        assertThatThrownBy(() -> EngineConfig.defaults().withMaxWaiters(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxWaiters");
    }

    @Test
    void release_duringRenewal_waitsForIt_andIsNeverRenewedAfter() throws Exception {
        LockEngine engine = engine(Duration.ofSeconds(30));
        LockHold hold = engine.lock("a").acquire();
        CountDownLatch inRenew = new CountDownLatch(1);
        CountDownLatch finishRenew = new CountDownLatch(1);
        store.duringRenew = () -> {
            inRenew.countDown();
            try {
                finishRenew.await(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        Thread tick = new Thread(engine::tickWatchdog);
        tick.start();
        inRenew.await();
        AtomicBoolean released = new AtomicBoolean();
        Thread releaser = new Thread(() -> {
            hold.release();
            released.set(true);
        });
        releaser.start();
        Thread.sleep(100);
        assertThat(released).as("release waits for the renewal in flight").isFalse();
        assertThat(store.releaseCalls).hasValue(0);
        finishRenew.countDown();
        releaser.join(5000);
        tick.join(5000);
        assertThat(released).isTrue();
        store.duringRenew = null;
        store.renewBatchSizes.clear();
        engine.tickWatchdog();
        assertThat(store.renewBatchSizes).isEmpty();
    }

    @Test
    void renewalFailure_keepsHoldsValidUntilTheirLease_thenMarksThemLostWithCause() throws Exception {
        LockEngine engine = engine(Duration.ofSeconds(30), ticker);
        DistributedLock lock = engine.lock("a");
        Throwable[] cause = new Throwable[1];
        lock.addListener(new io.distlock.LockListener() {
            @Override
            public void lost(String name, long token, @org.jspecify.annotations.Nullable Throwable c) {
                cause[0] = c;
            }
        });
        LockHold hold = lock.acquire();
        store.failure = new IllegalStateException("store down");
        ticker.advance(Duration.ofSeconds(10));
        engine.tickWatchdog();
        assertThat(hold.isValid()).isTrue();
        ticker.advance(Duration.ofSeconds(21));
        assertThat(hold.isValid()).as("past the last confirmed lease").isFalse();
        engine.tickWatchdog();
        assertThat(cause[0]).hasMessage("store down");
        store.failure = null;
        assertThatThrownBy(hold::release).isInstanceOf(LockLostException.class);
    }

    /**
     * A hold lost because its renewal failed or came too late, in a store without leases of its own (a database
     * session lock), is ended there: its session may well be alive, and would otherwise keep the lock, granted to
     * nobody, for as long as the session lasts.
     */
    @Test
    void holdLostWithACause_inAStoreWithoutLeases_isEndedThere() throws Exception {
        store.expiresHolds = false;
        LockEngine engine = engine(Duration.ofSeconds(30), ticker);
        LockHold hold = engine.lock("a").acquire();
        OwnerId owner = java.util.Objects.requireNonNull(store.holders.get("a"));
        store.failure = new IllegalStateException("renewal timed out");
        ticker.advance(Duration.ofSeconds(31));
        engine.tickWatchdog();
        store.failure = null;

        assertThat(hold.isValid()).isFalse();
        assertThat(store.abandonedHolds).containsExactly(HeldClaim.lock(new LockKey("a"), owner, hold.fencingToken()));
        assertThat(store.holders).as("the lock is free in the store").doesNotContainKey("a");
        assertThatThrownBy(hold::release).isInstanceOf(LockLostException.class);
    }

    /**
     * Holds whose leases ran out before a renewal was confirmed are all told before any is ended in the store (a
     * round trip each where the store keeps no leases of its own, a slow one when it cannot be reached).
     */
    @Test
    void overdueHolds_areAllToldBeforeAnyIsEndedInTheStore() throws Exception {
        store.expiresHolds = false;
        LockEngine engine = engine(Duration.ofSeconds(30), ticker);
        List<String> told = new CopyOnWriteArrayList<>();
        for (String name : List.of("a", "b", "c")) {
            DistributedLock lock = engine.lock(name);
            lock.addListener(new io.distlock.LockListener() {
                @Override
                public void lost(String n, long token, @org.jspecify.annotations.Nullable Throwable cause) {
                    told.add(n);
                }
            });
            var unused = lock.acquire();
        }
        List<String> toldAtFirstAbandon = new CopyOnWriteArrayList<>();
        store.duringAbandonHold = () -> {
            if (toldAtFirstAbandon.isEmpty()) {
                toldAtFirstAbandon.addAll(told);
            }
        };
        ticker.advance(Duration.ofSeconds(31));

        engine.expireOverdueNow();

        assertThat(toldAtFirstAbandon).containsExactlyInAnyOrder("a", "b", "c");
        assertThat(store.abandonedHolds).hasSize(3);
        assertThat(store.holders).isEmpty();
    }

    @Test
    void fixedLease_validityFollowsTheTicker() throws Exception {
        LockHold hold = engine(Duration.ofSeconds(30), ticker)
                .lock("a")
                .tryAcquire(Duration.ZERO, Duration.ofSeconds(10))
                .orElseThrow();
        ticker.advance(Duration.ofSeconds(9));
        assertThat(hold.isValid()).isTrue();
        ticker.advance(Duration.ofSeconds(1));
        assertThat(hold.isValid()).isFalse();
    }

    /**
     * Found with two threads of one Redis client on 100 names, which stalled for seconds: a local release while
     * another thread's attempt was on its way (it found no local waiter to wake, and Redis does not wake the releasing
     * client) left that attempt, told busy, waiting for the holder's lease.
     */
    @Test
    void localRelease_whileAnotherThreadsAttemptIsOnItsWay_wakesThatAttempt() throws Exception {
        FakeLockStore own = new FakeLockStore();
        own.subscribesFreely = true;
        own.releasePublishes = false;
        DistributedLock lock = engineOn(own).lock("a");
        DistributedLock remoteLock = engineOn(own).lock("a");
        remoteLock.lock();
        assertThat(lock.tryLock(50, TimeUnit.MILLISECONDS)).isFalse(); // busy once: the next wait subscribes first
        remoteLock.unlock();
        List<Boolean> got = new CopyOnWriteArrayList<>();
        Thread other = new Thread(() -> {
            try {
                boolean locked = lock.tryLock(3, TimeUnit.SECONDS);
                got.add(locked);
                if (locked) {
                    lock.unlock();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        own.holdAnswerOf = other;
        own.afterAcquire.set(() -> {
            // the store granted this thread; before its answer returns, the other thread is told busy
            other.start();
            try {
                assertThat(own.answerHeld.await(5, TimeUnit.SECONDS)).isTrue();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        lock.lock();
        lock.unlock(); // the other thread's busy answer is still on its way
        own.answerGo.countDown();
        other.join(5000);
        assertThat(got).as("the other thread got the free lock within its wait").containsExactly(true);
        assertThat(own.holders).isEmpty();
    }

    @Test
    void grantWhoseLeaseEndedInFlight_isGivenBack_andTheAcquireTriesAgainWithinItsWait() throws Exception {
        LockEngine engine = engine(Duration.ofSeconds(30), ticker);
        store.afterAcquire.set(() -> ticker.advance(Duration.ofSeconds(31)));
        LockHold hold = engine.lock("a").tryAcquire(Duration.ofMinutes(5)).orElseThrow();
        assertThat(hold.isValid()).as("the hold returned is valid").isTrue();
        assertThat(store.log).containsExactly("acquire a", "abandon a", "acquire a");
        hold.release();
        assertThat(store.holders).isEmpty();
    }

    @Test
    void grantWhoseLeaseEndedInFlight_withoutAWait_isGivenBack_andNothingIsAcquired() throws Exception {
        LockEngine engine = engine(Duration.ofSeconds(30), ticker);
        store.afterAcquire.set(() -> ticker.advance(Duration.ofSeconds(10)));
        assertThat(engine.lock("a").tryAcquire(Duration.ZERO, Duration.ofSeconds(10)))
                .as("a fixed lease of 10 s that ended on the way back")
                .isEmpty();
        assertThat(store.log).containsExactly("acquire a", "abandon a");
        assertThat(store.holders).as("nothing left in the store").isEmpty();
    }

    @Test
    void handOffWhoseLeaseEndedInFlight_isGivenBack_andTheWaiterAcquiresAgain() throws Exception {
        LockEngine engine = engine(Duration.ofSeconds(30), ticker);
        DistributedLock lock = engine.lock("a");
        List<Long> tokens = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<Boolean> valid = new java.util.concurrent.CopyOnWriteArrayList<>();
        LockHold first = lock.acquire();
        Thread waiter = new Thread(() -> {
            try (LockHold h = lock.acquire()) {
                tokens.add(h.fencingToken());
                valid.add(h.isValid());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        waiter.start();
        awaitParked(waiter);
        store.afterHandOff.set(() -> ticker.advance(Duration.ofSeconds(31)));
        first.release();
        waiter.join(5000);
        assertThat(waiter.isAlive()).isFalse();
        assertThat(store.handOffCalls.get())
                .as("the release handed the lock on")
                .isEqualTo(1);
        assertThat(valid).as("the waiter's hold").containsExactly(true);
        assertThat(tokens.get(0))
                .as("the waiter's token is newer than the one that ended in flight")
                .isGreaterThan(first.fencingToken() + 1);
        assertThat(store.log).containsSubsequence("abandon a", "acquire a");
        assertThat(store.holders).isEmpty();
    }

    @Test
    void storeFailure_onAcquire_throwsWithCause_neverFalse() {
        DistributedLock lock = engine(Duration.ofSeconds(30)).lock("a");
        store.failure = new IllegalStateException("connection refused");
        assertThatThrownBy(lock::tryLock)
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("connection refused");
        store.failure = new java.io.UncheckedIOException(new java.io.IOException("connection reset"));
        assertThatThrownBy(lock::tryLock)
                .isInstanceOf(DistributedLockException.class)
                .hasMessageContaining("acquire of lock 'a' failed")
                .hasCauseInstanceOf(java.io.UncheckedIOException.class);
    }

    @Test
    void idleNames_areForgotten() {
        LockEngine engine = engine(Duration.ofSeconds(30));
        for (int i = 0; i < 100; i++) {
            DistributedLock l = engine.lock("n" + i);
            l.lock();
            l.unlock();
        }
        assertThat(engine.stateCount()).isZero();
        assertThat(engine.watchdogSize()).isZero();
    }

    @Test
    void idleNames_afterHoldsAndLosses_areForgotten() throws Exception {
        LockEngine engine = engine(Duration.ofSeconds(30));
        for (int i = 0; i < 100; i++) {
            engine.lock("h" + i).acquire().release();
        }
        LockHold lost = engine.lock("lost").acquire();
        store.expire("lost");
        engine.tickWatchdog();
        assertThat(lost.isValid()).isFalse();
        assertThat(engine.stateCount()).isZero();
        assertThat(engine.watchdogSize()).isZero();
    }
}
