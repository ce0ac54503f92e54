package io.distlock.internal;

import io.distlock.spi.OwnerId;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Lock-view holds of threads that have ended without unlocking (an uncaught exception, a pool that retired its
 * thread): nobody can unlock them, and the watchdog would renew them until the client closes. The engine registers
 * every thread that gets an owner id (weakly; an entry goes once its thread has ended), and each watchdog tick
 * releases what such threads still hold.
 */
final class EndedThreadHolds {
    private static final Logger log = LoggerFactory.getLogger(EndedThreadHolds.class);
    private final Map<OwnerId, WeakReference<Thread>> ownerThreads = new ConcurrentHashMap<>();
    private final NameStates<HoldImpl, LockState> states;
    private final LockReleaser releaser;

    EndedThreadHolds(NameStates<HoldImpl, LockState> states, LockReleaser releaser) {
        this.states = states;
        this.releaser = releaser;
    }

    /** {@code thread} owns the holds of {@code owner}. */
    void register(OwnerId owner, Thread thread) {
        ownerThreads.put(owner, new WeakReference<>(thread));
    }

    /** Releases the Lock-view holds of the registered threads that have ended, and forgets those threads. */
    void release() {
        Set<OwnerId> ended = new HashSet<>();
        ownerThreads.forEach((owner, ref) -> {
            Thread t = ref.get();
            if (t == null || !t.isAlive()) {
                ended.add(owner);
            }
        });
        if (ended.isEmpty()) {
            return;
        }
        List<HoldImpl> orphans = new ArrayList<>();
        for (LockState s : states.all()) {
            s.mutex.lock();
            try {
                HoldImpl h = s.holder;
                if (h != null && h.threadView && h.isActive() && ended.contains(h.owner)) {
                    orphans.add(h);
                }
            } finally {
                s.mutex.unlock();
            }
        }
        for (HoldImpl h : orphans) {
            log.warn(
                    "distlock: a thread ended holding lock '{}' (token {}) without unlocking it; releasing it",
                    h.name(),
                    h.fencingToken);
            try {
                releaser.release(h);
            } catch (RuntimeException e) {
                log.warn("distlock: releasing '{}' of an ended thread failed; it expires with its lease", h.name(), e);
            }
        }
        ended.forEach(ownerThreads::remove);
    }
}
