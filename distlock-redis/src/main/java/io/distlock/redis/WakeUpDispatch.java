package io.distlock.redis;

import io.distlock.spi.OwnerId;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiPredicate;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Messages
 *   A wake-up message is the lock name's tag '<prefix>{...}' (its first '}' ends it: the prefix and the encoded name
 *   contain none), followed by the grant a release made to this client, if it made one. Messages arrive on Lettuce's
 *   I/O thread, whatever channel carried them, so nothing here blocks.
 *
 * Routing
 *   A message with a grant is offered to the grant handler first (the store's wait registry), which takes the grant or
 *   declines it. Otherwise the message runs every wake-up registered for its tag. A message that no registration
 *   claims (the client stopped waiting for the name) goes to the unclaimed handler, which passes the wake-up on to
 *   another waiting client, so a wake-up is never swallowed. wakeAll runs every registered wake-up: after a
 *   re-subscription or a channel move, when releases may have been missed.
 *
 * Name channels
 *   A message whose tag is followed by ':' came on a name's own channel (read-write locks and semaphores:
 *   '<tag>:cw', latches: '<tag>:zero'), which every waiting client subscribes: it runs the wake-ups registered for that
 *   channel name and is never a grant nor passed on. '<tag>:cw:<owner>:<owner>...' names the owners whose waiters can
 *   pass now, each '<client id>:<suffix>' (neither part contains ':'): a client whose id is not among them ignores it,
 *   and an owner-aware wake-up (read-write locks, semaphores) hears which of its owners are named.
 *
 * Registrations
 *   name (tag) -> the Targets registered for it, added and removed by RedisSubscriptions under its lock; read here
 *   without one.
 */
/** Routes wake-up messages to the wake-ups registered for a lock name, the grant handler and the unclaimed handler. */
final class WakeUpDispatch {
    private static final Logger log = LoggerFactory.getLogger(WakeUpDispatch.class);

    /** Lock name (its tag) -> the wake-ups registered for it, whatever channel their messages come on. */
    private final Map<String, Set<Target>> names = new ConcurrentHashMap<>();

    private final AtomicLong wakeUpsReceived = new AtomicLong();
    private final AtomicLong wakeUpsUnclaimed = new AtomicLong();
    private volatile Consumer<String> unclaimed = name -> {};
    private volatile BiPredicate<String, String> grants = (name, grant) -> false;
    private volatile boolean closed;
    /** This client's id, as name-channel messages list the clients they are for. */
    private volatile String clientId = "";

    /**
     * One registered wake-up: the name (tag) whose messages run it, either as a plain wake-up or, for a name channel
     * whose messages name owners, told which owners a message names.
     */
    static final class Target {
        final String name;
        final Runnable wakeUp;
        final @Nullable Consumer<Predicate<OwnerId>> owners;

        Target(String name, Runnable wakeUp) {
            this.name = name;
            this.wakeUp = wakeUp;
            this.owners = null;
        }

        Target(String name, Consumer<Predicate<OwnerId>> owners) {
            this.name = name;
            this.wakeUp = () -> owners.accept(ANY_OWNER);
            this.owners = owners;
        }
    }

    private static final Predicate<OwnerId> ANY_OWNER = owner -> true;

    void add(Target target) {
        names.computeIfAbsent(target.name, n -> ConcurrentHashMap.newKeySet()).add(target);
    }

    /** Removes a registered target; false when it was not registered. */
    boolean remove(Target target) {
        Set<Target> of = names.get(target.name);
        if (of == null || !of.remove(target)) {
            return false;
        }
        if (of.isEmpty()) {
            names.remove(target.name, of);
        }
        return true;
    }

    /**
     * Called (on the I/O thread) with the message of a wake-up that no registration here claims: the client no longer
     * waits for that name, so it must pass the wake-up on. Must not block.
     */
    void onUnclaimed(Consumer<String> handler) {
        this.unclaimed = Objects.requireNonNull(handler, "handler");
    }

    /**
     * Called (on the I/O thread) with a wake-up that carries a grant (the message is the name's tag followed by the
     * grant): answers true when the grant was taken, and the message is done with; false makes it a plain wake-up for
     * the tag. Must not block.
     */
    void onGrant(BiPredicate<String, String> handler) {
        this.grants = Objects.requireNonNull(handler, "handler");
    }

    /** Sets the client id that name-channel messages list (see the overview). */
    void clientId(String id) {
        this.clientId = Objects.requireNonNull(id, "id");
    }

    /** A wake-up message (see the overview): a grant is offered first, then the tag's registrations run. */
    void dispatch(String message) {
        wakeUpsReceived.incrementAndGet();
        String name = message;
        int end = message.indexOf('}');
        if (end >= 0 && end + 1 < message.length() && message.charAt(end + 1) == ':') {
            broadcast(message, end + 2);
            return;
        }
        if (end >= 0 && end + 1 < message.length()) {
            name = message.substring(0, end + 1);
            try {
                if (grants.test(name, message.substring(end + 1))) {
                    return;
                }
            } catch (RuntimeException e) {
                log.warn("distlock: taking a grant for {} failed; waking its waiters instead", name, e);
            }
        }
        Set<Target> of = names.get(name);
        boolean claimed = false;
        if (of != null) {
            for (Target t : of) {
                claimed = true;
                run(t);
            }
        }
        if (!claimed && !closed) {
            wakeUpsUnclaimed.incrementAndGet();
            try {
                unclaimed.accept(name);
            } catch (RuntimeException e) {
                log.warn("distlock: passing on a wake-up for {} failed", name, e);
            }
        }
    }

    /** A message on a name's channel; {@code from} is where the channel kind starts, after '}:'. */
    private void broadcast(String message, int from) {
        int cut = message.indexOf(':', from);
        String name = cut < 0 ? message : message.substring(0, cut);
        Set<Target> of = names.get(name);
        if (of == null) {
            return;
        }
        if (cut < 0) {
            for (Target t : of) {
                run(t);
            }
            return;
        }
        String id = clientId;
        Set<String> suffixes = suffixesOf(message, cut, id);
        if (suffixes.isEmpty()) {
            return;
        }
        Predicate<OwnerId> named = owner -> {
            String v = owner.value();
            return v.length() > id.length()
                    && v.charAt(id.length()) == ':'
                    && v.startsWith(id)
                    && suffixes.contains(v.substring(id.length() + 1));
        };
        for (Target t : of) {
            Consumer<Predicate<OwnerId>> owners = t.owners;
            if (owners == null) {
                run(t);
                continue;
            }
            try {
                owners.accept(named);
            } catch (RuntimeException e) {
                log.warn("distlock: a wake-up for {} failed", t.name, e);
            }
        }
    }

    /**
     * The suffixes of the owners of client {@code id} that ':<client id>:<suffix>:<client id>:<suffix>...' at {@code
     * from} of the message names; empty when it names none of them.
     */
    static Set<String> suffixesOf(String message, int from, String id) {
        Set<String> suffixes = new HashSet<>(4);
        int i = from;
        while (i >= 0 && i < message.length()) {
            int idEnd = message.indexOf(':', i + 1);
            if (idEnd < 0) {
                break;
            }
            int next = message.indexOf(':', idEnd + 1);
            int end = next < 0 ? message.length() : next;
            if (idEnd - i - 1 == id.length() && message.startsWith(id, i + 1)) {
                suffixes.add(message.substring(idEnd + 1, end));
            }
            i = next;
        }
        return suffixes;
    }

    /** Runs every registered wake-up: releases may have been missed. */
    void wakeAll() {
        for (Set<Target> of : names.values()) {
            for (Target t : of) {
                run(t);
            }
        }
    }

    private static void run(Target t) {
        try {
            t.wakeUp.run();
        } catch (RuntimeException e) {
            log.warn("distlock: a wake-up for {} failed", t.name, e);
        }
    }

    /** Whether a wake-up for {@code name} would be claimed: somebody of this client waits for it. */
    boolean listening(String name) {
        Set<Target> of = names.get(name);
        return of != null && !of.isEmpty();
    }

    /** Wake-up messages received, and of those the ones nobody claimed (passed on); for tests. */
    long[] wakeUpCounts() {
        return new long[] {wakeUpsReceived.get(), wakeUpsUnclaimed.get()};
    }

    /** Drops every registration; unclaimed messages are no longer passed on. */
    void close() {
        closed = true;
        names.clear();
    }
}
