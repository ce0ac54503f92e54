package io.distlock.internal;

import io.distlock.spi.LockKey;
import io.distlock.spi.Mode;
import io.distlock.spi.OwnerId;
import io.distlock.spi.Subscription;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The per-name states of one engine part, made on first use and dropped when idle. A thread that works on a name
 * enters its state (counting in {@link NameState#users}) and exits it; a state that nobody uses and that has no hold,
 * waiter or unreported loss is removed, and its subscription closed. A removed state is never used again: entering
 * finds or makes a fresh one.
 */
final class NameStates<H extends EngineHold, S extends NameState<H>> {
    private final ConcurrentHashMap<String, S> states = new ConcurrentHashMap<>();
    private final Function<LockKey, S> make;

    NameStates(Function<LockKey, S> make) {
        this.make = make;
    }

    /** The state of {@code name} if one exists; not entered. */
    @Nullable
    S get(String name) {
        return states.get(name);
    }

    int size() {
        return states.size();
    }

    /** The states of the names in use now (a live view; not entered). */
    java.util.Collection<S> all() {
        return states.values();
    }

    /** The live Lock-view holds of {@code owners}, each found under its name's mutex. */
    List<H> threadHoldsOf(java.util.Set<OwnerId> owners) {
        List<H> found = new ArrayList<>();
        List<H> held = new ArrayList<>(2);
        for (S s : states.values()) {
            s.mutex.lock();
            try {
                held.clear();
                s.holds(held);
                for (H h : held) {
                    if (h.threadView && h.isActive() && owners.contains(h.owner())) {
                        found.add(h);
                    }
                }
            } finally {
                s.mutex.unlock();
            }
        }
        return found;
    }

    S enter(String name) {
        for (; ; ) {
            S s = states.computeIfAbsent(name, n -> make.apply(new LockKey(n)));
            s.mutex.lock();
            try {
                if (!s.removed) {
                    s.users++;
                    return s;
                }
            } finally {
                s.mutex.unlock();
            }
        }
    }

    /** Enters the state of a live hold, which keeps it from being dropped; the caller exits it. */
    void enterHeld(S s) {
        s.mutex.lock();
        try {
            s.users++;
        } finally {
            s.mutex.unlock();
        }
    }

    void exit(S s) {
        Subscription dropped;
        s.mutex.lock();
        try {
            s.users--;
            dropped = dropIfIdle(s);
        } finally {
            s.mutex.unlock();
        }
        if (dropped != null) {
            StoreCalls.closeQuietly(dropped);
        }
    }

    /** Forgets a name nobody uses any more, after a hold ended outside any acquire or release (found lost). */
    void settle(S s) {
        Subscription dropped;
        s.mutex.lock();
        try {
            dropped = dropIfIdle(s);
        } finally {
            s.mutex.unlock();
        }
        if (dropped != null) {
            StoreCalls.closeQuietly(dropped);
        }
    }

    /** Caller holds the mutex; returns the subscription to close outside it. */
    private @Nullable Subscription dropIfIdle(S s) {
        if (s.removed || !s.idle()) {
            return null;
        }
        s.removed = true;
        states.remove(s.key.name(), s);
        Subscription dropped = s.subscription;
        s.subscription = null;
        return dropped;
    }

    /**
     * The calling thread's unlock of its hold of {@code name} in {@code mode}: counts down a re-entry, or ends the
     * hold with {@code release}. See {@link NameState#unlockThread} for what it throws.
     */
    void unlockThread(String name, OwnerId owner, Mode mode, Supplier<String> what, Consumer<H> release) {
        S s = enter(name);
        try {
            H h;
            s.mutex.lock();
            try {
                h = s.unlockThread(owner, mode, what);
            } finally {
                s.mutex.unlock();
            }
            if (h != null) {
                release.accept(h);
            }
        } finally {
            exit(s);
        }
    }

    /**
     * The client closes: every state wakes its waiters and gives up its live holds, which {@code end} ends, and its
     * subscription, which is closed after them.
     */
    void close(Consumer<H> end) {
        List<H> held = new ArrayList<>();
        List<Subscription> subscriptions = new ArrayList<>();
        for (S s : states.values()) {
            s.mutex.lock();
            try {
                s.closing(held);
            } finally {
                s.mutex.unlock();
            }
            Subscription sub = s.takeSubscription();
            if (sub != null) {
                subscriptions.add(sub);
            }
        }
        for (H h : held) {
            end.accept(h);
        }
        for (Subscription sub : subscriptions) {
            StoreCalls.closeQuietly(sub);
        }
    }
}
