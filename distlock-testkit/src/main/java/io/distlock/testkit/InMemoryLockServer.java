package io.distlock.testkit;

import io.distlock.LockInfo;
import io.distlock.internal.Ticker;
import io.distlock.spi.HandOff;
import io.distlock.spi.OwnerId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * The reference lock store: the exact semantics every backend's atomic steps must have, kept in memory under one
 * lock. Per name it keeps a hold (owner, expiry, token), a fence counter that never goes away, and a FIFO queue of
 * fair waiters, each with a deadline by which it must refresh its entry (come back with another attempt) or be
 * evicted. Time is a monotonic Ticker, never a wall clock. Release, abandon, hand-off and queue changes notify the
 * name's subscribers on a separate thread, as a pub/sub message would arrive; a lease running out notifies nobody
 * (like a Redis key expiring), so waiters fall back to the holder's remaining lease.
 */
/**
 * An in-memory lock store shared by the clients made from it, with exactly the contract's semantics: leases on a
 * monotonic clock, fencing, owner-checked release, a fair queue with eviction of waiters that stop refreshing, and
 * release notifications. It lives in one JVM: clients in other processes cannot share it.
 *
 * <pre>{@code
 * InMemoryLockServer server = InMemoryLockServer.create();
 * LockClient a = server.newClient();
 * LockClient b = server.newClient();   // contends with a, as two processes would
 * }</pre>
 */
public final class InMemoryLockServer implements AutoCloseable {
    /** How long a fair waiter's queue entry lives without a new attempt. */
    public static final Duration DEFAULT_WAITER_TIMEOUT = Duration.ofSeconds(5);

    private final Ticker ticker;
    private final long waiterTimeoutNanos;
    private final ReentrantLock lock = new ReentrantLock();
    private final Map<String, Hold> holds = new HashMap<>();
    private final Map<String, Long> fences = new HashMap<>();
    private final Map<String, LinkedHashMap<OwnerId, Long>> queues = new HashMap<>();
    private final Map<String, CopyOnWriteArrayList<Runnable>> subscribers = new HashMap<>();
    private final ExecutorService notifier = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "distlock-inmemory-notifier");
        t.setDaemon(true);
        return t;
    });

    private final InMemoryClaims claims = new InMemoryClaims(this);

    record Hold(OwnerId owner, long expiresAt, long token) {}

    private InMemoryLockServer(Ticker ticker, Duration waiterTimeout) {
        this.ticker = ticker;
        this.waiterTimeoutNanos = waiterTimeout.toNanos();
    }

    /** A server on the system's monotonic clock. */
    public static InMemoryLockServer create() {
        return new InMemoryLockServer(Ticker.system(), DEFAULT_WAITER_TIMEOUT);
    }

    /** A server on the given clock, with the given fair-waiter timeout. */
    public static InMemoryLockServer create(LongSupplier nanoTime, Duration waiterTimeout) {
        Objects.requireNonNull(nanoTime, "nanoTime");
        if (waiterTimeout.isNegative() || waiterTimeout.isZero()) {
            throw new IllegalArgumentException("waiterTimeout must be positive: " + waiterTimeout);
        }
        return new InMemoryLockServer(nanoTime::getAsLong, waiterTimeout);
    }

    /** A new client of this server with the default 30 s watchdog lease. */
    public InMemoryLockClient newClient() {
        return InMemoryLockClient.builder().server(this).build();
    }

    /** A new client of this server with the given watchdog lease. */
    public InMemoryLockClient newClient(Duration watchdogLease) {
        return InMemoryLockClient.builder()
                .server(this)
                .leaseTime(watchdogLease)
                .build();
    }

    Ticker ticker() {
        return ticker;
    }

    /** Runs {@code step} on the read-write locks, semaphores and latches, under the server's lock. */
    <T> T claims(Function<InMemoryClaims, T> step) {
        lock.lock();
        try {
            return step.apply(claims);
        } finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------- for InMemoryClaims (caller holds lock)

    long now() {
        return ticker.read();
    }

    long waiterTimeoutNanos() {
        return waiterTimeoutNanos;
    }

    long nextToken(String name) {
        return fences.merge(name, 1L, Long::sum);
    }

    boolean lockHeld(String name) {
        return live(name, ticker.read()) != null;
    }

    // ---------------------------------------------------------------- atomic steps (one "round trip" each)

    /**
     * See {@link io.distlock.spi.ClaimStore#tryAcquire}; returns the token, or the nanos to retry within (negative).
     * {@code strict}: the queue is the only order (as in ZooKeeper and etcd), so a non-queued attempt does not pass a
     * queued waiter either. A grant reserves {@code spareTokens} tokens after its own (see {@link
     * io.distlock.spi.Attempt.Acquired#spareTokens()}).
     */
    long tryAcquire(String name, OwnerId owner, long leaseNanos, boolean queue, boolean strict, int spareTokens) {
        lock.lock();
        try {
            claims.refuseOtherKind(name, "lock");
            long now = ticker.read();
            Hold h = live(name, now);
            LinkedHashMap<OwnerId, Long> q = liveQueue(name, now);
            if (h == null) {
                boolean first =
                        q == null || q.isEmpty() || q.keySet().iterator().next().equals(owner);
                if ((!queue && !strict) || first) {
                    if (q != null) {
                        q.remove(owner);
                        dropQueueIfEmpty(name, q);
                    }
                    long token = fences.merge(name, 1L + spareTokens, Long::sum) - spareTokens;
                    holds.put(name, new Hold(owner, now + leaseNanos, token));
                    return token;
                }
            }
            long retry = h == null ? waiterTimeoutNanos / 3 : h.expiresAt - now;
            if (queue) {
                queues.computeIfAbsent(name, n -> new LinkedHashMap<>()).put(owner, now + waiterTimeoutNanos);
                retry = Math.min(retry, waiterTimeoutNanos / 3);
            }
            return -Math.max(1, retry);
        } finally {
            lock.unlock();
        }
    }

    boolean release(String name, OwnerId owner) {
        lock.lock();
        try {
            Hold h = live(name, ticker.read());
            if (h == null || !h.owner.equals(owner)) {
                return false;
            }
            holds.remove(name);
            publish(name);
            return true;
        } finally {
            lock.unlock();
        }
    }

    void abandon(String name, OwnerId owner) {
        lock.lock();
        try {
            long now = ticker.read();
            LinkedHashMap<OwnerId, Long> q = liveQueue(name, now);
            boolean changed = false;
            if (q != null && q.remove(owner) != null) {
                dropQueueIfEmpty(name, q);
                changed = true;
            }
            Hold h = live(name, now);
            if (h != null && h.owner.equals(owner)) {
                holds.remove(name);
                changed = true;
            }
            if (changed) {
                publish(name);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Renews what the owner still holds; returns whether it did. */
    boolean renew(String name, OwnerId owner, long leaseNanos) {
        lock.lock();
        try {
            long now = ticker.read();
            Hold h = live(name, now);
            if (h == null || !h.owner.equals(owner)) {
                return false;
            }
            holds.put(name, new Hold(owner, now + leaseNanos, h.token));
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Extends whatever hold {@code name} has, whoever owns it; only the testkit's broken variants use this. */
    boolean renewWhoeverHolds(String name, long leaseNanos) {
        lock.lock();
        try {
            long now = ticker.read();
            Hold h = live(name, now);
            if (h == null) {
                return false;
            }
            holds.put(name, new Hold(h.owner, now + leaseNanos, h.token));
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * See {@link io.distlock.spi.HandsOff#handOff}. {@code strict}: when owners other than {@code to} are queued ahead
     * of it, {@code from}'s hold ends and {@code to} joins the queue instead.
     */
    HandOff handOff(String name, OwnerId from, OwnerId to, long leaseNanos, boolean strict) {
        lock.lock();
        try {
            long now = ticker.read();
            Hold h = live(name, now);
            if (h == null || !h.owner.equals(from)) {
                return HandOff.notHeld();
            }
            LinkedHashMap<OwnerId, Long> q = liveQueue(name, now);
            if (strict
                    && q != null
                    && !q.isEmpty()
                    && !q.keySet().iterator().next().equals(to)) {
                holds.remove(name);
                q.putIfAbsent(to, now + waiterTimeoutNanos);
                publish(name);
                return HandOff.queued();
            }
            long token = fences.merge(name, 1L, Long::sum);
            holds.put(name, new Hold(to, now + leaseNanos, token));
            if (q != null) {
                q.remove(to);
                dropQueueIfEmpty(name, q);
            }
            return HandOff.granted(token);
        } finally {
            lock.unlock();
        }
    }

    Runnable subscribe(String name, Runnable wakeUp) {
        lock.lock();
        try {
            subscribers.computeIfAbsent(name, n -> new CopyOnWriteArrayList<>()).add(wakeUp);
        } finally {
            lock.unlock();
        }
        return () -> {
            lock.lock();
            try {
                CopyOnWriteArrayList<Runnable> list = subscribers.get(name);
                if (list != null) {
                    list.remove(wakeUp);
                    if (list.isEmpty()) {
                        subscribers.remove(name);
                    }
                }
            } finally {
                lock.unlock();
            }
        };
    }

    Optional<LockInfo> inspect(String name) {
        lock.lock();
        try {
            long now = ticker.read();
            Hold h = live(name, now);
            if (h == null) {
                return Optional.empty();
            }
            LinkedHashMap<OwnerId, Long> q = liveQueue(name, now);
            return Optional.of(new LockInfo(
                    name, h.owner.value(), Duration.ofNanos(h.expiresAt - now), h.token, q == null ? 0 : q.size()));
        } finally {
            lock.unlock();
        }
    }

    List<LockInfo> list(String prefix, int limit) {
        lock.lock();
        try {
            List<LockInfo> out = new ArrayList<>();
            for (String name : new TreeMap<>(holds).keySet()) {
                if (out.size() >= limit) {
                    break;
                }
                if (name.startsWith(prefix)) {
                    inspect(name).ifPresent(out::add);
                }
            }
            return out;
        } finally {
            lock.unlock();
        }
    }

    Optional<LockInfo> forceRelease(String name) {
        lock.lock();
        try {
            Optional<LockInfo> info = inspect(name);
            if (info.isPresent()) {
                holds.remove(name);
                publish(name);
            }
            return info;
        } finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------- test hooks

    /**
     * Removes the hold of {@code name} (every hold, for a read-write lock or a semaphore) behind its owner's back, as
     * an expired lease would; notifies nobody.
     */
    public void expireHold(String name) {
        lock.lock();
        try {
            holds.remove(name);
            claims.expireHolds(name);
        } finally {
            lock.unlock();
        }
    }

    /** What the server keeps for {@code name} besides its fence counter; empty when nothing is left behind. */
    public List<String> residue(String name) {
        lock.lock();
        try {
            long now = ticker.read();
            List<String> out = new ArrayList<>();
            Hold h = live(name, now);
            if (h != null) {
                out.add("hold " + h);
            }
            LinkedHashMap<OwnerId, Long> q = liveQueue(name, now);
            if (q != null && !q.isEmpty()) {
                out.add("queue " + q.keySet());
            }
            claims.residue(name, out);
            return out;
        } finally {
            lock.unlock();
        }
    }

    /** Stops the notifier thread. Clients of a closed server keep working but get no wake-ups. */
    @Override
    public void close() {
        notifier.shutdownNow();
        try {
            var unused = notifier.awaitTermination(1, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ---------------------------------------------------------------- internals (caller holds lock)

    private @Nullable Hold live(String name, long now) {
        Hold h = holds.get(name);
        if (h != null && now - h.expiresAt >= 0) {
            holds.remove(name);
            return null;
        }
        return h;
    }

    private @Nullable LinkedHashMap<OwnerId, Long> liveQueue(String name, long now) {
        LinkedHashMap<OwnerId, Long> q = queues.get(name);
        if (q == null) {
            return null;
        }
        boolean evicted = false;
        for (Iterator<Long> it = q.values().iterator(); it.hasNext(); ) {
            if (now - it.next() >= 0) {
                it.remove(); // a waiter that stopped refreshing died
                evicted = true;
            }
        }
        if (evicted) {
            publish(name);
        }
        dropQueueIfEmpty(name, q);
        return q;
    }

    private void dropQueueIfEmpty(String name, LinkedHashMap<OwnerId, Long> q) {
        if (q.isEmpty()) {
            queues.remove(name);
        }
    }

    void publish(String name) {
        CopyOnWriteArrayList<Runnable> list = subscribers.get(name);
        if (list == null || notifier.isShutdown()) {
            return;
        }
        for (Runnable r : list) {
            notifier.execute(r);
        }
    }
}
