package io.distlock.internal;

import io.distlock.LockListener;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The listeners of one lock view, semaphore or read-write view. Made empty; the list itself is made by the first
 * {@link #add}, since most views never have a listener and the per-operation calls stay cheap. A listener that throws
 * is logged and does not keep the others from being told.
 */
final class Listeners {
    private static final Logger log = LoggerFactory.getLogger(Listeners.class);

    private final String name;
    private volatile @Nullable CopyOnWriteArrayList<LockListener> list;

    Listeners(String name) {
        this.name = name;
    }

    void add(LockListener listener) {
        Objects.requireNonNull(listener, "listener");
        CopyOnWriteArrayList<LockListener> ls = list;
        if (ls == null) {
            synchronized (this) {
                ls = list;
                if (ls == null) {
                    ls = new CopyOnWriteArrayList<>();
                    list = ls;
                }
            }
        }
        ls.add(listener);
    }

    void remove(LockListener listener) {
        CopyOnWriteArrayList<LockListener> ls = list;
        if (ls != null) {
            ls.remove(listener);
        }
    }

    void acquired(long token) {
        CopyOnWriteArrayList<LockListener> ls = list;
        if (ls == null) {
            return;
        }
        for (LockListener l : ls) {
            try {
                l.acquired(name, token);
            } catch (RuntimeException e) {
                log.warn("distlock: listener {} failed on acquired({})", l, name, e);
            }
        }
    }

    void released(long token) {
        CopyOnWriteArrayList<LockListener> ls = list;
        if (ls == null) {
            return;
        }
        for (LockListener l : ls) {
            try {
                l.released(name, token);
            } catch (RuntimeException e) {
                log.warn("distlock: listener {} failed on released({})", l, name, e);
            }
        }
    }

    void lost(long token, @Nullable Throwable cause) {
        CopyOnWriteArrayList<LockListener> ls = list;
        if (ls == null) {
            return;
        }
        for (LockListener l : ls) {
            try {
                l.lost(name, token, cause);
            } catch (RuntimeException e) {
                log.warn("distlock: listener {} failed on lost({})", l, name, e);
            }
        }
    }
}
