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
 * releases what such threads still hold in every part of the engine: locks, and the read and write views of
 * read-write locks.
 */
final class EndedThreadHolds {
    private static final Logger log = LoggerFactory.getLogger(EndedThreadHolds.class);
    private final Map<OwnerId, WeakReference<Thread>> ownerThreads = new ConcurrentHashMap<>();
    private final List<NameStates<?, ?>> parts;

    /** Watches the thread holds of {@code parts}, each an engine part's per-name states. */
    EndedThreadHolds(List<NameStates<?, ?>> parts) {
        this.parts = List.copyOf(parts);
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
        List<EngineHold> orphans = new ArrayList<>();
        for (NameStates<?, ?> part : parts) {
            orphans.addAll(part.threadHoldsOf(ended));
        }
        for (EngineHold h : orphans) {
            log.warn(
                    "distlock: a thread ended holding {} (token {}) without unlocking it; releasing it",
                    h.describe(),
                    h.fencingToken());
            try {
                h.releaseHold();
            } catch (RuntimeException e) {
                log.warn(
                        "distlock: releasing {} of an ended thread failed; it expires with its lease", h.describe(), e);
            }
        }
        ended.forEach(ownerThreads::remove);
    }
}
