package io.distlock.redis;

import io.distlock.spi.Grant;
import io.distlock.spi.OwnerId;
import io.distlock.spi.Subscription;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Waits
 *   A client's wait for a name is an open subscription (subscribe): it registers the name with RedisSubscriptions (on
 *   the client's kept channel, so no SUBSCRIBE) and gets an entry '<clientId>:w<n>s<spare>', n numbering the client's
 *   waits and <spare> the spare tokens its first attempt's claim asked for (a grant to the wait reserves that many).
 *   While the wait lasts, the store's attempts for the name carry the entry: a busy attempt registers it among the
 *   name's waiting clients in Redis (the order and deadline zsets, see wake-one.lua), a granted one removes it. The
 *   registered set mirrors which entries are in Redis, so a wait that ends while registered leaves them (with
 *   lock-pass-on.lua, when the subscription closes) and nothing of it is left behind.
 *
 * Grants
 *   A release gives the lock to the oldest live entry: the hold becomes '<entry>#<token>' for CLAIM, and one message
 *   tells that client. onGrant offers such a grant to the engine as a Grant, which it takes with no round trip, only
 *   when the grant is provably current: its token is greater than every fence value the wait's attempts saw (so each
 *   of their scripts ran before the grant, and none took the hold over), which also makes the send time of the latest
 *   of them a lower bound of the grant's time, so the claim lasts at least until that time plus CLAIM, less CLAIM_MARGIN
 *   for clock rates. A grant valid for less than MIN_GRANT_VALIDITY, one that is not the current wait's, or any grant
 *   while replica acknowledgements are required (a grant needs its WAIT) is declined: the message is then a plain
 *   wake-up, and a waiting attempt takes the hold over with its own id, lease and token.
 *
 * Passing on
 *   A wake-up for a name the client no longer waits for (passOn, from WakeUpDispatch's unclaimed handler) is passed to
 *   the next waiting client with lock-pass-on.lua: a lock given to one of the client's ended waits goes to the next
 *   entry, and a free lock wakes another client. So no wake-up is swallowed by a client that stopped waiting.
 *
 * Concurrency
 *   entries and registered are concurrent sets read without locks. A Wait's record of what its attempts saw is guarded
 *   by the Wait's monitor; onGrant holds it while the engine decides on the grant, so an attempt's answer is recorded
 *   either before the decision or after it, never during. onGrant and passOn run on Lettuce's I/O thread and never
 *   wait for a round trip.
 */
/** This client's waits for Redis locks: their entries among the waiting clients, and the grants sent to them. */
final class WaitRegistry {
    private static final Logger log = LoggerFactory.getLogger(WaitRegistry.class);

    /** How long a waiting client has to take a lock that a release gave it (see wake-one.lua). */
    static final Duration CLAIM = Duration.ofSeconds(1);
    /** CLAIM in milliseconds, as the scripts take it. */
    static final String CLAIM_MILLIS = Long.toString(CLAIM.toMillis());
    /** Taken off a grant's claim time for what a lower bound of its time cannot see (clock rates). */
    private static final Duration CLAIM_MARGIN = Duration.ofMillis(50);
    /** A grant that would be valid for less is not taken as it is (a waiting attempt takes it over instead). */
    private static final Duration MIN_GRANT_VALIDITY = Duration.ofMillis(100);

    private final CommandRunner commands;
    private final RedisSubscriptions subscriptions;
    private final KeyLayout layout;
    private final WakeChannels channels;
    private final String clientId;
    private final boolean takesGrants;
    /** Tag -> this client's current wait (open subscription) for that name. */
    private final Map<String, Wait> entries = new ConcurrentHashMap<>();
    /** Entries this client has among the waiting clients in Redis (their last attempt was busy). */
    private final Set<String> registered = ConcurrentHashMap.newKeySet();

    private final AtomicLong waits = new AtomicLong();
    private final AtomicLong grantsTaken = new AtomicLong();
    private final AtomicLong passedOn = new AtomicLong();

    /** @param takesGrants whether a grant may be taken from its message (false: every grant needs its WAIT) */
    WaitRegistry(
            CommandRunner commands,
            RedisSubscriptions subscriptions,
            KeyLayout layout,
            WakeChannels channels,
            String clientId,
            boolean takesGrants) {
        this.commands = commands;
        this.subscriptions = subscriptions;
        this.layout = layout;
        this.channels = channels;
        this.clientId = clientId;
        this.takesGrants = takesGrants;
    }

    /** Starts taking wake-up messages: grants, and wake-ups nobody waits for any more. */
    void listen() {
        WakeUpDispatch dispatch = subscriptions.dispatch();
        dispatch.onUnclaimed(this::passOn);
        dispatch.onGrant(this::onGrant);
    }

    /** This client's current wait for a name's tag, or null when it has none. */
    @Nullable
    Wait current(String tag) {
        return entries.get(tag);
    }

    /** An attempt that carried a wait's {@code entry} came back: granted (the script removed the entry), or busy. */
    void answered(String entry, boolean granted, boolean queue) {
        if (granted) {
            registered.remove(entry);
        } else if (!queue) {
            registered.add(entry);
        }
    }

    /** Opens a wait for a name's tag; closing the subscription ends it (and leaves the waiting clients). */
    Subscription subscribe(String tag, Runnable wakeUp, Predicate<Grant> takeGrant) {
        // one channel per client, subscribed once and kept; sharded: one per slot and client, kept
        Subscription inner = subscriptions.subscribe(channels.channel(tag), true, channels.sharded(), tag, wakeUp);
        Wait wait = new Wait(clientId + ":w" + waits.incrementAndGet(), takeGrant);
        entries.put(tag, wait);
        return () -> {
            inner.close();
            entries.remove(tag, wait);
            String entry = wait.entry;
            if (entry != null && registered.remove(entry)) {
                leave(tag, entry);
            }
        };
    }

    /**
     * A release gave the lock to this client: {@code grant} is '<entry>#<token>', the hold's value (wake-one.lua).
     * Offered to the engine only when it is the current wait's and provably current (see the overview). The engine
     * refuses it while an attempt of the client is on its way; an attempt records its answer under this wait's monitor,
     * held here while the engine decides, before the engine counts the attempt done. Otherwise (or when no waiter can
     * take it) the message is a plain wake-up: a waiting attempt takes the hold over, or, with nobody waiting, it is
     * passed on.
     */
    boolean onGrant(String tag, String grant) {
        int hash = grant.lastIndexOf('#');
        Wait wait = entries.get(tag);
        String entry = wait == null ? null : wait.entry;
        if (wait == null || entry == null || !takesGrants || hash != entry.length() || !grant.startsWith(entry)) {
            return false;
        }
        long token;
        try {
            token = Long.parseLong(grant.substring(hash + 1));
        } catch (NumberFormatException e) {
            return false;
        }
        synchronized (wait) {
            if (!wait.seen || token <= wait.maxFence) {
                return false;
            }
            long validUntil = wait.lastSent + CLAIM.toNanos() - CLAIM_MARGIN.toNanos();
            if (validUntil - System.nanoTime() < MIN_GRANT_VALIDITY.toNanos()) {
                return false;
            }
            if (!wait.takeGrant.test(new Grant(new OwnerId(grant), token, wait.spare, validUntil))) {
                return false;
            }
            wait.maxFence = token + wait.spare;
        }
        registered.remove(entry); // the granting script removed the entry
        grantsTaken.incrementAndGet();
        return true;
    }

    /** Grants this client took with a wake-up, without a round trip; for tests. */
    long grantsTaken() {
        return grantsTaken.get();
    }

    /**
     * The client stopped waiting while registered among the waiting clients (its waiter timed out or was
     * interrupted): leave them, so nothing of the wait is left behind, and pass on a wake-up it may have been sent.
     */
    private void leave(String tag, String entry) {
        try {
            Long unused = commands.call(
                    LuaScript.LOCK_PASS_ON,
                    ScriptOutputType.INTEGER,
                    KeyLayout.wakeKeys(tag),
                    entry,
                    clientId,
                    channels.prefix(tag),
                    channels.publish(),
                    tag,
                    CLAIM_MILLIS,
                    "0");
        } catch (RuntimeException e) {
            log.debug("distlock: leaving the waiting clients of {} failed; the entry expires by itself", tag, e);
        }
    }

    /**
     * A wake-up came for a name this client no longer waits for: leave the waiting clients and wake the next one if
     * the lock is free. Runs on the I/O thread, so it does not wait for the answer.
     */
    void passOn(String tag) {
        if (layout.nameOfTag(tag) == null) {
            return; // not one of ours
        }
        // entries are numbered after their registration is in place: with none in place now, every entry numbered
        // up to here belongs to a wait that ended
        long ended = waits.get();
        if (subscriptions.dispatch().listening(tag)) {
            return; // a new wait began meanwhile; it takes the wake-up
        }
        passedOn.incrementAndGet();
        commands.eval(
                        LuaScript.LOCK_PASS_ON,
                        ScriptOutputType.INTEGER,
                        KeyLayout.wakeKeys(tag),
                        "",
                        clientId,
                        channels.prefix(tag),
                        channels.publish(),
                        tag,
                        CLAIM_MILLIS,
                        Long.toString(ended))
                .exceptionally(e -> {
                    log.debug("distlock: passing on a wake-up for {} failed; waiters come back by themselves", tag, e);
                    return null;
                });
    }

    /** Wake-ups this client passed on because it no longer waited; for tests. */
    long passedOn() {
        return passedOn.get();
    }

    /**
     * One wait of this client for one name (an open subscription): its entry among the waiting clients, and what its
     * attempts saw of the name, which tells whether a grant heard of later is current (see {@link #onGrant}).
     */
    static final class Wait {
        /** '<clientId>:w<n>', the entry without its spare tokens. */
        private final String id;
        /** Set by the first attempt: '<id>s<spare>'; null before. */
        volatile @Nullable String entry;
        /** The spare tokens a grant to this wait reserves (wake-one.lua reads them from the entry). Guarded by this. */
        int spare;

        final Predicate<Grant> takeGrant;
        /** Whether an answer with a fence value came back. Guarded by this. */
        boolean seen;
        /** The greatest fence value or token the attempts saw. Guarded by this. */
        long maxFence;
        /** When the latest attempt that came back with a fence value was sent (System.nanoTime). Guarded by this. */
        long lastSent;

        Wait(String id, Predicate<Grant> takeGrant) {
            this.id = id;
            this.takeGrant = takeGrant;
        }

        /**
         * The wait's entry among the waiting clients: its id and the spare tokens that its first attempt's claim asked
         * for, which a release that gives the lock to this wait reserves after the grant's token.
         */
        synchronized String entry(int spareTokens) {
            String e = entry;
            if (e == null) {
                spare = spareTokens;
                e = id + "s" + spareTokens;
                entry = e;
            }
            return e;
        }

        /**
         * Records what an attempt sent at {@code sent} saw: {@code answer} is its script's answer in the table form
         * ({1, token, spare} or {0, retry[, fence]}), null when the attempt failed.
         */
        synchronized void attemptEnded(long sent, @Nullable List<Object> answer) {
            if (answer == null || answer.size() < 2) {
                return;
            }
            long fence;
            if (LuaScript.number(answer, 0) == 1) {
                fence = LuaScript.number(answer, 1) + (answer.size() > 2 ? LuaScript.number(answer, 2) : 0);
            } else if (answer.size() > 2) {
                fence = LuaScript.number(answer, 2);
            } else {
                return;
            }
            maxFence = Math.max(maxFence, fence);
            if (!seen || sent - lastSent > 0) {
                lastSent = sent;
            }
            seen = true;
        }
    }
}
