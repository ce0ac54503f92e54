package io.distlock.testkit;

import io.distlock.LockInfo;
import io.distlock.spi.Claim;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.Mode;
import io.distlock.spi.OwnerId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * Claims
 *   Per name: its kind (read-write lock or semaphore), its size, the live holds (owner, mode, permits, token, expiry)
 *   and a FIFO queue of waiting claims, each with a deadline by which its owner must come back (or be evicted, as a
 *   waiter that died). A claim is granted when, granting the waiters ahead of it in queue order first, it would still
 *   be compatible with everything held: exclusive against anything, shared while no other owner holds exclusively and
 *   the permits fit the size. A shared claim of an owner that holds the name exclusively is granted at once (a
 *   downgrade). The name's record goes away when it has neither holds nor waiters; its fence counter, shared with
 *   locks, and a semaphore's size stay.
 *
 * Latches
 *   Per name: the count, the ids of the count-downs it has counted, and an expiry that every change pushes to
 *   now + expiry. A latch at zero is removed (it reads as absent), and so is one past its expiry.
 *
 * Every step runs under the server's lock; releases, abandons, evictions, queue moves and a latch reaching zero notify
 * the name's subscribers, while a lease running out notifies nobody (like a key expiring in Redis).
 */
/** The in-memory server's read-write locks, semaphores and latches; every method runs under the server's lock. */
final class InMemoryClaims {

    private record Holder(OwnerId owner, Mode mode, int permits, long token, long expiresAt, long request) {}

    private record Waiting(Mode mode, int permits, long deadline) {}

    private record Entry(OwnerId owner, Mode mode) {}

    private static final class Name {
        final Claim.Kind kind;
        final int size;
        final List<Holder> holders = new ArrayList<>();
        final LinkedHashMap<Entry, Waiting> queue = new LinkedHashMap<>();

        Name(Claim.Kind kind, int size) {
            this.kind = kind;
            this.size = size;
        }
    }

    private static final class Latch {
        long count;
        long expiresAt;
        final Set<String> counted = new HashSet<>();
    }

    private final InMemoryLockServer server;
    private final Map<String, Name> names = new HashMap<>();
    private final Map<String, Latch> latches = new HashMap<>();
    /** Each semaphore's size, stored by its first user and kept for ever, like the name's fence counter. */
    private final Map<String, Integer> sizes = new HashMap<>();

    InMemoryClaims(InMemoryLockServer server) {
        this.server = server;
    }

    // ---------------------------------------------------------------- claims

    /** Returns the token (positive), or the nanos to retry within (negative). */
    long tryAcquire(Claim c, boolean queue) {
        String name = c.key().name();
        long now = server.now();
        Name n = live(name, now);
        if (n == null) {
            refuseOtherKind(name, c.kind().label());
            checkSize(name, c.kind(), c.size());
            n = new Name(c.kind(), c.size());
            names.put(name, n);
        } else {
            checkSame(name, n, c.kind(), c.size());
        }
        Entry self = new Entry(c.owner(), c.mode());
        for (int i = 0; i < n.holders.size(); i++) {
            Holder h = n.holders.get(i);
            if (h.request == c.request() && h.owner.equals(c.owner()) && h.mode == c.mode()) {
                // this acquire's grant, made by a hand-off while its own attempt was on its way: the same one again
                n.holders.set(
                        i,
                        new Holder(
                                h.owner,
                                h.mode,
                                h.permits,
                                h.token,
                                now + c.lease().length().toNanos(),
                                h.request));
                return h.token;
            }
        }
        if (grantable(n, c, self)) {
            if (n.queue.remove(self) != null) {
                server.publish(name); // the queue moved: those behind may pass now
            }
            long token = server.nextToken(name);
            n.holders.add(new Holder(
                    c.owner(),
                    c.mode(),
                    c.permits(),
                    token,
                    now + c.lease().length().toNanos(),
                    c.request()));
            return token;
        }
        long retry = Long.MAX_VALUE;
        for (Holder h : n.holders) {
            retry = Math.min(retry, h.expiresAt - now);
        }
        long refresh = server.waiterTimeoutNanos() / 3;
        if (queue) {
            n.queue.put(self, new Waiting(c.mode(), c.permits(), now + server.waiterTimeoutNanos()));
            retry = Math.min(retry, refresh);
        } else if (!n.queue.isEmpty()) {
            retry = Math.min(retry, refresh);
        }
        dropIfUnused(name, n);
        return -Math.max(1, Math.min(retry, refresh * 3));
    }

    private static boolean grantable(Name n, Claim c, Entry self) {
        if (c.mode() == Mode.SHARED) {
            for (Holder h : n.holders) {
                if (h.mode == Mode.EXCLUSIVE && h.owner.equals(c.owner())) {
                    return true; // a downgrade never waits for itself
                }
            }
        }
        List<Holder> granted = new ArrayList<>(n.holders);
        for (Map.Entry<Entry, Waiting> e : n.queue.entrySet()) {
            if (e.getKey().equals(self)) {
                break;
            }
            Waiting w = e.getValue();
            if (!compatible(granted, w.mode, w.permits, n.size)) {
                return false; // a waiter ahead goes first
            }
            granted.add(new Holder(e.getKey().owner, w.mode, w.permits, 0, 0, 0));
        }
        return compatible(granted, c.mode(), c.permits(), n.size);
    }

    private static boolean compatible(List<Holder> granted, Mode mode, int permits, int size) {
        if (mode == Mode.EXCLUSIVE) {
            return granted.isEmpty();
        }
        long used = permits;
        for (Holder h : granted) {
            if (h.mode == Mode.EXCLUSIVE) {
                return false;
            }
            used += h.permits;
        }
        return used <= size;
    }

    void abandon(Claim c) {
        String name = c.key().name();
        Name n = live(name, server.now());
        if (n == null) {
            return;
        }
        boolean changed = n.queue.remove(new Entry(c.owner(), c.mode())) != null;
        changed |= n.holders.removeIf(h -> h.owner.equals(c.owner()) && h.mode == c.mode());
        if (changed) {
            server.publish(name);
        }
        dropIfUnused(name, n);
    }

    boolean release(HeldClaim held) {
        String name = held.key().name();
        Name n = live(name, server.now());
        if (n == null || !n.holders.removeIf(h -> matches(h, held))) {
            return false;
        }
        server.publish(name);
        dropIfUnused(name, n);
        return true;
    }

    /**
     * Ends {@code from} and asks for {@code to} with {@code queue} true, in one step. Returns {@code to}'s token
     * (positive), 0 when {@code from} was gone (nothing changed), -1 when {@code to} waits in the queue.
     */
    long handOff(HeldClaim from, Claim to) {
        if (!release(from)) {
            return 0;
        }
        long r = tryAcquire(to, true);
        return r > 0 ? r : -1;
    }

    boolean renew(HeldClaim held, long leaseNanos) {
        long now = server.now();
        Name n = live(held.key().name(), now);
        if (n == null) {
            return false;
        }
        for (int i = 0; i < n.holders.size(); i++) {
            Holder h = n.holders.get(i);
            if (matches(h, held)) {
                n.holders.set(i, new Holder(h.owner, h.mode, h.permits, h.token, now + leaseNanos, h.request));
                return true;
            }
        }
        return false;
    }

    int available(String name, Claim.Kind kind, int size) {
        Name n = live(name, server.now());
        if (n == null) {
            refuseOtherKind(name, kind.label());
            checkSize(name, kind, size);
            return size;
        }
        checkSame(name, n, kind, size);
        long used = 0;
        for (Holder h : n.holders) {
            if (h.mode == Mode.EXCLUSIVE) {
                return 0;
            }
            used += h.permits;
        }
        return (int) (n.size - used);
    }

    private static boolean matches(Holder h, HeldClaim held) {
        return h.owner.equals(held.owner()) && h.mode == held.mode() && h.token == held.fencingToken();
    }

    private void checkSize(String name, Claim.Kind kind, int size) {
        if (kind == Claim.Kind.SEMAPHORE) {
            int stored = sizes.computeIfAbsent(name, k -> size);
            if (stored != size) {
                throw sizeMismatch(name, stored, size);
            }
        }
    }

    private static IllegalStateException sizeMismatch(String name, int stored, int asked) {
        return new IllegalStateException(
                "semaphore '" + name + "' has " + stored + " permits in all; this client asked for a size of " + asked);
    }

    private static void checkSame(String name, Name n, Claim.Kind kind, int size) {
        if (n.kind != kind) {
            throw new IllegalStateException(
                    "'" + name + "' is in use as a " + n.kind.label() + ", not as a " + kind.label());
        }
        if (n.size != size) {
            throw sizeMismatch(name, n.size, size);
        }
    }

    /** The name's live record: holds past their lease and waiters past their deadline are gone. */
    private @Nullable Name live(String name, long now) {
        Name n = names.get(name);
        if (n == null) {
            return null;
        }
        n.holders.removeIf(h -> now - h.expiresAt >= 0);
        boolean evicted = false;
        for (Iterator<Waiting> it = n.queue.values().iterator(); it.hasNext(); ) {
            if (now - it.next().deadline >= 0) {
                it.remove();
                evicted = true;
            }
        }
        if (evicted) {
            server.publish(name);
        }
        return dropIfUnused(name, n) ? null : n;
    }

    private boolean dropIfUnused(String name, Name n) {
        if (n.holders.isEmpty() && n.queue.isEmpty()) {
            names.remove(name, n);
            return true;
        }
        return false;
    }

    // ---------------------------------------------------------------- latches

    boolean trySetCount(String name, long count, long expiryNanos) {
        long now = server.now();
        Latch l = liveLatch(name, now);
        if (l == null) {
            refuseOtherKind(name, "count-down latch");
            l = new Latch();
            latches.put(name, l);
        } else if (l.count > 0) {
            return false;
        }
        l.count = count;
        l.counted.clear();
        l.expiresAt = now + expiryNanos;
        return true;
    }

    long countDown(String name, String callId, long expiryNanos) {
        long now = server.now();
        Latch l = liveLatch(name, now);
        if (l == null) {
            refuseOtherKind(name, "count-down latch");
            return 0;
        }
        if (l.counted.add(callId)) {
            l.count--;
            l.expiresAt = now + expiryNanos;
            if (l.count == 0) {
                latches.remove(name);
                server.publish(name);
            }
        }
        return l.count;
    }

    long count(String name) {
        Latch l = liveLatch(name, server.now());
        if (l == null) {
            refuseOtherKind(name, "count-down latch");
            return 0;
        }
        return l.count;
    }

    private @Nullable Latch liveLatch(String name, long now) {
        Latch l = latches.get(name);
        if (l != null && now - l.expiresAt >= 0) {
            latches.remove(name);
            return null;
        }
        return l;
    }

    // ---------------------------------------------------------------- admin

    Optional<LockInfo> inspect(String name) {
        long now = server.now();
        Name n = live(name, now);
        if (n != null) {
            List<LockInfo.Holder> holders = new ArrayList<>();
            for (Holder h : n.holders) {
                holders.add(new LockInfo.Holder(
                        h.owner.value(),
                        h.mode == Mode.EXCLUSIVE,
                        h.permits,
                        Duration.ofNanos(h.expiresAt - now),
                        h.token));
            }
            LockInfo.Kind kind =
                    n.kind == Claim.Kind.SEMAPHORE ? LockInfo.Kind.SEMAPHORE : LockInfo.Kind.READ_WRITE_LOCK;
            return Optional.of(LockInfo.ofHolders(name, kind, holders, n.queue.size()));
        }
        Latch l = liveLatch(name, now);
        return l == null
                ? Optional.empty()
                : Optional.of(LockInfo.ofLatch(name, l.count, Duration.ofNanos(l.expiresAt - now)));
    }

    List<LockInfo> list(String prefix, int limit) {
        TreeSet<String> inUse = new TreeSet<>(names.keySet());
        inUse.addAll(latches.keySet());
        List<LockInfo> out = new ArrayList<>();
        for (String name : inUse) {
            if (out.size() >= limit) {
                break;
            }
            if (name.startsWith(prefix)) {
                inspect(name).ifPresent(out::add);
            }
        }
        return out;
    }

    Optional<LockInfo> forceRelease(String name, OwnerId owner) {
        Optional<LockInfo> before = inspect(name);
        Name n = names.get(name);
        if (n == null || !n.holders.removeIf(h -> h.owner.equals(owner))) {
            return Optional.empty();
        }
        server.publish(name);
        dropIfUnused(name, n);
        return before;
    }

    Optional<LockInfo> forceReleaseAll(String name) {
        Optional<LockInfo> before = inspect(name);
        Name n = names.get(name);
        if (n == null || n.holders.isEmpty()) {
            return Optional.empty();
        }
        n.holders.clear();
        server.publish(name);
        dropIfUnused(name, n);
        return before;
    }

    // ---------------------------------------------------------------- kinds, test hooks

    /** Refuses to use {@code name} as {@code kind} while it is in use as something else. */
    void refuseOtherKind(String name, String kind) {
        long now = server.now();
        String inUse = null;
        Name n = live(name, now);
        if (n != null) {
            inUse = n.kind.label();
        } else if (liveLatch(name, now) != null) {
            inUse = "count-down latch";
        } else if (server.lockHeld(name)) {
            inUse = "lock";
        }
        if (inUse != null && !inUse.equals(kind)) {
            throw new IllegalStateException("'" + name + "' is in use as a " + inUse + ", not as a " + kind);
        }
    }

    /** Removes every hold of {@code name} behind its owners' backs; notifies nobody. */
    void expireHolds(String name) {
        Name n = names.get(name);
        if (n != null) {
            n.holders.clear();
            dropIfUnused(name, n);
        }
    }

    void residue(String name, List<String> out) {
        long now = server.now();
        Name n = live(name, now);
        if (n != null) {
            for (Holder h : n.holders) {
                out.add(n.kind.label() + " hold " + h);
            }
            if (!n.queue.isEmpty()) {
                out.add(n.kind.label() + " queue " + n.queue.keySet());
            }
        }
        Latch l = liveLatch(name, now);
        if (l != null) {
            out.add("latch count " + l.count);
        }
    }
}
