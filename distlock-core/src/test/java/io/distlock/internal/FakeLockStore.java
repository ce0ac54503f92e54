package io.distlock.internal;

import io.distlock.LockInfo;
import io.distlock.spi.AcquiresTogether;
import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.ClaimAdmin;
import io.distlock.spi.ClaimStore;
import io.distlock.spi.FreeSubscriptions;
import io.distlock.spi.Grant;
import io.distlock.spi.GrantsWithWakeUp;
import io.distlock.spi.HandOff;
import io.distlock.spi.HandsOff;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import io.distlock.spi.QueueOrdered;
import io.distlock.spi.ReportsLoss;
import io.distlock.spi.SessionHolds;
import io.distlock.spi.Subscription;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * A minimal non-fair store for engine unit tests: holds never expire by themselves (tests end them by hand), every
 * call is counted, and failures can be switched on.
 */
final class FakeLockStore
        implements ClaimStore,
                ClaimAdmin,
                HandsOff,
                SessionHolds,
                GrantsWithWakeUp,
                ReportsLoss,
                QueueOrdered,
                FreeSubscriptions,
                AcquiresTogether {
    final Map<String, OwnerId> holders = new HashMap<>();
    final Map<String, Long> fences = new HashMap<>();
    final Map<String, List<Runnable>> subscribers = new ConcurrentHashMap<>();
    final AtomicInteger tryAcquireCalls = new AtomicInteger();
    final AtomicInteger releaseCalls = new AtomicInteger();
    final AtomicInteger handOffCalls = new AtomicInteger();
    final AtomicInteger subscribeCalls = new AtomicInteger();
    final List<Integer> renewBatchSizes = new CopyOnWriteArrayList<>();
    volatile @Nullable RuntimeException failure;
    volatile @Nullable Runnable duringRenew;
    Duration busyRetry = Duration.ofSeconds(30);
    boolean handsOff = true;
    /** Makes {@link #view} QueueOrdered (its queue is the order), though like the rest of this store it keeps no queue. */
    boolean queuesEveryWaiter;
    /** Makes {@link #view} FreeSubscriptions. */
    boolean subscribesFreely;
    /** Makes {@link #view} AcquiresTogether. */
    boolean acquiresTogether;
    /** What the store saw, in order: "acquire a", "release a", "acquireAll [a, b]", "releaseAll [a, b]". */
    final List<String> log = new CopyOnWriteArrayList<>();

    final AtomicInteger tryAcquireAllCalls = new AtomicInteger();
    final AtomicInteger releaseAllCalls = new AtomicInteger();
    /** Makes {@link #view} keep leases of its own (false: SessionHolds). */
    boolean expiresHolds = true;
    /** The holds the engine ended with abandonHold. */
    final List<HeldClaim> abandonedHolds = new CopyOnWriteArrayList<>();
    /** Tokens reserved after each grant's own, for local successions. */
    volatile int spareTokens;
    /** The same for the grants of a hand-off. */
    volatile int handOffSpareTokens;

    private void maybeFail() {
        RuntimeException f = failure;
        if (f != null) {
            throw f;
        }
    }

    /** Calls from this thread wait on {@link #gate} before reaching the store, as a slow network would hold them. */
    volatile @Nullable Thread delayedThread;

    final java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(1);
    final java.util.concurrent.CountDownLatch delayedArrived = new java.util.concurrent.CountDownLatch(1);

    /** Like Redis's acquire script: an owner that already holds is granted again with a fresh token. */
    volatile boolean regrantSameOwner;

    @Override
    public Set<Claim.Kind> kinds() {
        return Set.of(Claim.Kind.LOCK);
    }

    /** The {@code queue} argument of each tryAcquire call, in order. */
    final List<Boolean> acquireQueueFlags = new CopyOnWriteArrayList<>();

    /** The spare tokens the engine asked for in the last claim. */
    volatile int askedSpareTokens = -1;

    @Override
    public Attempt tryAcquire(Claim claim, boolean queue) {
        askedSpareTokens = claim.spareTokens();
        if (Thread.currentThread() == delayedThread) {
            delayedArrived.countDown();
            try {
                var unused = gate.await(10, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        log.add("acquire " + claim.key().name());
        acquireQueueFlags.add(queue);
        Attempt answer = tryAcquireNow(claim.key(), claim.owner(), claim.spareTokens());
        runOnce(afterAcquire);
        if (Thread.currentThread() == holdAnswerOf) {
            answerHeld.countDown();
            try {
                var unused = answerGo.await(10, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return answer;
    }

    /** The answers of this thread's calls wait on {@link #answerGo} after the store decided: a slow reply. */
    volatile @Nullable Thread holdAnswerOf;

    final java.util.concurrent.CountDownLatch answerHeld = new java.util.concurrent.CountDownLatch(1);
    final java.util.concurrent.CountDownLatch answerGo = new java.util.concurrent.CountDownLatch(1);

    /** Runs once after the next tryAcquire decided, before its answer returns: a slow answer on its way back. */
    final java.util.concurrent.atomic.AtomicReference<@Nullable Runnable> afterAcquire =
            new java.util.concurrent.atomic.AtomicReference<>();

    /** The same for the next hand-off. */
    final java.util.concurrent.atomic.AtomicReference<@Nullable Runnable> afterHandOff =
            new java.util.concurrent.atomic.AtomicReference<>();

    private static void runOnce(java.util.concurrent.atomic.AtomicReference<@Nullable Runnable> hook) {
        Runnable r = hook.getAndSet(null);
        if (r != null) {
            r.run();
        }
    }

    @Override
    public List<Attempt> tryAcquireAll(List<Claim> claims) {
        tryAcquireAllCalls.incrementAndGet();
        log.add("acquireAll " + claims.stream().map(c -> c.key().name()).toList());
        List<Attempt> answers = new ArrayList<>();
        for (Claim c : claims) {
            answers.add(tryAcquireNow(c.key(), c.owner(), c.spareTokens()));
        }
        tryAcquireCalls.addAndGet(-claims.size()); // counted as one batched call, not as single attempts
        return answers;
    }

    /** Run by every release and releaseAll before the store changes (a test may block it: a store that never answers). */
    volatile @Nullable Runnable duringRelease;

    private void maybeHoldRelease() {
        Runnable r = duringRelease;
        if (r != null) {
            r.run();
        }
    }

    @Override
    public List<Boolean> releaseAll(List<HeldClaim> holds) {
        releaseAllCalls.incrementAndGet();
        log.add("releaseAll " + holds.stream().map(h -> h.key().name()).toList());
        maybeFail();
        maybeHoldRelease();
        List<Boolean> answers = new ArrayList<>();
        for (HeldClaim h : holds) {
            boolean released = releaseQuietly(h.key(), h.owner());
            if (released) {
                publish(h.key().name());
            }
            answers.add(released);
        }
        return answers;
    }

    private synchronized Attempt tryAcquireNow(LockKey key, OwnerId owner, int asked) {
        tryAcquireCalls.incrementAndGet();
        maybeFail();
        OwnerId holder = holders.get(key.name());
        if (holder != null && !(regrantSameOwner && holder.equals(owner))) {
            return Attempt.busy(busyRetry);
        }
        holders.put(key.name(), owner);
        int spare = Math.min(asked, spareTokens);
        return Attempt.acquired(fences.merge(key.name(), 1L + spare, Long::sum) - spare, spare);
    }

    /** Runs at the start of every abandonHold, as a slow or unreachable store would hold it up. */
    volatile @Nullable Runnable duringAbandonHold;

    @Override
    public void abandonHold(HeldClaim hold) {
        Runnable during = duringAbandonHold;
        if (during != null) {
            during.run();
        }
        abandonedHolds.add(hold);
        var unused = releaseQuietly(hold.key(), hold.owner());
    }

    @Override
    public void abandon(Claim claim) {
        log.add("abandon " + claim.key().name());
        var unused = releaseQuietly(claim.key(), claim.owner());
    }

    private synchronized boolean releaseQuietly(LockKey key, OwnerId owner) {
        if (owner.equals(holders.get(key.name()))) {
            holders.remove(key.name());
            return true;
        }
        return false;
    }

    @Override
    public boolean release(HeldClaim hold) {
        releaseCalls.incrementAndGet();
        log.add("release " + hold.key().name());
        maybeFail();
        maybeHoldRelease();
        boolean released = releaseQuietly(hold.key(), hold.owner());
        if (released && releasePublishes) {
            publish(hold.key().name());
        }
        return released;
    }

    /** False: a release wakes no subscriber, as Redis does not wake the releasing client through the store. */
    volatile boolean releasePublishes = true;

    void publish(String name) {
        for (Runnable r : subscribers.getOrDefault(name, List.of())) {
            r.run();
        }
    }

    synchronized void expire(String name) {
        holders.remove(name);
    }

    @Override
    public Set<HeldClaim> renew(Collection<HeldClaim> holds, Duration lease) {
        renewBatchSizes.add(holds.size());
        Runnable during = duringRenew;
        if (during != null) {
            during.run();
        }
        maybeFail();
        Set<HeldClaim> gone = new HashSet<>();
        synchronized (this) {
            for (HeldClaim h : holds) {
                if (!h.owner().equals(holders.get(h.key().name()))) {
                    gone.add(h);
                }
            }
        }
        return gone;
    }

    @Override
    public synchronized HandOff handOff(Claim to, OwnerId from) {
        LockKey key = to.key();
        handOffCalls.incrementAndGet();
        maybeFail();
        if (!from.equals(holders.get(key.name()))) {
            return HandOff.notHeld();
        }
        holders.put(key.name(), to.owner());
        int spare = Math.min(to.spareTokens(), handOffSpareTokens);
        HandOff answer = HandOff.granted(fences.merge(key.name(), 1L + spare, Long::sum) - spare, spare);
        runOnce(afterHandOff);
        return answer;
    }

    volatile boolean failSubscribe;
    volatile @Nullable Runnable checkNow;

    @Override
    public void onPossibleLoss(Runnable checkNow) {
        this.checkNow = checkNow;
    }

    final Map<String, List<Predicate<Grant>>> grantTakers = new ConcurrentHashMap<>();

    /**
     * Gives the lock to this client as a release would give it to a waiting client (the store's hold becomes {@code
     * grantOwner} with {@code token}), and offers the grant to the subscribed engine; returns whether it was taken.
     */
    boolean grant(String name, String grantOwner, long token, int spare, Duration validFor) {
        synchronized (this) {
            holders.put(name, new OwnerId(grantOwner));
            fences.put(name, token + spare);
        }
        Grant g = new Grant(new OwnerId(grantOwner), token, spare, System.nanoTime() + validFor.toNanos());
        for (Predicate<Grant> taker : grantTakers.getOrDefault(name, List.of())) {
            if (taker.test(g)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public Subscription subscribe(LockKey key, Runnable wakeUp, Predicate<Grant> takeGrant) {
        Subscription inner = subscribe(key, wakeUp);
        grantTakers
                .computeIfAbsent(key.name(), k -> new CopyOnWriteArrayList<>())
                .add(takeGrant);
        return () -> {
            inner.close();
            grantTakers.getOrDefault(key.name(), new ArrayList<>()).remove(takeGrant);
        };
    }

    @Override
    public Subscription subscribe(LockKey key, Runnable wakeUp) {
        subscribeCalls.incrementAndGet();
        if (failSubscribe) {
            throw new java.io.UncheckedIOException(new java.io.IOException("subscribe refused"));
        }
        subscribers
                .computeIfAbsent(key.name(), k -> new CopyOnWriteArrayList<>())
                .add(wakeUp);
        return () -> subscribers.getOrDefault(key.name(), new ArrayList<>()).remove(wakeUp);
    }

    @Override
    public synchronized Optional<LockInfo> inspect(LockKey key) {
        OwnerId o = holders.get(key.name());
        return o == null
                ? Optional.empty()
                : Optional.of(
                        new LockInfo(key.name(), o.value(), Duration.ZERO, fences.getOrDefault(key.name(), 0L), -1));
    }

    @Override
    public List<LockInfo> list(String prefix, int limit) {
        return List.of();
    }

    @Override
    public Optional<LockInfo> forceRelease(LockKey key) {
        Optional<LockInfo> info = inspect(key);
        expire(key.name());
        return info;
    }

    @Override
    public Optional<LockInfo> forceRelease(LockKey key, OwnerId owner) {
        Optional<LockInfo> info = inspect(key);
        return releaseQuietly(key, owner) ? info : Optional.empty();
    }

    @Override
    public int available(LockKey key, Claim.Kind kind, int size) {
        return holders.containsKey(key.name()) ? 0 : 1;
    }

    /** What the engine takes: a store with its admin. */
    interface View extends ClaimStore, ClaimAdmin {}

    /**
     * This store as the engine should see it: a proxy that has the abilities the flags switch on ({@link #handsOff},
     * {@link #queuesEveryWaiter}, {@link #subscribesFreely}, and {@link SessionHolds} unless {@link #expiresHolds}),
     * since the engine discovers abilities by the interfaces a store implements. Read the flags when called.
     */
    View view() {
        List<Class<?>> abilities = new ArrayList<>(List.of(View.class, GrantsWithWakeUp.class, ReportsLoss.class));
        if (handsOff) {
            abilities.add(HandsOff.class);
        }
        if (!expiresHolds) {
            abilities.add(SessionHolds.class);
        }
        if (queuesEveryWaiter) {
            abilities.add(QueueOrdered.class);
        }
        if (subscribesFreely) {
            abilities.add(FreeSubscriptions.class);
        }
        if (acquiresTogether) {
            abilities.add(AcquiresTogether.class);
        }
        return (View) Proxy.newProxyInstance(
                FakeLockStore.class.getClassLoader(), abilities.toArray(new Class<?>[0]), (proxy, method, args) -> {
                    try {
                        return method.invoke(this, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    @Override
    public void close() {}
}
