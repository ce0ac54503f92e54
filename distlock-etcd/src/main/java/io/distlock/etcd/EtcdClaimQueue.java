package io.distlock.etcd;

import io.distlock.spi.Claim;
import io.distlock.spi.Mode;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * The queue of a read-write lock or semaphore
 *   Every owner that holds or waits has its own key under the name's prefix, on its lease, and the keys are ordered by
 *   their place: the create revision, except for a read key written by the holder of the write lock (a downgrade),
 *   which takes the place of that write key (after=<revision> in its value). Whether a key is granted follows from the
 *   keys ahead of it alone, so every client decides it the same way from one read, and keys that come later never
 *   change it:
 *   - a write key when no other key is ahead of it;
 *   - a read key when no write key of another owner is ahead of it;
 *   - a semaphore key when the permits of every key ahead of it, granted or waiting, plus its own fit the size. Once
 *     one key does not fit, no later one does, so a waiting large acquire holds back the small ones behind it.
 *   The keys a waiting key depends on are those ahead of it that block it; only their deletes can let it in.
 *
 * One name, one kind
 *   Each key's value says its kind and, for a semaphore, the size its owner asked for. A key of another kind anywhere
 *   in the queue (a lock's key has no kind), or a semaphore key ahead of ours with another size, means the name is in
 *   use as something else: the claim is refused with IllegalStateException. The first key's size is the
 *   semaphore's; a key behind it with another size is refused by its own owner's check, so mismatches never grant.
 */
/** The grant rule of read-write locks and semaphores over one read of a name's keys. */
final class EtcdClaimQueue {
    private EtcdClaimQueue() {}

    /** One key of a name's queue, as its value describes it. */
    record Key(ByteSequence key, long revision, long place, Claim.Kind kind, boolean exclusive, int permits, int size) {

        /** A lock's key (no kind in its value) or a key written by something else. */
        static Key of(KeyValue kv) {
            String value = kv.getValue().toString(StandardCharsets.UTF_8);
            long revision = kv.getCreateRevision();
            int owner = value.indexOf(" owner=");
            String head = owner < 0 ? value : value.substring(0, owner);
            Claim.Kind kind = null;
            boolean exclusive = true;
            int permits = 1;
            int size = 1;
            long after = 0;
            for (String field : head.split(" ")) {
                int eq = field.indexOf('=');
                if (eq < 0) {
                    continue;
                }
                String name = field.substring(0, eq);
                String v = field.substring(eq + 1);
                try {
                    switch (name) {
                        case "kind" ->
                            kind = v.equals("semaphore")
                                    ? Claim.Kind.SEMAPHORE
                                    : v.equals("rw") ? Claim.Kind.READ_WRITE_LOCK : null;
                        case "mode" -> exclusive = !v.equals("s");
                        case "permits" -> permits = Integer.parseInt(v);
                        case "size" -> size = Integer.parseInt(v);
                        case "after" -> after = Long.parseLong(v);
                        default -> {}
                    }
                } catch (NumberFormatException e) {
                    kind = null;
                }
            }
            if (kind == null) {
                // a lock's key: an exclusive hold of its one permit
                return new Key(kv.getKey(), revision, revision, Claim.Kind.LOCK, true, 1, 1);
            }
            return new Key(kv.getKey(), revision, after > 0 ? after : revision, kind, exclusive, permits, size);
        }
    }

    /** The keys of a name, in the order of a read sorted by create revision. */
    static List<Key> parse(List<KeyValue> kvs) {
        List<Key> out = new ArrayList<>(kvs.size());
        for (KeyValue kv : kvs) {
            out.add(Key.of(kv));
        }
        return out;
    }

    /**
     * The outcome for one key: granted, or the keys ahead of it that it waits behind with their permits, and how many
     * of those permits may remain for it to be granted ({@code budget}): a read or write key waits until none of its
     * blockers remains (budget 0), a semaphore key until the permits of the keys left ahead fit beside its own.
     */
    record Verdict(boolean granted, Map<Long, Integer> blockers, long budget) {}

    /**
     * Whether {@code mine} (one of {@code queue}) is granted to {@code claim}; the key of the owner's own write hold
     * ({@code ownWrite}) never blocks its read key.
     *
     * @throws IllegalStateException if a key ahead of ours says the name is another kind or a semaphore of another size
     */
    static Verdict decide(
            Claim claim, List<Key> queue, ByteSequence mine, long myPlace, @Nullable ByteSequence ownWrite) {
        checkKinds(claim, queue, mine, myPlace);
        Map<Long, Integer> blockers = new HashMap<>();
        boolean semaphore = claim.kind() == Claim.Kind.SEMAPHORE;
        long ahead = 0;
        for (Key k : queue) {
            if (k.key.equals(mine) || k.place > myPlace || (k.place == myPlace && k.revision > myPlace)) {
                continue; // ours, or behind ours; a downgraded read key shares its write key's place but follows it
            }
            if (semaphore) {
                ahead += k.permits;
                blockers.put(k.revision, k.permits);
            } else if (claim.mode() == Mode.EXCLUSIVE || (k.exclusive && !k.key.equals(ownWrite))) {
                blockers.put(k.revision, 1);
            }
        }
        long budget = semaphore ? (long) claim.size() - claim.permits() : 0;
        boolean granted = semaphore ? ahead <= budget : blockers.isEmpty();
        return new Verdict(granted, granted ? Map.of() : blockers, budget);
    }

    /**
     * Refuses a claim on a name with a key of another kind anywhere in its queue (a lock's key behind ours would
     * otherwise be granted at the head while a downgraded read key shares the place before it), or with a semaphore
     * key of another size ahead of ours.
     */
    static void checkKinds(Claim claim, List<Key> queue, @Nullable ByteSequence mine, long myPlace) {
        for (Key k : queue) {
            if (k.key.equals(mine)) {
                continue;
            }
            if (k.kind != claim.kind() || k.place <= myPlace) {
                check(claim.key().name(), claim.kind(), claim.size(), k);
            }
        }
    }

    /** Refuses {@code kind} and {@code size} on a name that has key {@code k}. */
    static void check(String name, Claim.Kind kind, int size, Key k) {
        if (k.kind != kind) {
            throw inUse(name, k.kind.label(), kind.label());
        }
        if (kind == Claim.Kind.SEMAPHORE && k.size != size) {
            throw new IllegalStateException("semaphore '" + name + "' has " + k.size
                    + " permits in all; this client asked for a size of " + size);
        }
    }

    static IllegalStateException inUse(String name, String inUse, String asked) {
        return new IllegalStateException("'" + name + "' is in use as a " + inUse + ", not as a " + asked);
    }

    /**
     * The granted keys of a read-write lock or semaphore: the longest run from the front of the queue (by place) that
     * the rule lets in.
     */
    static List<Key> granted(Claim.Kind kind, int size, List<Key> queue) {
        List<Key> byPlace = new ArrayList<>(queue);
        byPlace.sort(
                (a, b) -> a.place != b.place ? Long.compare(a.place, b.place) : Long.compare(a.revision, b.revision));
        List<Key> out = new ArrayList<>();
        long used = 0;
        for (Key k : byPlace) {
            if (kind == Claim.Kind.SEMAPHORE) {
                if (used + k.permits > size) {
                    break;
                }
                used += k.permits;
            } else if (k.exclusive) {
                if (out.isEmpty()) {
                    out.add(k); // the write key, with the read keys of its owner's downgrade right behind it
                    used = size;
                    continue;
                }
                break;
            } else if (used >= size && (out.isEmpty() || out.get(0).place != k.place)) {
                break; // behind a write key that is not its owner's
            }
            out.add(k);
        }
        return out;
    }

    /** How many of {@code size} permits no granted key has. */
    static int available(String name, Claim.Kind kind, int size, List<Key> queue) {
        for (Key k : queue) {
            check(name, kind, size, k);
        }
        long used = 0;
        for (Key k : granted(kind, size, queue)) {
            used += k.exclusive ? size : k.permits;
        }
        return (int) Math.max(0, size - used);
    }
}
