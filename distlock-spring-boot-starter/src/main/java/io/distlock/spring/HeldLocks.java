package io.distlock.spring;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * The holds this application instance took through {@link LockTemplate} and {@link DistributedLock}, for the actuator
 * endpoint. An entry is added on a fresh acquisition and removed when the hold is released; re-entries are not
 * listed.
 */
public final class HeldLocks {
    private final ConcurrentHashMap<Long, Entry> entries = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();

    /**
     * One hold as the endpoint shows it.
     *
     * @param name the lock name
     * @param kind which lock of the name
     * @param fencingToken the hold's token
     * @param thread the thread that holds it
     * @param acquiredAt when it was acquired, by this machine's clock
     * @param heldFor how long it has been held
     * @param leaseLeft the fixed lease left, or null when the watchdog renews it
     * @param lost whether the client found the hold lost (expired, taken, removed)
     */
    public record Hold(
            String name,
            String kind,
            long fencingToken,
            String thread,
            Instant acquiredAt,
            Duration heldFor,
            @Nullable Duration leaseLeft,
            boolean lost) {}

    static final class Entry {
        final long id;
        final String name;
        final DistributedLock.Kind kind;
        final long token;
        final String thread;
        final Instant acquiredAt;
        final long startNanos;
        final @Nullable Duration lease;
        volatile boolean lost;

        Entry(long id, String name, DistributedLock.Kind kind, long token, @Nullable Duration lease) {
            this.id = id;
            this.name = name;
            this.kind = kind;
            this.token = token;
            this.thread = Thread.currentThread().getName();
            this.acquiredAt = Instant.now();
            this.startNanos = System.nanoTime();
            this.lease = lease;
        }
    }

    Entry add(String name, DistributedLock.Kind kind, long token, @Nullable Duration lease) {
        Entry e = new Entry(ids.incrementAndGet(), name, kind, token, lease);
        entries.put(e.id, e);
        return e;
    }

    void remove(Entry entry) {
        entries.remove(entry.id);
    }

    /** The holds now, oldest first. */
    public List<Hold> holds() {
        long now = System.nanoTime();
        List<Hold> out = new ArrayList<>();
        for (Entry e : entries.values()) {
            Duration heldFor = Duration.ofNanos(now - e.startNanos);
            Duration lease = e.lease;
            Duration left = null;
            if (lease != null) {
                left = lease.minus(heldFor);
                if (left.isNegative()) {
                    left = Duration.ZERO;
                }
            }
            out.add(new Hold(
                    e.name,
                    e.kind.name().toLowerCase(java.util.Locale.ROOT),
                    e.token,
                    e.thread,
                    e.acquiredAt,
                    heldFor,
                    left,
                    e.lost));
        }
        out.sort(Comparator.comparing(Hold::acquiredAt));
        return out;
    }
}
