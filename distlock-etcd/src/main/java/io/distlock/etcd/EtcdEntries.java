package io.distlock.etcd;

import static io.distlock.etcd.EtcdRequests.bytes;

import io.distlock.etcd.EtcdLeases.LeaseRef;
import io.distlock.internal.Ticker;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.DelayQueue;
import java.util.concurrent.Delayed;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * What an entry is
 *   For every key this client wrote and still counts on, an Entry holds the key's create revision (a queue entry's
 *   place, a hold's fencing token), the lease it is on, whether that is the shared watchdog lease, whether etcd granted
 *   it, and when a round trip last saw it. The map is keyed by the key's path, which names the owner.
 *
 * Stale entries
 *   An attempt trusts an entry only while it is a queue entry of the same kind of lease on a live lease (usable). A
 *   grant the engine has given up on, or a leftover of the other kind, is dropped: its key is deleted, owner-checked by
 *   its create revision, and its own lease revoked, so a fresh acquisition always writes a fresh key with a fresh,
 *   greater token.
 *
 * Fixed leases
 *   A hold with a fixed lease is on an etcd lease of its own, granted with the hold's length as its TTL and never kept
 *   alive once granted, so etcd ends it by itself if this client dies (the length rounded up to whole seconds, at
 *   least etcd's minimum TTL). While the client lives, the engine marks the hold lost at its lease end and ends it
 *   through EtcdLockStore.abandonHold (SessionHolds): the key deleted if it still has the hold's create revision, the
 *   lease revoked. The entry of such a grant stays until its lease has passed, then the next grant or attempt
 *   forgets it (fixedEnds), so owners that are used once (a LockHold's) leave nothing behind; abandonHold then finds
 *   the lease in the deleted key. An owner that acquires again before that finds its grant stale and drops it.
 */
/** What this client knows of its own keys in etcd: queue entries and grants, by key path. */
final class EtcdEntries {
    private final EtcdRequests requests;
    private final EtcdLeases leases;
    private final Ticker ticker;
    private final ConcurrentHashMap<String, Entry> map = new ConcurrentHashMap<>();
    private final DelayQueue<FixedEnd> fixedEnds = new DelayQueue<>();

    EtcdEntries(EtcdRequests requests, EtcdLeases leases, Ticker ticker) {
        this.requests = requests;
        this.leases = leases;
        this.ticker = ticker;
    }

    @Nullable
    Entry get(String path) {
        return map.get(path);
    }

    /**
     * The queue entry at {@code path} if a new attempt with this kind of lease may go on with it; otherwise drops what
     * is there (see {@link #dropStale}) and returns null.
     */
    @Nullable
    Entry usable(String path, boolean watchdogHold) {
        Entry known = map.get(path);
        if (known != null && (known.granted || known.shared != watchdogHold || known.lease.dead)) {
            // a grant the engine has given up on (its lease ended locally), or a leftover of another kind
            dropStale(path, known);
            return null;
        }
        return known;
    }

    /** Records a queue entry. */
    void queued(String path, Entry e) {
        map.put(path, e);
    }

    /**
     * Records a grant of a hold with lease {@code lease}, dated from {@code e.checkedAt}. A grant on a lease of its own
     * (a fixed lease) is forgotten once that lease has passed; etcd ends the key itself.
     */
    void granted(String path, Entry e, Duration lease) {
        forgetEndedFixedGrants();
        map.put(path, e);
        if (!e.shared) {
            fixedEnds.add(new FixedEnd(path, e, e.checkedAt + lease.toNanos()));
        }
    }

    /** Forgets {@code e} if it is still the entry at {@code path}; whether it was. */
    boolean remove(String path, Entry e) {
        return map.remove(path, e);
    }

    /** Forgets whatever entry is at {@code path}, and returns it. */
    @Nullable
    Entry remove(String path) {
        return map.remove(path);
    }

    /** Forgets a key that has ended: its entry and its own lease. */
    void forget(String path, @Nullable Entry e) {
        if (e != null && map.remove(path, e)) {
            ended(e);
        }
    }

    /** The key of an entry no longer in the map has ended: revokes its own lease. */
    void ended(Entry e) {
        if (!e.shared) {
            leases.revokeQuietly(e.lease);
        }
    }

    /** Deletes a key the engine no longer counts on (owner-checked by its create revision) and forgets it. */
    void dropStale(String path, Entry known) {
        requests.deleteIfRevision(bytes(path), known.revision);
        map.remove(path, known);
        ended(known);
    }

    /** Forgets every entry on {@code lease}. */
    void forgetAllOn(LeaseRef lease) {
        map.values().removeIf(e -> e.lease == lease);
    }

    /** Forgets every entry; returns the ids of the leases they were on. */
    Set<Long> clear() {
        Set<Long> ids = new HashSet<>();
        for (Entry e : map.values()) {
            ids.add(e.lease.id);
        }
        map.clear();
        return ids;
    }

    /** Forgets the grants of fixed leases whose lease has passed (the engine has marked them lost). */
    private void forgetEndedFixedGrants() {
        for (FixedEnd f = fixedEnds.poll(); f != null; f = fixedEnds.poll()) {
            map.remove(f.path, f.entry);
        }
    }

    /** When the lease of a fixed-lease grant has passed, in ticker time. */
    private final class FixedEnd implements Delayed {
        final String path;
        final Entry entry;
        final long endsAt;

        FixedEnd(String path, Entry entry, long endsAt) {
            this.path = path;
            this.entry = entry;
            this.endsAt = endsAt;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(endsAt - ticker.read(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed other) {
            return other instanceof FixedEnd f
                    ? Long.compare(endsAt - f.endsAt, 0)
                    : Long.compare(getDelay(TimeUnit.NANOSECONDS), other.getDelay(TimeUnit.NANOSECONDS));
        }
    }

    /** What this client knows of one of its keys: a queue entry or a grant. */
    static final class Entry {
        final long revision;
        final LeaseRef lease;
        final boolean shared;
        final boolean granted;
        volatile long checkedAt; // ticker reading before the last round trip that saw this key in etcd

        Entry(long revision, LeaseRef lease, boolean granted, long checkedAt) {
            this.revision = revision;
            this.lease = lease;
            this.shared = lease.shared;
            this.granted = granted;
            this.checkedAt = checkedAt;
        }

        /** The same key, granted. */
        Entry grant(long checkedAt) {
            return new Entry(revision, lease, true, checkedAt);
        }
    }
}
