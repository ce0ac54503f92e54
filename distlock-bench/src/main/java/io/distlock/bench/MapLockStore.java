package io.distlock.bench;

import io.distlock.LockInfo;
import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.ClaimAdmin;
import io.distlock.spi.ClaimStore;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import io.distlock.spi.Subscription;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * Purpose
 *   The engine row (EngineBench) times lock()+unlock() through the engine against this store's own tryAcquire+release
 *   called directly, so the difference is what the engine adds. The store is therefore as cheap as a correct store
 *   can be: no I/O, no lock, one compare-and-set per step, so that the engine's share is not lost in the store's noise.
 *
 * State
 *   Per name one Entry: the current hold (owner, fencing token, expiry on System.nanoTime) in an AtomicReference, null
 *   when free; a fence counter that only grows; the wake-ups subscribed to the name. A hold past its expiry counts as
 *   free. An acquire draws its token before it swaps the hold in, so a lost race leaves a gap in the tokens, never a
 *   repeat.
 *
 * Kinds and abilities
 *   Locks only, and no ability beyond ClaimStore and ClaimAdmin: the engine drives it as a plain store (no hand-off,
 *   no grants with wake-ups), which is all an uncontended lock+unlock needs. It reserves no spare tokens, whatever a
 *   claim asks. Waiting works (a release runs the name's wake-ups) but is not what it is for.
 */
/** An in-memory lock store of the bench's own, for timing the engine against a store called directly. */
final class MapLockStore implements ClaimStore, ClaimAdmin {

    private record Hold(OwnerId owner, long token, long expiresAt) {}

    private static final class Entry {
        final AtomicReference<@Nullable Hold> hold = new AtomicReference<>();
        final AtomicLong fence = new AtomicLong();
        final List<Runnable> wakeUps = new CopyOnWriteArrayList<>();
    }

    private final Map<String, Entry> entries = new ConcurrentHashMap<>();

    private Entry entry(LockKey key) {
        return entries.computeIfAbsent(key.name(), n -> new Entry());
    }

    /** The hold when it has not expired, else null. */
    private static @Nullable Hold live(Entry e, long now) {
        Hold h = e.hold.get();
        return h != null && h.expiresAt() - now > 0 ? h : null;
    }

    @Override
    public Set<Claim.Kind> kinds() {
        return Set.of(Claim.Kind.LOCK);
    }

    @Override
    public Attempt tryAcquire(Claim claim, boolean queue) {
        Entry e = entry(claim.key());
        OwnerId owner = claim.owner();
        long now = System.nanoTime();
        Hold cur = e.hold.get();
        if (cur != null && cur.expiresAt() - now > 0) {
            return Attempt.busy(Duration.ofNanos(cur.expiresAt() - now));
        }
        long token = e.fence.incrementAndGet();
        if (!e.hold.compareAndSet(
                cur, new Hold(owner, token, now + claim.lease().length().toNanos()))) {
            return Attempt.busy(Duration.ofMillis(1)); // another owner took it meanwhile
        }
        return Attempt.acquired(token);
    }

    @Override
    public void abandon(Claim claim) {
        var unused = release(claim.key(), claim.owner());
    }

    @Override
    public boolean release(HeldClaim hold) {
        return release(hold.key(), hold.owner());
    }

    private boolean release(LockKey key, OwnerId owner) {
        Entry e = entries.get(key.name());
        if (e == null) {
            return false;
        }
        Hold cur = live(e, System.nanoTime());
        if (cur == null || !cur.owner().equals(owner) || !e.hold.compareAndSet(cur, null)) {
            return false;
        }
        wakeUp(e);
        return true;
    }

    private static void wakeUp(Entry e) {
        if (!e.wakeUps.isEmpty()) {
            e.wakeUps.forEach(Runnable::run);
        }
    }

    @Override
    public Set<HeldClaim> renew(Collection<HeldClaim> holds, Duration lease) {
        Set<HeldClaim> gone = new HashSet<>();
        for (HeldClaim h : holds) {
            Entry e = entries.get(h.key().name());
            long now = System.nanoTime();
            Hold cur = e == null ? null : live(e, now);
            if (e == null
                    || cur == null
                    || !cur.owner().equals(h.owner())
                    || !e.hold.compareAndSet(cur, new Hold(cur.owner(), cur.token(), now + lease.toNanos()))) {
                gone.add(h);
            }
        }
        return gone;
    }

    @Override
    public Subscription subscribe(LockKey key, Runnable wakeUp) {
        Entry e = entry(key);
        e.wakeUps.add(wakeUp);
        return () -> e.wakeUps.remove(wakeUp);
    }

    @Override
    public int available(LockKey key, Claim.Kind kind, int size) {
        Entry e = entries.get(key.name());
        return e != null && live(e, System.nanoTime()) != null ? 0 : 1;
    }

    @Override
    public Optional<LockInfo> inspect(LockKey key) {
        Entry e = entries.get(key.name());
        return e == null ? Optional.empty() : info(key.name(), e);
    }

    private static Optional<LockInfo> info(String name, Entry e) {
        long now = System.nanoTime();
        Hold h = live(e, now);
        if (h == null) {
            return Optional.empty();
        }
        return Optional.of(new LockInfo(
                name, h.owner().value(), Duration.ofNanos(h.expiresAt() - now), h.token(), e.wakeUps.size()));
    }

    @Override
    public List<LockInfo> list(String prefix, int limit) {
        List<LockInfo> out = new ArrayList<>();
        for (var en : entries.entrySet()) {
            if (out.size() >= limit) {
                break;
            }
            if (en.getKey().startsWith(prefix)) {
                info(en.getKey(), en.getValue()).ifPresent(out::add);
            }
        }
        return out;
    }

    @Override
    public Optional<LockInfo> forceRelease(LockKey key) {
        Entry e = entries.get(key.name());
        if (e == null) {
            return Optional.empty();
        }
        Optional<LockInfo> was = info(key.name(), e);
        e.hold.set(null);
        wakeUp(e);
        return was;
    }

    @Override
    public Optional<LockInfo> forceRelease(LockKey key, OwnerId owner) {
        Entry e = entries.get(key.name());
        Hold h = e == null ? null : live(e, System.nanoTime());
        if (e == null || h == null || !h.owner().equals(owner)) {
            return Optional.empty();
        }
        Optional<LockInfo> was = info(key.name(), e);
        if (!e.hold.compareAndSet(h, null)) {
            return Optional.empty();
        }
        wakeUp(e);
        return was;
    }

    @Override
    public void close() {}

    @Override
    public String toString() {
        return "MapLockStore";
    }
}
