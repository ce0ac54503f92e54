package io.distlock.etcd;

import static io.distlock.etcd.EtcdRequests.bytes;

import io.distlock.etcd.EtcdLeases.LeaseRef;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
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
 *   A granted entry on a lease of its own gets a timer at the hold's lease end that forgets it and revokes its lease:
 *   the engine marks the hold lost at that moment, and revoking frees the lock without waiting for etcd's whole-second
 *   TTL. The engine dated the lease from before the call that granted it, so the timer runs later than the engine's.
 */
/** What this client knows of its own keys in etcd: queue entries and grants, by key path. */
final class EtcdEntries {
    private final EtcdRequests requests;
    private final EtcdLeases leases;
    private final ScheduledExecutorService scheduler;
    private final ConcurrentHashMap<String, Entry> map = new ConcurrentHashMap<>();

    EtcdEntries(EtcdRequests requests, EtcdLeases leases, ScheduledExecutorService scheduler) {
        this.requests = requests;
        this.leases = leases;
        this.scheduler = scheduler;
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

    /** Records a grant; a grant on a lease of its own ends in etcd at the hold's lease end. */
    void granted(String path, Entry e, Duration lease) {
        map.put(path, e);
        if (!e.shared) {
            scheduleExpiry(path, e, lease);
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

    /** Forgets a key that has ended: its entry, its expiry, its own lease. */
    void forget(String path, @Nullable Entry e) {
        if (e != null && map.remove(path, e)) {
            ended(e);
        }
    }

    /** The key of an entry no longer in the map has ended: cancels its expiry, revokes its own lease. */
    void ended(Entry e) {
        e.cancelExpiry();
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

    private void scheduleExpiry(String path, Entry e, Duration lease) {
        // the engine marks the hold lost at its lease end; ending it in etcd at the same time frees the lock without
        // waiting for etcd's whole-second TTL. The engine dated the lease from before this call, so this is later.
        try {
            e.expiry = scheduler.schedule(
                    () -> {
                        if (map.remove(path, e)) {
                            leases.revokeQuietly(e.lease);
                        }
                    },
                    lease.toNanos(),
                    TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException ex) {
            // closing: close() revokes every per-hold lease
        }
    }

    /** What this client knows of one of its keys: a queue entry or a grant. */
    static final class Entry {
        final long revision;
        final LeaseRef lease;
        final boolean shared;
        final boolean granted;
        volatile long checkedAt; // ticker reading before the last round trip that saw this key in etcd
        volatile @Nullable ScheduledFuture<?> expiry;

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

        void cancelExpiry() {
            ScheduledFuture<?> f = expiry;
            if (f != null) {
                f.cancel(false);
            }
        }
    }
}
