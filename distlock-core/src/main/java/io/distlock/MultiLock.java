package io.distlock;

import io.distlock.internal.Checks;
import io.distlock.internal.LockBatches;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.function.BiFunction;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * Members
 *   A multi-lock is a list of member DistributedLocks, of one client or of several clients and backends, sorted by
 *   name. Names are distinct (checked by of()), so the order is total and the same in every process: it is the
 *   canonical order in which members are taken. The members keep all state: the Lock view's holds and re-entry
 *   counts are the members' per-thread holds, a MultiLockHold is a list of member LockHolds. The multi-lock calls the
 *   public DistributedLock methods, and reaches a client's engine only through LockBatches (below), which installs
 *   holds exactly as the members' own acquires do.
 *
 * Acquiring
 *   Members are taken in canonical order, each waiting as its own lock waits (pub/sub, watches),
 *   with what is left of one deadline for the whole acquisition. Because every multi-lock takes its members in the
 *   same global order, a cycle of multi-locks each holding a member the next one waits for cannot form: two
 *   multi-locks over overlapping sets never deadlock, whatever order their callers listed the members in. When a
 *   member is not granted within the deadline, or its acquire throws (interrupt, store failure), the members taken
 *   by this call are released in reverse order and the call fails: all or nothing.
 *
 *   Together: a fresh acquisition offers each position to LockBatches first. A run of consecutive plain locks of one
 *   engine whose store AcquiresTogether is tried in one batched attempt; the engine keeps the grants before the first
 *   busy member and releases the ones after it, so the multi-lock then waits for that member holding only members that
 *   precede it, as above. The member after a batched attempt is always taken on its own (it was just found busy, or
 *   is not in the run); after it, the next position is offered to a batch again. Releases go through LockBatches too:
 *   one batched release per such engine.
 *
 *   A fixed lease starts for each member when that member is granted. If taking the whole set outlasted the lease
 *   (the first member's lease ran out while a later one was awaited) the set is released and taken again, within the
 *   same deadline.
 *
 * Losses
 *   The multi-lock adds one listener (MultiLockHolds) to each member lock object. Each multi-hold in force is
 *   registered with its members' tokens; a member's loss whose token matches marks the multi-hold lost and tells the
 *   multi-lock's listeners once. The members still held stay held until the owner releases the multi-hold, which
 *   releases them and throws LockLostException.
 *
 * Tokens
 *   fencingTokens() gives each member's token by member name. fencingToken() is the first member's token: it grows
 *   strictly for each fresh acquisition of a set whose first member is the same lock.
 */
/**
 * One lock over several {@link DistributedLock}s, of one client or of several clients and backends: all or nothing.
 *
 * <h2>Acquiring</h2>
 *
 * <p>Members are taken in one canonical order, by name, whatever order they were given in, so two multi-locks over
 * overlapping sets never deadlock each other. A wait time is one budget for the whole acquisition, not one per member.
 * When the whole set cannot be taken (a member stays busy for the rest of the wait, the wait is interrupted, a store
 * fails) the members taken by the call are released again before it returns: nothing is left behind. Members are
 * released in the reverse order.
 *
 * <p>A multi-lock taken while its owner already holds another multi-lock can deadlock like any nested locks: take one
 * multi-lock over every name instead.
 *
 * <h2>Owners, re-entry, leases</h2>
 *
 * <p>The {@link java.util.concurrent.locks.Lock} view is re-entrant per thread as each member is: the current thread
 * holds the multi-lock when it holds every member, {@link #getHoldCount()} is the smallest of the members' counts, and
 * a thread that also holds a member directly keeps that hold when it unlocks the multi-lock. {@link #acquire()} and
 * {@link #tryAcquire(Duration)} return a {@link MultiLockHold} (declared as {@link LockHold} where the signature
 * fixes it) owning one hold of each member. Each member's lease is renewed by its own client's watchdog; with a fixed
 * lease each member's lease starts when that member is granted.
 *
 * <h2>Losses and fencing</h2>
 *
 * <p>The multi-hold is lost as soon as any member's hold is lost: listeners are told once (with the multi-lock's name
 * and {@link #fencingToken()}), {@link #isHeldByCurrentThread()} and {@link LockHold#isValid()} turn false, and the
 * next release ends the members' holds that are left and throws {@link LockLostException}. Fence each resource with
 * its own member's token ({@link #fencingTokens()}, {@link MultiLockHold#fencingTokens()}); {@link #fencingToken()} is
 * the first member's.
 *
 * <h2>Round trips</h2>
 *
 * <p>Members of one client whose store tries and releases several locks together (Redis: the members' scripts
 * pipelined) are taken in one round trip and released in one, for a fresh acquisition: an uncontended multi-lock over
 * 8 names of one Redis client costs one round trip to acquire and one to release. When a member is busy, the members
 * before it are kept, the ones after it released again, and the busy one is awaited on its own, so the canonical order
 * holds. Other members (other stores, fair locks, read and write locks), re-entrant and asynchronous acquisitions cost
 * what their own lock costs, one round trip each.
 *
 * <pre>{@code
 * MultiLock transfer = MultiLock.of(redis.lock("account:1"), redis.lock("account:2"), jdbc.lock("ledger"));
 * if (transfer.tryLock(2, TimeUnit.SECONDS)) { // one 2 s budget for all three
 *     try {
 *         Map<String, Long> tokens = transfer.fencingTokens();
 *         ledger.post(tokens.get("ledger"), entry);
 *     } finally {
 *         transfer.unlock();
 *     }
 * }
 * }</pre>
 */
public final class MultiLock implements DistributedLock {
    private final List<DistributedLock> members;
    private final String name;
    private final MultiLockHolds holds;
    /** The wait of an acquire without a time limit: about 73 years, far from overflowing a deadline. */
    private static final long FOREVER_NANOS = Long.MAX_VALUE / 4;

    private final Map<Thread, MultiLockHolds.Active> threadHolds = new ConcurrentHashMap<>();

    private MultiLock(List<DistributedLock> members) {
        this.members = members;
        StringBuilder b = new StringBuilder("multi[");
        for (int i = 0; i < members.size(); i++) {
            b.append(i == 0 ? "" : ", ").append(members.get(i).name());
        }
        this.name = b.append(']').toString();
        this.holds = new MultiLockHolds(name);
        for (DistributedLock m : members) {
            m.addListener(holds);
        }
    }

    /**
     * A multi-lock over these locks, of any clients and backends.
     *
     * @throws NullPointerException if {@code locks} or one of them is null
     * @throws IllegalArgumentException if no lock is given, or two have the same name
     */
    public static MultiLock of(DistributedLock... locks) {
        Objects.requireNonNull(locks, "locks");
        return of(List.of(locks));
    }

    /**
     * A multi-lock over the locks of a collection, of any clients and backends.
     *
     * @throws NullPointerException if {@code locks} or one of them is null
     * @throws IllegalArgumentException if the collection is empty, or two locks have the same name
     */
    public static MultiLock of(Collection<? extends DistributedLock> locks) {
        Objects.requireNonNull(locks, "locks");
        if (locks.isEmpty()) {
            throw new IllegalArgumentException("locks must not be empty");
        }
        List<DistributedLock> sorted = new ArrayList<>(locks.size());
        Map<String, DistributedLock> byName = new HashMap<>();
        for (DistributedLock l : locks) {
            Objects.requireNonNull(l, "locks contains null");
            DistributedLock before = byName.put(l.name(), l);
            if (before != null) {
                throw new IllegalArgumentException("two locks are named '" + l.name() + "': " + before + " and " + l
                        + "; members of a multi-lock need distinct names");
            }
            sorted.add(l);
        }
        sorted.sort(Comparator.comparing(DistributedLock::name));
        return new MultiLock(List.copyOf(sorted));
    }

    /** {@code multi[<member names in order>]}. */
    @Override
    public String name() {
        return name;
    }

    /** The members in the canonical order they are taken in (by name). */
    public List<DistributedLock> members() {
        return members;
    }

    // ---------------------------------------------------------------- the Lock view

    @Override
    public void lock() {
        boolean fresh = getHoldCount() == 0;
        boolean together = holdsNone();
        int taken = 0;
        try {
            while (taken < members.size()) {
                if (together) {
                    int got;
                    try {
                        got = LockBatches.tryLockRun(members, taken, null, false);
                    } catch (InterruptedException e) {
                        throw new AssertionError("an uninterruptible batched attempt was interrupted", e);
                    }
                    taken += got;
                    together = false; // the member after the run (or its busy first) is taken on its own
                    continue;
                }
                members.get(taken).lock();
                taken++;
                together = true;
            }
        } catch (RuntimeException e) {
            unlockTaken(taken, e);
            throw e;
        }
        registerThreadHold(fresh);
    }

    /** Whether the current thread holds none of the members: only then are members tried together. */
    private boolean holdsNone() {
        for (DistributedLock m : members) {
            if (m.getHoldCount() != 0) {
                return false;
            }
        }
        return true;
    }

    @Override
    public void lock(long leaseTime, TimeUnit unit) {
        Duration lease = Checks.lease(leaseTime, unit, "leaseTime");
        boolean interrupted = false;
        while (true) {
            try {
                if (takeAll(Long.MAX_VALUE / 4, lease)) {
                    break;
                }
            } catch (InterruptedException e) {
                interrupted = true; // lock() does not answer interrupts; the flag is set again below
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        boolean fresh = getHoldCount() == 0;
        boolean together = holdsNone();
        int taken = 0;
        try {
            while (taken < members.size()) {
                if (together) {
                    taken += LockBatches.tryLockRun(members, taken, null, true);
                    together = false;
                    continue;
                }
                members.get(taken).lockInterruptibly();
                taken++;
                together = true;
            }
        } catch (InterruptedException | RuntimeException e) {
            unlockTaken(taken, e);
            throw e;
        }
        registerThreadHold(fresh);
    }

    @Override
    public boolean tryLock() {
        boolean fresh = getHoldCount() == 0;
        boolean together = holdsNone();
        int taken = 0;
        try {
            while (taken < members.size()) {
                if (together) {
                    try {
                        taken += LockBatches.tryLockRun(members, taken, null, true);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt(); // as a member's tryLock() does
                        unlockTaken(taken, null);
                        return false;
                    }
                    together = false;
                    continue;
                }
                if (!members.get(taken).tryLock()) {
                    unlockTaken(taken, null);
                    return false;
                }
                taken++;
                together = true;
            }
        } catch (RuntimeException e) {
            unlockTaken(taken, e);
            throw e;
        }
        registerThreadHold(fresh);
        return true;
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return takeAll(Checks.waitNanos(time, unit), null);
    }

    @Override
    public boolean tryLock(long waitTime, long leaseTime, TimeUnit unit) throws InterruptedException {
        Duration lease = Checks.lease(leaseTime, unit, "leaseTime");
        return takeAll(Checks.waitNanos(waitTime, unit), lease);
    }

    /**
     * Takes every member for the current thread within {@code waitNanos}, with {@code lease} fixed or (null) renewed.
     */
    private boolean takeAll(long waitNanos, @Nullable Duration lease) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        long deadline = System.nanoTime() + waitNanos;
        boolean fresh = getHoldCount() == 0;
        while (true) {
            long firstGrant = 0;
            int taken = 0;
            boolean together = holdsNone();
            try {
                while (taken < members.size()) {
                    if (together) {
                        int got = LockBatches.tryLockRun(members, taken, lease, true);
                        if (got > 0 && taken == 0) {
                            firstGrant = System.nanoTime();
                        }
                        taken += got;
                        together = false;
                        continue;
                    }
                    DistributedLock m = members.get(taken);
                    long left = Math.max(0, deadline - System.nanoTime());
                    boolean got = lease == null
                            ? m.tryLock(left, TimeUnit.NANOSECONDS)
                            : m.tryLock(left, lease.toNanos(), TimeUnit.NANOSECONDS);
                    if (!got) {
                        unlockTaken(taken, null);
                        return false;
                    }
                    if (taken++ == 0) {
                        firstGrant = System.nanoTime();
                    }
                    together = true;
                }
            } catch (InterruptedException | RuntimeException e) {
                unlockTaken(taken, e);
                throw e;
            }
            if (lease == null || !fresh || System.nanoTime() - firstGrant < lease.toNanos()) {
                registerThreadHold(fresh);
                return true;
            }
            // the first member's lease ran out while a later one was awaited: the set was never held together
            unlockTaken(taken, null);
            if (deadline - System.nanoTime() <= 0) {
                return false;
            }
        }
    }

    /** Releases, in reverse order, the first {@code taken} members that this call took for the current thread. */
    private void unlockTaken(int taken, @Nullable Throwable primary) {
        List<RuntimeException> failures = new ArrayList<>();
        for (int i = taken - 1; i >= 0; i--) {
            try {
                members.get(i).unlock();
            } catch (LockLostException e) {
                // a fixed lease that ended while later members were awaited: nothing is left to release
            } catch (RuntimeException e) {
                failures.add(e);
            }
        }
        if (primary != null) {
            failures.forEach(primary::addSuppressed);
        } else {
            throwFirst(failures);
        }
    }

    private void registerThreadHold(boolean fresh) {
        if (!fresh) {
            return;
        }
        Map<String, Long> tokens = new LinkedHashMap<>();
        for (DistributedLock m : members) {
            long token;
            try {
                token = m.fencingToken();
            } catch (IllegalMonitorStateException e) {
                token = -1; // lost at once; found by the check below
            }
            tokens.put(m.name(), token);
        }
        MultiLockHolds.Active a = holds.register(tokens);
        threadHolds.put(Thread.currentThread(), a);
        // a member lost before the registration above was not matched by the watch
        if (!isHeldByCurrentThread()) {
            holds.markLost(a, null);
        }
    }

    /**
     * Releases one hold count of the current thread on every member, in reverse order. When the thread's multi-hold
     * was lost, the members still held are released and {@link LockLostException} is thrown.
     *
     * @throws IllegalMonitorStateException if the current thread holds none of the members
     * @throws LockLostException if a member's hold was lost before this release
     * @throws DistributedLockException if a store cannot be reached; that member's hold then expires with its lease
     */
    @Override
    public void unlock() {
        List<RuntimeException> failures = new ArrayList<>();
        int notHeld = 0;
        List<@Nullable RuntimeException> outcomes = LockBatches.unlockAll(members);
        for (int i = members.size() - 1; i >= 0; i--) {
            RuntimeException e = outcomes.get(i);
            if (e == null) {
                continue;
            }
            if (e instanceof IllegalMonitorStateException && !(e instanceof LockLostException)) {
                notHeld++;
            }
            failures.add(e);
        }
        if (notHeld == members.size()) {
            throw new IllegalMonitorStateException(name + " is not held by the current thread");
        }
        if (getHoldCount() == 0) {
            MultiLockHolds.Active a = threadHolds.remove(Thread.currentThread());
            boolean lost = failures.stream().anyMatch(LockLostException.class::isInstance);
            if (a != null) {
                if (lost) {
                    holds.markLost(a, null);
                }
                holds.unregister(a, failures.isEmpty());
            }
        }
        for (RuntimeException f : failures) {
            if (f instanceof LockLostException lost) {
                failures.stream().filter(o -> o != lost).forEach(lost::addSuppressed);
                throw lost;
            }
        }
        throwFirst(failures);
    }

    static void throwFirst(List<RuntimeException> failures) {
        if (!failures.isEmpty()) {
            RuntimeException first = failures.get(0);
            failures.stream().skip(1).forEach(first::addSuppressed);
            throw first;
        }
    }

    /**
     * Not supported.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("a multi-lock has no condition queue: " + name);
    }

    /**
     * The first member's fencing token of the current thread's hold.
     *
     * @throws IllegalMonitorStateException if the current thread does not hold the multi-lock
     */
    @Override
    public long fencingToken() {
        requireHeld();
        return members.get(0).fencingToken();
    }

    /**
     * Every member's fencing token of the current thread's hold, by member name, in canonical order.
     *
     * @throws IllegalMonitorStateException if the current thread does not hold the multi-lock
     */
    public Map<String, Long> fencingTokens() {
        requireHeld();
        Map<String, Long> tokens = new LinkedHashMap<>();
        for (DistributedLock m : members) {
            tokens.put(m.name(), m.fencingToken());
        }
        return tokens;
    }

    private void requireHeld() {
        if (!isHeldByCurrentThread()) {
            throw new IllegalMonitorStateException(name + " is not held by the current thread");
        }
    }

    /** Whether any member is held by any owner now: one round trip per member this client does not hold. */
    @Override
    public boolean isLocked() {
        for (DistributedLock m : members) {
            if (m.isLocked()) {
                return true;
            }
        }
        return false;
    }

    @Override
    public boolean isHeldByCurrentThread() {
        for (DistributedLock m : members) {
            if (!m.isHeldByCurrentThread()) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int getHoldCount() {
        int min = Integer.MAX_VALUE;
        for (DistributedLock m : members) {
            min = Math.min(min, m.getHoldCount());
        }
        return min;
    }

    // ---------------------------------------------------------------- holds

    /**
     * Acquires every member for a new {@link MultiLockHold}, waiting as long as it takes; each member's watchdog renews
     * its lease.
     *
     * @throws InterruptedException if interrupted while waiting; the members taken are released
     * @throws DistributedLockException if a store cannot be reached; the members taken are released
     */
    @Override
    public MultiLockHold acquire() throws InterruptedException {
        return holds.acquire(members);
    }

    /**
     * Acquires every member for a new {@link MultiLockHold} if the whole set can be taken within {@code wait}.
     *
     * @return the {@link MultiLockHold}, or empty if a member stayed busy for the rest of the wait
     * @throws InterruptedException if interrupted while waiting; the members taken are released
     * @throws NullPointerException if {@code wait} is null
     * @throws DistributedLockException if a store cannot be reached; the members taken are released
     */
    @Override
    public Optional<LockHold> tryAcquire(Duration wait) throws InterruptedException {
        return Optional.ofNullable(holds.tryAcquire(members, Checks.waitNanos(wait, "wait"), null));
    }

    /**
     * Acquires every member for a new {@link MultiLockHold} if the whole set can be taken within {@code wait}, each
     * member with a fixed lease from its grant.
     *
     * @return the {@link MultiLockHold}, or empty if a member stayed busy for the rest of the wait
     * @throws InterruptedException if interrupted while waiting; the members taken are released
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code lease} is not positive or overflows
     * @throws DistributedLockException if a store cannot be reached; the members taken are released
     */
    @Override
    public Optional<LockHold> tryAcquire(Duration wait, Duration lease) throws InterruptedException {
        long waitNanos = Checks.waitNanos(wait, "wait");
        return Optional.ofNullable(holds.tryAcquire(members, waitNanos, Checks.lease(lease, "lease")));
    }

    /**
     * Takes every member asynchronously (each through its own {@link DistributedLock#tryAcquireAsync(Duration)}, one
     * after another in canonical order), with no thread waiting. Cancelling the future cancels the member acquire in
     * progress and releases the members taken.
     */
    @Override
    public CompletableFuture<LockHold> acquireAsync() {
        CompletableFuture<Optional<LockHold>> inner =
                takeAsync(System.nanoTime() + FOREVER_NANOS, null, (m, left) -> m.tryAcquireAsync(left));
        CompletableFuture<LockHold> outer = inner.thenApply(Optional::orElseThrow);
        outer.whenComplete((v, e) -> {
            if (outer.isCancelled() && !inner.cancel(false) && !inner.isCompletedExceptionally()) {
                inner.join().ifPresent(LockHold::release);
            }
        });
        return outer;
    }

    /** As {@link #acquireAsync()}, with one wait budget for the whole set. */
    @Override
    public CompletableFuture<Optional<LockHold>> tryAcquireAsync(Duration wait) {
        long waitNanos = Checks.waitNanos(wait, "wait");
        return takeAsync(System.nanoTime() + waitNanos, null, (m, left) -> m.tryAcquireAsync(left));
    }

    /** As {@link #tryAcquireAsync(Duration)}, each member with a fixed lease from its grant. */
    @Override
    public CompletableFuture<Optional<LockHold>> tryAcquireAsync(Duration wait, Duration lease) {
        long waitNanos = Checks.waitNanos(wait, "wait");
        Duration l = Checks.lease(lease, "lease");
        return takeAsync(System.nanoTime() + waitNanos, l, (m, left) -> m.tryAcquireAsync(left, l));
    }

    private CompletableFuture<Optional<LockHold>> takeAsync(
            long deadline,
            @Nullable Duration lease,
            BiFunction<DistributedLock, Duration, CompletableFuture<Optional<LockHold>>> step) {
        return MultiLockAsync.take(
                members,
                step,
                deadline,
                lease,
                (taken, firstGrant) -> Optional.of(new MultiLockHolds.Hold(name, holds, taken)));
    }

    /** Adds a listener for the multi-holds taken through this multi-lock object. */
    @Override
    public void addListener(LockListener listener) {
        holds.addListener(Objects.requireNonNull(listener, "listener"));
    }

    @Override
    public void removeListener(LockListener listener) {
        holds.removeListener(Objects.requireNonNull(listener, "listener"));
    }

    @Override
    public String toString() {
        return "MultiLock" + members;
    }
}
