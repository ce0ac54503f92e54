package io.distlock.redis;

import io.distlock.DistributedLockException;
import io.distlock.LockInfo;
import io.distlock.spi.Attempt;
import io.distlock.spi.FreeSubscriptions;
import io.distlock.spi.Grant;
import io.distlock.spi.GrantsWithWakeUp;
import io.distlock.spi.HandOff;
import io.distlock.spi.HandsOff;
import io.distlock.spi.HeldLock;
import io.distlock.spi.Lease;
import io.distlock.spi.LockKey;
import io.distlock.spi.LockStore;
import io.distlock.spi.OwnerId;
import io.distlock.spi.Subscription;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Every SPI method is one Lua script (resources beside this class), so each step is atomic on the server and one
 * round trip: an uncontended acquire is one EVALSHA (SET NX PX + INCR; a fair-queue attempt has its own script), a
 * release one EVALSHA (owner-checked DEL, or a grant to the next waiting client + one PUBLISH), a hand-off one EVALSHA
 * (owner-checked SET + INCR). Keys are laid out by KeyLayout: one hash tag per lock
 * name, so the scripts are legal on a Cluster.
 *
 * States of one name: free (no hold key); held (hold key = owner id, PX = lease); queued waiters (fair locks only: a
 * list in arrival order plus a zset of deadlines by server time, refreshed by each attempt; an owner past its deadline
 * is evicted by the next attempt, and both keys expire by themselves when nobody refreshes them).
 *
 * Invariants: only the owner's script changes its hold (release, renew, hand-off and abandon compare the hold's value
 * with the owner id first; a mismatch changes nothing and writes nothing); the fence counter only grows (INCR inside
 * the granting script) and never gets a TTL, so a token is greater than every earlier token of the name as long as
 * the server keeps its data (see RedisLockClient for when Redis does not).
 *
 * Waiting (wake-one.lua has the details): a client's first waiter subscribes (one channel per client, kept; the
 * subscription only registers the name locally) and from then on its attempts carry an entry '<clientId>:w<n>' (n per
 * wait): busy, the entry joins the name's waiting clients (order zset + deadline zset); granted, it leaves them. A
 * release gives the lock to the oldest live entry (the hold becomes '<entry>#<token>' for CLAIM with a fresh token, and
 * one PUBLISH tells that client: it takes the hold as it is with no round trip when it can prove the grant current, see
 * onGrant, or else its next attempt takes the hold over with its own id, lease and token) or, with nobody waiting,
 * deletes it. So a hand-off between clients costs the release and the message, not a third request. Abandon, forced
 * release and fair-queue changes free the lock and tell one client. A client told of a name it no longer waits for
 * passes it on (lock-pass-on.lua); a wait that ends while registered leaves (the same script, run when the
 * subscription closes). A lost message costs at most Busy.retryWithin: the remaining lease of the hold or claim the
 * waiter saw, or a third of the waiter timeout for queued waiters, which must come back that often to keep their
 * place.
 *
 * Renewal: all holds of a client in one script per slot group (standalone: per 1,000 holds), all sent at once, so a
 * watchdog tick costs one round trip per node.
 *
 * References: the Redis distributed-lock pattern (redis.io, "Distributed Locks with Redis"), M. Kleppmann, "How to do
 * distributed locking" (2016) for fencing tokens.
 */
/** The {@link LockStore} over Redis; see the overview comment in the source. */
final class RedisLockStore implements LockStore, HandsOff, FreeSubscriptions, GrantsWithWakeUp {
    private static final Logger log = LoggerFactory.getLogger(RedisLockStore.class);
    private static final int RENEW_BATCH = 1000;
    /** Failures of further renewal batches kept on the first one. */
    private static final int MAX_SUPPRESSED = 3;

    /** How long a waiting client has to take a lock that a release gave it (see wake-one.lua). */
    static final Duration CLAIM = Duration.ofSeconds(1);
    /** Taken off a grant's claim time for what a lower bound of its time cannot see (clock rates). */
    private static final Duration CLAIM_MARGIN = Duration.ofMillis(50);
    /** A grant that would be valid for less is not taken as it is (a waiting attempt takes it over instead). */
    private static final Duration MIN_GRANT_VALIDITY = Duration.ofMillis(100);
    /** Tokens a grant to a waiting client reserves after its own (wake-one.lua's GRANT_SPARE). */
    static final int GRANT_SPARE = 16;
    /** Tokens a plain grant reserves after its own (lock-acquire.lua's SPARE). */
    static final int ACQUIRE_SPARE = 16;

    private final RedisConnections redis;
    private final KeyLayout layout;
    private final String waiterTimeoutMillis;
    private final boolean spin;
    private final boolean sharded;
    private final String clientId;
    private final String publish;
    private final String claimMillis = millisText(CLAIM);
    private final AtomicLong passedOn = new AtomicLong();
    private final AtomicLong waits = new AtomicLong();
    /** Tag -> this client's current wait (open subscription) for that name. */
    private final Map<String, Wait> entries = new ConcurrentHashMap<>();

    private final AtomicLong grantsTaken = new AtomicLong();
    /** Entries this client has among the waiting clients in Redis (their last attempt was busy). */
    private final Set<String> registered = ConcurrentHashMap.newKeySet();

    private final int minReplicas;
    private final Duration replicaTimeout;
    /** Names whose release goes straight to the full script (see {@link #release(KeyLayout.NameKeys, OwnerId)}). */
    private final ContendedTags contended = new ContendedTags();

    /**
     * @param clientId the client's id, the prefix of its owner ids: it names the client's wake-up channel
     * @param spin no pub/sub: nothing is published and {@link #subscribe} returns {@link Subscription#none()}
     * @param sharded wake-ups by SPUBLISH on a channel per slot and client (in the name's slot) instead of PUBLISH on
     *     one channel per client
     * @param minReplicas after each grant wait for this many replicas to acknowledge it; 0 for no waiting
     */
    RedisLockStore(
            RedisConnections redis,
            KeyLayout layout,
            String clientId,
            Duration waiterTimeout,
            boolean spin,
            boolean sharded,
            int minReplicas,
            Duration replicaTimeout) {
        this.redis = redis;
        this.layout = layout;
        this.waiterTimeoutMillis = Long.toString(Math.max(1, waiterTimeout.toMillis()));
        this.spin = spin;
        this.sharded = sharded;
        this.clientId = clientId;
        this.publish = spin ? "" : sharded ? "SPUBLISH" : "PUBLISH";
        if (!spin) {
            redis.onUnclaimed(this::passOn);
            redis.onGrant(this::onGrant);
        }
        this.minReplicas = minReplicas;
        this.replicaTimeout = replicaTimeout;
    }

    KeyLayout layout() {
        return layout;
    }

    RedisConnections connections() {
        return redis;
    }

    @Override
    public Attempt tryAcquire(LockKey key, OwnerId owner, Lease leaseSpec, boolean queue) {
        Duration lease = leaseSpec.length();
        KeyLayout.NameKeys keys = layout.keys(key.name());
        String tag = keys.tag;
        String holdKey = keys.hold;
        String fenceKey = keys.fence;
        // a client with a waiter for this name registers among its waiting clients (busy) or leaves them (granted)
        Wait wait = spin ? null : entries.get(tag);
        String entry = wait == null ? null : wait.entry;
        long sent = System.nanoTime();
        // with replicaAcks the grant and its WAIT share one connection (on a Cluster: to the slot's master)
        RedisClusterAsyncCommands<String, String> on = minReplicas > 0 ? redis.grantCommands(holdKey) : redis.async();
        List<Object> answer = null;
        try {
            answer = acquire(on, tag, holdKey, fenceKey, owner, lease, queue, entry);
        } finally {
            if (wait != null) {
                wait.attemptEnded(sent, answer);
            }
        }
        long status = number(answer, 0);
        long value = number(answer, 1);
        if (entry != null) {
            if (status == 1) {
                registered.remove(entry); // the granting script removed the entry
            } else if (!queue) {
                registered.add(entry);
            }
        }
        if (status != 1) {
            contended.add(tag);
            return Attempt.busy(Duration.ofMillis(value));
        }
        if (minReplicas > 0) {
            awaitReplicas(on, key, tag, owner);
        }
        // lock-acquire.lua reserves tokens for the client's local successions; the fair queue's script reserves none
        return Attempt.acquired(value, answer.size() > 2 ? Math.toIntExact(number(answer, 2)) : 0);
    }

    private List<Object> acquire(
            RedisClusterAsyncCommands<String, String> on,
            String tag,
            String holdKey,
            String fenceKey,
            OwnerId owner,
            Duration lease,
            boolean queue,
            @Nullable String entry) {
        List<Object> answer;
        if (queue) {
            String[] keys = {
                holdKey,
                fenceKey,
                KeyLayout.key(tag, KeyLayout.QUEUE),
                KeyLayout.key(tag, KeyLayout.WAITERS),
                KeyLayout.key(tag, KeyLayout.WAKE_ORDER),
                KeyLayout.key(tag, KeyLayout.WAKE_DEADLINES)
            };
            List<String> args = new ArrayList<>(
                    List.of(owner.value(), millis(lease), waiterTimeoutMillis, wakePrefix(tag), publish, tag));
            if (entry != null) {
                args.add(entry);
            }
            answer = redis.call(
                    on, LuaScript.LOCK_ACQUIRE_QUEUED, ScriptOutputType.MULTI, keys, args.toArray(String[]::new));
        } else if (entry != null) {
            answer = redis.call(
                    on,
                    LuaScript.LOCK_ACQUIRE,
                    ScriptOutputType.MULTI,
                    new String[] {
                        holdKey,
                        fenceKey,
                        KeyLayout.key(tag, KeyLayout.WAKE_ORDER),
                        KeyLayout.key(tag, KeyLayout.WAKE_DEADLINES)
                    },
                    owner.value(),
                    millis(lease),
                    entry);
        } else {
            answer = expandPlainAnswer(redis.call(
                    on,
                    LuaScript.LOCK_ACQUIRE,
                    ScriptOutputType.INTEGER,
                    new String[] {holdKey, fenceKey},
                    owner.value(),
                    millis(lease)));
        }
        return answer;
    }

    /**
     * lock-acquire.lua answers a plain attempt (no waiting-client entry) with one integer, which costs Redis less than
     * a table: the fencing token when acquired (with {@link #ACQUIRE_SPARE} spare tokens), minus the hold's remaining
     * lease in milliseconds when busy. Returns the table form the other answers have: {1, token, spare} or {0, ttl}.
     */
    static List<Object> expandPlainAnswer(@Nullable Long answer) {
        if (answer == null || answer == 0L) {
            throw new IllegalStateException("unexpected answer to a plain attempt: " + answer);
        }
        long v = answer;
        return v > 0 ? List.of(1L, v, (long) ACQUIRE_SPARE) : List.of(0L, -v);
    }

    @Override
    public void abandon(LockKey key, OwnerId owner) {
        String tag = layout.tag(key.name());
        Long unused = redis.call(
                LuaScript.LOCK_ABANDON,
                ScriptOutputType.INTEGER,
                wakeKeys(tag),
                owner.value(),
                wakePrefix(tag),
                publish,
                tag);
    }

    @Override
    public boolean release(LockKey key, OwnerId owner) {
        return release(layout.keys(key.name()), owner);
    }

    /**
     * Releases with lock-release-lean.lua (only the keys an uncontended release reads) unless the name was seen
     * contended lately; when the lean script finds a waiting client it changes nothing, and the full lock-release.lua,
     * which gives the lock on, runs instead.
     */
    private boolean release(KeyLayout.NameKeys keys, OwnerId owner) {
        String tag = keys.tag;
        if (!contended.contains(tag)) {
            Long lean = redis.call(
                    LuaScript.LOCK_RELEASE_LEAN,
                    ScriptOutputType.INTEGER,
                    new String[] {keys.hold, keys.queue(), keys.wakeOrder()},
                    owner.value());
            if (lean == null || lean != 2L) {
                return lean != null && lean == 1L;
            }
            contended.add(tag);
        }
        Long released = redis.call(
                LuaScript.LOCK_RELEASE,
                ScriptOutputType.INTEGER,
                wakeKeys(tag),
                owner.value(),
                wakePrefix(tag),
                publish,
                tag,
                claimMillis);
        return released != null && released == 1L;
    }

    /**
     * The keys of a script that may wake a waiting client: hold, queue, waiters, wait order, wait deadlines, fence
     * counter (a grant to a waiting client takes a token).
     */
    static String[] wakeKeys(String tag) {
        return new String[] {
            KeyLayout.key(tag, KeyLayout.HOLD),
            KeyLayout.key(tag, KeyLayout.QUEUE),
            KeyLayout.key(tag, KeyLayout.WAITERS),
            KeyLayout.key(tag, KeyLayout.WAKE_ORDER),
            KeyLayout.key(tag, KeyLayout.WAKE_DEADLINES),
            KeyLayout.key(tag, KeyLayout.FENCE)
        };
    }

    /**
     * A client is woken for {@code tag} on this prefix followed by its client id. Sharded: the prefix carries a hash
     * tag of the name's slot, so the channel is in the slot of the script that publishes on it (SPUBLISH in a script
     * must stay in its slot), and a client needs one channel per slot it waits in.
     */
    private String wakePrefix(String tag) {
        return sharded
                ? layout.prefix() + "wake:{" + SlotTags.of(SlotHash.getSlot(tag)) + "}:"
                : layout.prefix() + "wake:";
    }

    /** This client's wake channel for a name's tag; for tests too. */
    String wakeChannel(String tag) {
        return wakePrefix(tag) + clientId;
    }

    /** For each Cluster slot a short string that hashes to it, computed once on first use. */
    private static final class SlotTags {
        private static final String[] TAGS = compute();

        static String of(int slot) {
            return TAGS[slot];
        }

        private static String[] compute() {
            String[] tags = new String[SlotHash.SLOT_COUNT];
            int left = tags.length;
            for (int i = 0; left > 0; i++) {
                String candidate = Integer.toString(i, 36);
                int slot = SlotHash.getSlot(candidate);
                if (tags[slot] == null) {
                    tags[slot] = candidate;
                    left--;
                }
            }
            return tags;
        }
    }

    /**
     * A wake-up came for a name this client no longer waits for: leave the waiting clients and wake the next one if
     * the lock is free. Runs on the I/O thread, so it does not wait for the answer.
     */
    private void passOn(String tag) {
        if (layout.nameOfTag(tag) == null) {
            return; // not one of ours
        }
        // entries are numbered after their registration is in place: with none in place now, every entry numbered
        // up to here belongs to a wait that ended
        long ended = waits.get();
        if (redis.listening(tag)) {
            return; // a new wait began meanwhile; it takes the wake-up
        }
        passedOn.incrementAndGet();
        redis.eval(
                        LuaScript.LOCK_PASS_ON,
                        ScriptOutputType.INTEGER,
                        wakeKeys(tag),
                        "",
                        clientId,
                        wakePrefix(tag),
                        publish,
                        tag,
                        claimMillis,
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

    @Override
    public Set<HeldLock> renew(Collection<HeldLock> holds, Duration lease) {
        if (holds.isEmpty()) {
            return Set.of();
        }
        String leaseMillis = millis(lease);
        // group by slot on a Cluster (a script's keys must share one); chunk so no script runs for long
        Map<Integer, List<Map.Entry<String, HeldLock>>> groups = new LinkedHashMap<>();
        int i = 0;
        for (HeldLock h : holds) {
            String tag = layout.tag(h.key().name());
            int group = redis.isCluster() ? SlotHash.getSlot(tag) : i++ / RENEW_BATCH;
            groups.computeIfAbsent(group, g -> new ArrayList<>()).add(Map.entry(KeyLayout.key(tag, KeyLayout.HOLD), h));
        }
        List<List<Map.Entry<String, HeldLock>>> batches = new ArrayList<>();
        List<CompletableFuture<List<Object>>> answers = new ArrayList<>();
        for (List<Map.Entry<String, HeldLock>> group : groups.values()) {
            for (int from = 0; from < group.size(); from += RENEW_BATCH) {
                List<Map.Entry<String, HeldLock>> batch =
                        group.subList(from, Math.min(group.size(), from + RENEW_BATCH));
                String[] batchKeys = new String[batch.size()];
                String[] args = new String[batch.size() + 1];
                args[0] = leaseMillis;
                for (int j = 0; j < batch.size(); j++) {
                    batchKeys[j] = batch.get(j).getKey();
                    args[j + 1] = batch.get(j).getValue().owner().value();
                }
                batches.add(batch);
                answers.add(redis.eval(LuaScript.LOCK_RENEW, ScriptOutputType.MULTI, batchKeys, args));
            }
        }
        Set<HeldLock> gone = new HashSet<>();
        RuntimeException failure = null;
        for (int b = 0; b < batches.size(); b++) {
            List<Map.Entry<String, HeldLock>> batch = batches.get(b);
            try {
                List<Object> positions = redis.await(answers.get(b));
                for (Object p : positions) {
                    gone.add(batch.get((int) ((Long) p - 1)).getValue());
                }
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else if (failure.getSuppressed().length < MAX_SUPPRESSED) {
                    failure.addSuppressed(e); // a Cluster renewal can have thousands of batches: keep a few
                }
            }
        }
        if (failure != null) {
            // no hold counts as renewed unless every batch answered; the watchdog retries on its next tick
            throw failure;
        }
        return gone;
    }

    @Override
    public HandOff handOff(LockKey key, OwnerId from, OwnerId to, Lease leaseSpec) {
        Duration lease = leaseSpec.length();
        String tag = layout.tag(key.name());
        String holdKey = KeyLayout.key(tag, KeyLayout.HOLD);
        RedisClusterAsyncCommands<String, String> on = minReplicas > 0 ? redis.grantCommands(holdKey) : redis.async();
        Long token = redis.call(
                on,
                LuaScript.LOCK_HANDOFF,
                ScriptOutputType.INTEGER,
                new String[] {holdKey, KeyLayout.key(tag, KeyLayout.FENCE)},
                from.value(),
                to.value(),
                millis(lease));
        if (token == null || token == 0L) {
            return HandOff.notHeld();
        }
        if (minReplicas > 0) {
            awaitReplicas(on, key, tag, to);
        }
        return HandOff.granted(token);
    }

    /**
     * WAIT for the replicas, on the connection {@code on} that wrote the grant; if too few acknowledged it, undo it and
     * fail loudly (never a silent grant).
     */
    private void awaitReplicas(RedisClusterAsyncCommands<String, String> on, LockKey key, String tag, OwnerId owner) {
        long acked;
        try {
            acked = redis.await(on.waitForReplication(minReplicas, Math.max(1, replicaTimeout.toMillis())));
        } catch (RuntimeException e) {
            undoGrant(key, owner);
            throw e;
        }
        String holder = null;
        if (acked >= minReplicas) {
            // Lettuce may have reconnected to a newly promoted master between the grant and WAIT: WAIT would then
            // count replicas of a server that never saw the grant. Check that the server that answered has our hold.
            try {
                holder = redis.await(on.get(KeyLayout.key(tag, KeyLayout.HOLD)));
            } catch (RuntimeException e) {
                undoGrant(key, owner);
                throw e;
            }
        }
        if (acked < minReplicas || !owner.value().equals(holder)) {
            undoGrant(key, owner);
            throw new DistributedLockException(
                    "lock '" + key.name() + "' was granted but only " + acked + " of the required " + minReplicas
                            + " replicas acknowledged it within " + replicaTimeout + "; the grant was released",
                    new IllegalStateException("WAIT " + minReplicas + " " + replicaTimeout.toMillis() + " = " + acked));
        }
    }

    private void undoGrant(LockKey key, OwnerId owner) {
        try {
            var unused = release(key, owner);
        } catch (RuntimeException e) {
            log.warn("distlock: could not release an unreplicated grant for {}; it expires with its lease", owner, e);
        }
    }

    @Override
    public Subscription subscribe(LockKey key, Runnable wakeUp) {
        return subscribe(key, wakeUp, grant -> false);
    }

    @Override
    public Subscription subscribe(LockKey key, Runnable wakeUp, Predicate<Grant> takeGrant) {
        if (spin) {
            return Subscription.none();
        }
        String tag = layout.tag(key.name());
        // one channel per client, subscribed once and kept; sharded: one per slot and client, kept
        Subscription inner = redis.subscribe(wakeChannel(tag), true, sharded, tag, wakeUp);
        Wait wait = new Wait(clientId + ":w" + waits.incrementAndGet(), takeGrant);
        entries.put(tag, wait);
        return () -> {
            inner.close();
            entries.remove(tag, wait);
            if (registered.remove(wait.entry)) {
                leave(tag, wait.entry);
            }
        };
    }

    /**
     * A release gave the lock to this client: {@code grant} is '<entry>#<token>', the hold's value (wake-one.lua).
     * Offered to the engine only when it is the current wait's and provably current: its token is greater than every
     * fence value this wait's attempts saw (so each of their scripts ran before the grant, and none took the hold
     * over), which also makes the send time of the latest of them a lower bound of the grant's time, so the claim
     * lasts at least until that time plus CLAIM. The engine refuses it while an attempt of the client is on its way;
     * an attempt records its answer under this wait's monitor, held here while the engine decides, before the engine
     * counts the attempt done. Otherwise (or when no waiter can take it) the
     * message is a plain wake-up: a waiting attempt takes the hold over, or, with nobody waiting, it is passed on.
     */
    private boolean onGrant(String tag, String grant) {
        int hash = grant.lastIndexOf('#');
        Wait wait = entries.get(tag);
        if (wait == null || minReplicas > 0 || hash != wait.entry.length() || !grant.startsWith(wait.entry)) {
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
            if (!wait.takeGrant.test(new Grant(new OwnerId(grant), token, GRANT_SPARE, validUntil))) {
                return false;
            }
            wait.maxFence = token + GRANT_SPARE;
        }
        registered.remove(wait.entry); // the granting script removed the entry
        grantsTaken.incrementAndGet();
        return true;
    }

    /** Grants this client took with a wake-up, without a round trip; for tests. */
    long grantsTaken() {
        return grantsTaken.get();
    }

    /**
     * One wait of this client for one name (an open subscription): its entry among the waiting clients, and what its
     * attempts saw of the name, which tells whether a grant heard of later is current (see {@link #onGrant}).
     */
    private static final class Wait {
        final String entry;
        final Predicate<Grant> takeGrant;
        /** Whether an answer with a fence value came back. Guarded by this. */
        boolean seen;
        /** The greatest fence value or token the attempts saw. Guarded by this. */
        long maxFence;
        /** When the latest attempt that came back with a fence value was sent (System.nanoTime). Guarded by this. */
        long lastSent;

        Wait(String entry, Predicate<Grant> takeGrant) {
            this.entry = entry;
            this.takeGrant = takeGrant;
        }

        /** {@code answer} null when the attempt failed. */
        synchronized void attemptEnded(long sent, @Nullable List<Object> answer) {
            if (answer == null || answer.size() < 2) {
                return;
            }
            long fence;
            if (number(answer, 0) == 1) {
                fence = number(answer, 1) + (answer.size() > 2 ? number(answer, 2) : 0);
            } else if (answer.size() > 2) {
                fence = number(answer, 2);
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

    /**
     * The client stopped waiting while registered among the waiting clients (its waiter timed out or was
     * interrupted): leave them, so nothing of the wait is left behind, and pass on a wake-up it may have been sent.
     */
    private void leave(String tag, String entry) {
        try {
            Long unused = redis.call(
                    LuaScript.LOCK_PASS_ON,
                    ScriptOutputType.INTEGER,
                    wakeKeys(tag),
                    entry,
                    clientId,
                    wakePrefix(tag),
                    publish,
                    tag,
                    claimMillis,
                    "0");
        } catch (RuntimeException e) {
            log.debug("distlock: leaving the waiting clients of {} failed; the entry expires by itself", tag, e);
        }
    }

    @Override
    public Optional<LockInfo> inspect(LockKey key) {
        return info(key.name(), redis.await(inspectAsync(key.name())));
    }

    private CompletableFuture<List<Object>> inspectAsync(String name) {
        String tag = layout.tag(name);
        return redis.eval(LuaScript.LOCK_INSPECT, ScriptOutputType.MULTI, new String[] {
            KeyLayout.key(tag, KeyLayout.HOLD),
            KeyLayout.key(tag, KeyLayout.FENCE),
            KeyLayout.key(tag, KeyLayout.WAITERS)
        });
    }

    @Override
    public List<LockInfo> list(String prefix, int limit) {
        ScanIterator<String> scan = ScanIterator.scan(
                redis.keyCommands(),
                ScanArgs.Builder.matches(layout.holdPattern(prefix)).limit(1000));
        List<String> names = new ArrayList<>();
        while (scan.hasNext() && names.size() < limit) {
            String name = layout.nameOfHoldKey(scan.next());
            if (name != null && name.startsWith(prefix)) {
                names.add(name);
            }
        }
        List<CompletableFuture<List<Object>>> answers = new ArrayList<>(names.size());
        for (String name : names) {
            answers.add(inspectAsync(name));
        }
        List<LockInfo> infos = new ArrayList<>(names.size());
        for (int i = 0; i < names.size(); i++) {
            info(names.get(i), redis.await(answers.get(i))).ifPresent(infos::add);
        }
        return infos;
    }

    @Override
    public Optional<LockInfo> forceRelease(LockKey key) {
        String tag = layout.tag(key.name());
        List<Object> answer = redis.call(
                LuaScript.LOCK_FORCE_RELEASE,
                ScriptOutputType.MULTI,
                new String[] {
                    KeyLayout.key(tag, KeyLayout.HOLD),
                    KeyLayout.key(tag, KeyLayout.FENCE),
                    KeyLayout.key(tag, KeyLayout.WAITERS),
                    KeyLayout.key(tag, KeyLayout.QUEUE),
                    KeyLayout.key(tag, KeyLayout.WAKE_ORDER),
                    KeyLayout.key(tag, KeyLayout.WAKE_DEADLINES)
                },
                wakePrefix(tag),
                publish,
                tag);
        return info(key.name(), answer);
    }

    private static Optional<LockInfo> info(String name, List<Object> answer) {
        if (answer.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new LockInfo(
                name,
                String.valueOf(answer.get(0)),
                Duration.ofMillis(Math.max(0, number(answer, 1))),
                number(answer, 2),
                (int) number(answer, 3)));
    }

    /**
     * Checks the server's eviction policy and loads every script into its cache, all in one pipelined round trip, so
     * that no first call of an operation pays a NOSCRIPT round trip (on a Cluster Lettuce sends SCRIPT LOAD to every
     * node). Failures are harmless: CONFIG may be disabled, and the EVALSHA fallback loads a script when it is missing.
     */
    void prepareServer() {
        CompletableFuture<Map<String, String>> config =
                redis.bounded(redis.async().configGet("maxmemory-policy"));
        List<CompletableFuture<String>> loads = new ArrayList<>();
        for (LuaScript script : LuaScript.ALL) {
            loads.add(redis.bounded(redis.async().scriptLoad(script.source())));
        }
        try {
            checkEviction(redis.await(config).getOrDefault("maxmemory-policy", ""));
        } catch (RuntimeException e) {
            log.debug("distlock: could not read maxmemory-policy (CONFIG may be disabled): {}", e.toString());
        }
        for (int i = 0; i < loads.size(); i++) {
            try {
                String sha = redis.await(loads.get(i));
                if (!LuaScript.ALL.get(i).sha1().equals(sha)) {
                    log.warn("distlock: the server digests {} as {}", LuaScript.ALL.get(i), sha);
                }
            } catch (RuntimeException e) {
                log.debug("distlock: SCRIPT LOAD of {} failed; EVALSHA falls back to EVAL", LuaScript.ALL.get(i), e);
            }
        }
    }

    /** Warns when the server may evict lock keys (the fence counter has no TTL, so only allkeys-* policies evict it). */
    private static void checkEviction(String policy) {
        if (policy.toLowerCase(Locale.ROOT).startsWith("allkeys")) {
            log.warn(
                    "distlock: Redis maxmemory-policy is '{}': under memory pressure Redis may evict lock holds and"
                            + " fence counters, which breaks mutual exclusion and lets fencing tokens go back."
                            + " Use noeviction or a volatile-* policy for the locks' Redis.",
                    policy);
        } else if (policy.toLowerCase(Locale.ROOT).startsWith("volatile")) {
            log.info(
                    "distlock: Redis maxmemory-policy is '{}': holds (which have a TTL) may be evicted under memory"
                            + " pressure; their owners then find them lost at the next renewal",
                    policy);
        }
    }

    @Override
    public void close() {
        redis.close();
    }

    @Override
    public String toString() {
        return "RedisLockStore[" + (redis.isCluster() ? "cluster" : "standalone") + ", prefix '" + layout.prefix()
                + "']";
    }

    /** The last lease written out by {@link #millis}: nearly every call passes the client's one default lease. */
    private volatile LeaseText lastLease = new LeaseText(Duration.ZERO, "1");

    private record LeaseText(Duration lease, String millis) {}

    private String millis(Duration d) {
        LeaseText last = lastLease;
        if (last.lease.equals(d)) {
            return last.millis;
        }
        String text = millisText(d);
        lastLease = new LeaseText(d, text);
        return text;
    }

    private static String millisText(Duration d) {
        long ms;
        try {
            ms = d.toMillis();
        } catch (ArithmeticException e) {
            ms = Long.MAX_VALUE;
        }
        return Long.toString(Math.max(1, ms));
    }

    private static long number(List<Object> answer, int index) {
        Object o = answer.get(index);
        if (o instanceof Long l) {
            return l;
        }
        throw new IllegalStateException("unexpected script answer " + answer + " at " + index);
    }

    /**
     * Names (tags) this client lately saw contended: an attempt of its own was busy, or a lean release found a waiting
     * client. A direct-mapped table of 1,024 hash codes, each slot the last that fell into it; no strings are kept, so a
     * hostile 10 kB name costs 4 bytes. It only chooses between two correct releases: a name pushed out (or never seen)
     * costs its next contended release one more request, a stale entry or another name's equal hash code costs its
     * releases the larger request.
     */
    private static final class ContendedTags {
        private static final int SLOTS = 1024;
        private final AtomicIntegerArray hashes = new AtomicIntegerArray(SLOTS);

        boolean contains(String tag) {
            int h = tag.hashCode();
            return hashes.get(slot(h)) == h;
        }

        void add(String tag) {
            int h = tag.hashCode();
            hashes.lazySet(slot(h), h);
        }

        private static int slot(int h) {
            return (h ^ (h >>> 16)) & (SLOTS - 1);
        }
    }
}
