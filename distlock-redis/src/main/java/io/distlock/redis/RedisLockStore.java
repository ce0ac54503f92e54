package io.distlock.redis;

import io.distlock.LockInfo;
import io.distlock.spi.AcquiresTogether;
import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.ClaimAdmin;
import io.distlock.spi.ClaimStore;
import io.distlock.spi.CounterStore;
import io.distlock.spi.FreeSubscriptions;
import io.distlock.spi.Grant;
import io.distlock.spi.GrantsWithWakeUp;
import io.distlock.spi.HandOff;
import io.distlock.spi.HandsOff;
import io.distlock.spi.HandsOffClaims;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import io.distlock.spi.Subscription;
import io.distlock.spi.WakesOwners;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * Operations
 *   Every SPI method is one Lua script (resources beside this class), so each step is atomic on the server and one
 *   round trip: an uncontended acquire is one EVALSHA (SET NX PX + INCRBY; a fair-queue attempt has its own script), a
 *   release one EVALSHA (owner-checked DEL, or a grant to the next waiting client + one PUBLISH), a hand-off one
 *   EVALSHA (owner-checked SET + INCRBY). Keys are laid out by KeyLayout: one hash tag per name, so the scripts are legal
 *   on a Cluster. Read-write locks and semaphores (RedisClaims) and count-down latches (RedisCounters) have scripts of
 *   their own; this class hands their steps over by the claim's kind.
 *
 * States of one name
 *   Free (no hold key); held (hold key = owner id, PX = lease); given to a waiting client ('<entry>#<token>' for
 *   WaitRegistry.CLAIM); queued waiters (fair locks only: a list in arrival order plus a zset of deadlines by server
 *   time, refreshed by each attempt; an owner past its deadline is evicted by the next attempt, and both keys expire by
 *   themselves when nobody refreshes them); waiting clients (the wq and wd zsets, see wake-one.lua).
 *
 * Invariants
 *   Only the owner's script changes its hold (release, renew, hand-off and abandon compare the hold's value with the
 *   owner id first; a mismatch changes nothing and writes nothing). The fence counter only grows (INCR or INCRBY
 *   inside the granting script) and never gets a TTL, so a token is greater than every earlier token of the name as
 *   long as the server keeps its data (see RedisLockClient for when Redis does not).
 *
 * Waiting
 *   While a client waits for a name (WaitRegistry), its attempts carry the wait's entry: busy, the entry joins the
 *   name's waiting clients; granted, it leaves them. A release gives the lock to the oldest live entry and one PUBLISH
 *   tells that client, which takes the hold as it is with no round trip when it can prove the grant current, or else
 *   takes it over with its next attempt. So a hand-off between clients costs the release and the message, not a third
 *   request. Abandon, forced release and fair-queue changes free the lock and tell one client. A lost message costs
 *   at most Busy.retryWithin: the remaining lease of the hold or claim the waiter saw, or a third of the waiter timeout
 *   for queued waiters, which must come back that often to keep their place.
 *
 * Spare tokens
 *   How many tokens a grant reserves after its own for the client's local successions is the engine's policy: each
 *   claim says how many (Claim.spareTokens), and lock-acquire.lua and lock-handoff.lua move the fence counter on by 1 +
 *   that many. A grant a release makes to a waiting client reserves what that client's wait asked: the number rides in
 *   its entry ('<clientId>:w<n>s<spare>', fixed by the wait's first attempt), where wake-one.lua reads it. A fair-queue
 *   grant reserves none: its grants follow the queue, not the client.
 *
 * Releasing
 *   A release runs lock-release-lean.lua (only the keys an uncontended release reads) unless ContendedTags saw the
 *   name contended lately; when the lean script finds a waiting client it changes nothing, and the full
 *   lock-release.lua, which gives the lock on, runs instead.
 *
 * Several locks at once (AcquiresTogether)
 *   A multi-lock's members of this client are tried with one lock-acquire.lua each (the plain attempt: never queued,
 *   no waiting-client entry) and released with one lock-release-lean.lua each (lock-release.lua for names seen
 *   contended), all sent before any answer is awaited: they pipeline on the one connection, so the set costs one round
 *   trip (on a Cluster, one per node the names live on). Each script stays atomic for its own name only; the names are
 *   not taken atomically together. A lean release that finds a waiting client is followed by one more pipelined step
 *   of full releases for those names. With replica acknowledgements each attempt is made and awaited on its own.
 *
 * Renewal
 *   All holds of a client, of every kind, in one script per slot group and kind (standalone: per 1,000 holds), all
 *   sent at once (RenewBatches), so a watchdog tick costs one round trip per node. No hold counts as renewed unless
 *   every batch answered.
 *
 * The parts
 *   RedisConnections (commands, subscriptions), WakeChannels (where a client is woken), WaitRegistry (this client's
 *   waits and the grants sent to them), ReplicaAcks (WAIT after each grant), RedisLockAdmin and RedisClaimAdmin
 *   (inspect, list, force release), RedisClaims (read-write locks, semaphores), RedisCounters (latches),
 *   RenewBatches (a tick's renewals), ServerPreparation (eviction check, script cache).
 *
 * References
 *   The Redis distributed-lock pattern (redis.io, "Distributed Locks with Redis"); M. Kleppmann, "How to do
 *   distributed locking" (2016) for fencing tokens.
 */
/** The {@link ClaimStore} of Redis, and its {@link ClaimAdmin}; see the overview comment in the source. */
final class RedisLockStore
        implements ClaimStore,
                ClaimAdmin,
                CounterStore,
                HandsOff,
                HandsOffClaims,
                FreeSubscriptions,
                GrantsWithWakeUp,
                WakesOwners,
                AcquiresTogether {
    private static final Set<Claim.Kind> KINDS =
            Set.of(Claim.Kind.LOCK, Claim.Kind.READ_WRITE_LOCK, Claim.Kind.SEMAPHORE);

    private final RedisConnections redis;
    private final CommandRunner commands;
    private final KeyLayout layout;
    private final WakeChannels channels;
    private final WaitRegistry waits;
    private final ReplicaAcks replicaAcks;
    private final RedisLockAdmin admin;
    private final RedisClaims claims;
    private final RedisCounters counters;
    private final RedisClaimAdmin claimAdmin;
    private final String waiterTimeoutMillis;
    private final boolean spin;
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
        this.commands = redis.commands();
        this.layout = layout;
        this.waiterTimeoutMillis = Long.toString(Math.max(1, waiterTimeout.toMillis()));
        this.spin = spin;
        this.channels = new WakeChannels(layout, clientId, spin, sharded);
        this.replicaAcks = new ReplicaAcks(
                redis, minReplicas, replicaTimeout, (key, owner) -> release(layout.keys(key.name()), owner));
        this.waits =
                new WaitRegistry(commands, redis.subscriptions(), layout, channels, clientId, !replicaAcks.required());
        this.admin = new RedisLockAdmin(redis, layout, channels);
        this.claims = new RedisClaims(redis, layout, channels, clientId, waiterTimeout, spin, replicaAcks);
        this.counters = new RedisCounters(redis, layout, channels, spin);
        this.claimAdmin = new RedisClaimAdmin(redis, layout, channels);
        if (!spin) {
            waits.listen();
        }
    }

    KeyLayout layout() {
        return layout;
    }

    RedisConnections connections() {
        return redis;
    }

    WaitRegistry waits() {
        return waits;
    }

    @Override
    public Set<Claim.Kind> kinds() {
        return KINDS;
    }

    @Override
    public Attempt tryAcquire(Claim claim, boolean queue) {
        if (claim.kind() != Claim.Kind.LOCK) {
            return claims.tryAcquire(claim, queue);
        }
        LockKey key = claim.key();
        OwnerId owner = claim.owner();
        Duration lease = claim.lease().length();
        int spare = claim.spareTokens();
        KeyLayout.NameKeys keys = layout.keys(key.name());
        String tag = keys.tag;
        String holdKey = keys.hold;
        String fenceKey = keys.fence;
        // a client with a waiter for this name registers among its waiting clients (busy) or leaves them (granted)
        WaitRegistry.Wait wait = spin ? null : waits.current(tag);
        String entry = wait == null ? null : wait.entry(spare);
        long sent = System.nanoTime();
        // with replicaAcks the grant and its WAIT share one connection (on a Cluster: to the slot's master)
        RedisClusterAsyncCommands<String, String> on = replicaAcks.commandsFor(holdKey);
        List<Object> answer = null;
        try {
            answer = acquire(on, tag, holdKey, fenceKey, owner, lease, spare, queue, entry);
        } finally {
            if (wait != null) {
                wait.attemptEnded(sent, answer);
            }
        }
        long status = LuaScript.number(answer, 0);
        long value = LuaScript.number(answer, 1);
        if (entry != null) {
            waits.answered(entry, status == 1, queue);
        }
        if (status != 1) {
            contended.add(tag);
            return Attempt.busy(Duration.ofMillis(value));
        }
        if (replicaAcks.required()) {
            replicaAcks.await(on, key, tag, owner);
        }
        // lock-acquire.lua reserves the claim's spare tokens for local successions; the fair queue's script none
        return Attempt.acquired(value, answer.size() > 2 ? Math.toIntExact(LuaScript.number(answer, 2)) : 0);
    }

    private List<Object> acquire(
            RedisClusterAsyncCommands<String, String> on,
            String tag,
            String holdKey,
            String fenceKey,
            OwnerId owner,
            Duration lease,
            int spare,
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
            List<String> args = new ArrayList<>(List.of(
                    owner.value(), millis(lease), waiterTimeoutMillis, channels.prefix(tag), channels.publish(), tag));
            if (entry != null) {
                args.add(entry);
            }
            answer = commands.call(
                    on, LuaScript.LOCK_ACQUIRE_QUEUED, ScriptOutputType.MULTI, keys, args.toArray(String[]::new));
        } else if (entry != null) {
            answer = commands.call(
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
                    Integer.toString(spare),
                    entry);
        } else {
            answer = expandPlainAnswer(
                    commands.call(
                            on,
                            LuaScript.LOCK_ACQUIRE,
                            ScriptOutputType.INTEGER,
                            new String[] {holdKey, fenceKey},
                            owner.value(),
                            millis(lease),
                            Integer.toString(spare)),
                    spare);
        }
        return answer;
    }

    /**
     * lock-acquire.lua answers a plain attempt (no waiting-client entry) with one integer, which costs Redis less than
     * a table: the fencing token when acquired (with the {@code spare} tokens the attempt asked for), minus the hold's
     * remaining lease in milliseconds when busy. Returns the table form the other answers have: {1, token, spare} or
     * {0, ttl}.
     */
    static List<Object> expandPlainAnswer(@Nullable Long answer, int spare) {
        if (answer == null || answer == 0L) {
            throw new IllegalStateException("unexpected answer to a plain attempt: " + answer);
        }
        long v = answer;
        return v > 0 ? List.of(1L, v, (long) spare) : List.of(0L, -v);
    }

    @Override
    public List<Attempt> tryAcquireAll(List<Claim> claims) {
        List<Attempt> answers = new ArrayList<>(claims.size());
        if (replicaAcks.required()) {
            for (Claim c : claims) {
                answers.add(tryAcquire(c, false)); // each grant waits for its replicas on its own connection
            }
            return answers;
        }
        List<CompletableFuture<Long>> sent = new ArrayList<>(claims.size());
        for (Claim c : claims) {
            if (c.kind() != Claim.Kind.LOCK) {
                throw new IllegalArgumentException("only locks are tried together: " + c);
            }
            KeyLayout.NameKeys keys = layout.keys(c.key().name());
            sent.add(commands.eval(
                    LuaScript.LOCK_ACQUIRE,
                    ScriptOutputType.INTEGER,
                    new String[] {keys.hold, keys.fence},
                    c.owner().value(),
                    millis(c.lease().length()),
                    Integer.toString(c.spareTokens())));
        }
        List<Long> raw = awaitAll(sent);
        for (int i = 0; i < claims.size(); i++) {
            Claim c = claims.get(i);
            List<Object> answer = expandPlainAnswer(raw.get(i), c.spareTokens());
            if (LuaScript.number(answer, 0) == 1) {
                answers.add(Attempt.acquired(LuaScript.number(answer, 1), c.spareTokens()));
            } else {
                contended.add(layout.tag(c.key().name()));
                answers.add(Attempt.busy(Duration.ofMillis(LuaScript.number(answer, 1))));
            }
        }
        return answers;
    }

    @Override
    public List<Boolean> releaseAll(List<HeldClaim> holds) {
        int n = holds.size();
        List<CompletableFuture<Long>> sent = new ArrayList<>(n);
        boolean[] full = new boolean[n];
        for (int i = 0; i < n; i++) {
            HeldClaim h = holds.get(i);
            if (h.kind() != Claim.Kind.LOCK) {
                throw new IllegalArgumentException("only locks are released together: " + h);
            }
            KeyLayout.NameKeys keys = layout.keys(h.key().name());
            full[i] = contended.contains(keys.tag);
            sent.add(full[i] ? fullRelease(keys.tag, h.owner()) : leanRelease(keys, h.owner()));
        }
        List<Long> raw = awaitAll(sent);
        List<Integer> again = new ArrayList<>();
        List<CompletableFuture<Long>> resent = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Long r = raw.get(i);
            if (!full[i] && r != null && r == 2L) {
                // a client waits for this name: the full release gives the lock on
                String tag = layout.tag(holds.get(i).key().name());
                contended.add(tag);
                again.add(i);
                resent.add(fullRelease(tag, holds.get(i).owner()));
            }
        }
        List<Long> fullAnswers = awaitAll(resent);
        for (int k = 0; k < again.size(); k++) {
            raw.set(again.get(k), fullAnswers.get(k));
        }
        List<Boolean> answers = new ArrayList<>(n);
        for (Long r : raw) {
            answers.add(r != null && r == 1L);
        }
        return answers;
    }

    private CompletableFuture<Long> leanRelease(KeyLayout.NameKeys keys, OwnerId owner) {
        return commands.eval(
                LuaScript.LOCK_RELEASE_LEAN,
                ScriptOutputType.INTEGER,
                new String[] {keys.hold, keys.queue(), keys.wakeOrder()},
                owner.value());
    }

    private CompletableFuture<Long> fullRelease(String tag, OwnerId owner) {
        return commands.eval(
                LuaScript.LOCK_RELEASE,
                ScriptOutputType.INTEGER,
                KeyLayout.wakeKeys(tag),
                owner.value(),
                channels.prefix(tag),
                channels.publish(),
                tag,
                WaitRegistry.CLAIM_MILLIS);
    }

    /** Awaits every command sent (each bounded by the timeout); throws the first failure after all have ended. */
    private <T> List<@Nullable T> awaitAll(List<CompletableFuture<T>> sent) {
        List<@Nullable T> answers = new ArrayList<>(sent.size());
        RuntimeException failure = null;
        for (CompletableFuture<T> f : sent) {
            try {
                answers.add(commands.await(f));
            } catch (RuntimeException e) {
                answers.add(null);
                if (failure == null) {
                    failure = e;
                } else if (failure.getSuppressed().length < 3) {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
        return answers;
    }

    @Override
    public void abandon(Claim claim) {
        if (claim.kind() != Claim.Kind.LOCK) {
            claims.abandon(claim);
            return;
        }
        OwnerId owner = claim.owner();
        String tag = layout.tag(claim.key().name());
        Long unused = commands.call(
                LuaScript.LOCK_ABANDON,
                ScriptOutputType.INTEGER,
                KeyLayout.wakeKeys(tag),
                owner.value(),
                channels.prefix(tag),
                channels.publish(),
                tag);
    }

    @Override
    public boolean release(HeldClaim hold) {
        if (hold.kind() != Claim.Kind.LOCK) {
            return claims.release(hold);
        }
        return release(layout.keys(hold.key().name()), hold.owner());
    }

    /**
     * Releases with lock-release-lean.lua (only the keys an uncontended release reads) unless the name was seen
     * contended lately; when the lean script finds a waiting client it changes nothing, and the full lock-release.lua,
     * which gives the lock on, runs instead.
     */
    private boolean release(KeyLayout.NameKeys keys, OwnerId owner) {
        String tag = keys.tag;
        if (!contended.contains(tag)) {
            long lean = commands.callOwnerChecked(
                    LuaScript.LOCK_RELEASE_LEAN,
                    new String[] {keys.hold, keys.queue(), keys.wakeOrder()},
                    owner.value());
            if (lean != 2L) {
                return lean == 1L;
            }
            contended.add(tag);
        }
        long released = commands.callOwnerChecked(
                LuaScript.LOCK_RELEASE,
                KeyLayout.wakeKeys(tag),
                owner.value(),
                channels.prefix(tag),
                channels.publish(),
                tag,
                WaitRegistry.CLAIM_MILLIS);
        return released == 1L;
    }

    @Override
    public Set<HeldClaim> renew(Collection<HeldClaim> holds, Duration lease) {
        if (holds.isEmpty()) {
            return Set.of();
        }
        List<HeldClaim> locks = new ArrayList<>(holds.size());
        List<HeldClaim> others = new ArrayList<>();
        for (HeldClaim h : holds) {
            (h.kind() == Claim.Kind.LOCK ? locks : others).add(h);
        }
        String leaseMillis = millis(lease);
        RenewBatches batches = new RenewBatches(commands, layout, redis.isCluster());
        batches.send(LuaScript.LOCK_RENEW, locks, leaseMillis, (tag, h, keys, args) -> {
            keys.add(KeyLayout.key(tag, KeyLayout.HOLD));
            args.add(h.owner().value());
        });
        batches.send(LuaScript.CLAIM_RENEW, others, leaseMillis, RedisClaims::renewArgs);
        return batches.gone();
    }

    @Override
    public HandOff handOff(HeldClaim from, Claim to) {
        return claims.handOff(from, to);
    }

    @Override
    public HandOff handOff(Claim claim, OwnerId from) {
        LockKey key = claim.key();
        OwnerId to = claim.owner();
        Duration lease = claim.lease().length();
        int spare = claim.spareTokens();
        String tag = layout.tag(key.name());
        String holdKey = KeyLayout.key(tag, KeyLayout.HOLD);
        RedisClusterAsyncCommands<String, String> on = replicaAcks.commandsFor(holdKey);
        Long token = commands.call(
                on,
                LuaScript.LOCK_HANDOFF,
                ScriptOutputType.INTEGER,
                new String[] {holdKey, KeyLayout.key(tag, KeyLayout.FENCE)},
                from.value(),
                to.value(),
                millis(lease),
                Integer.toString(spare));
        if (token == null || token == 0L) {
            return HandOff.notHeld();
        }
        if (replicaAcks.required()) {
            replicaAcks.await(on, key, tag, to);
        }
        return HandOff.granted(token, spare);
    }

    /**
     * The wake-ups of a read-write lock's or semaphore's waiters (the engine's claim waiters subscribe here; its lock
     * waiters subscribe through {@link GrantsWithWakeUp}, the three-argument form).
     */
    @Override
    public Subscription subscribe(LockKey key, Runnable wakeUp) {
        return claims.subscribe(key, wakeUp);
    }

    /** The claim waiters' wake-ups, told which owners each names (see {@link WakesOwners}). */
    @Override
    public Subscription subscribe(LockKey key, Consumer<Predicate<OwnerId>> wakeUp) {
        return claims.subscribe(key, wakeUp);
    }

    @Override
    public Subscription subscribe(LockKey key, Runnable wakeUp, Predicate<Grant> takeGrant) {
        if (spin) {
            return Subscription.none();
        }
        return waits.subscribe(layout.tag(key.name()), wakeUp, takeGrant);
    }

    /** This client's wake channel for a name's tag; for tests. */
    String wakeChannel(String tag) {
        return channels.channel(tag);
    }

    @Override
    public Optional<LockInfo> inspect(LockKey key) {
        Optional<LockInfo> lock = admin.inspect(key);
        return lock.isPresent() ? lock : claimAdmin.inspect(key);
    }

    /** Locks, then read-write locks, semaphores and latches, merged in name order. */
    @Override
    public List<LockInfo> list(String prefix, int limit) {
        List<LockInfo> all = new ArrayList<>(admin.list(prefix, limit));
        all.addAll(claimAdmin.list(prefix, limit));
        all.sort(java.util.Comparator.comparing(LockInfo::name));
        return all.size() > limit ? all.subList(0, limit) : all;
    }

    @Override
    public Optional<LockInfo> forceRelease(LockKey key) {
        Optional<LockInfo> lock = admin.forceRelease(key, null);
        return lock.isPresent() ? lock : claimAdmin.forceRelease(key, null);
    }

    @Override
    public Optional<LockInfo> forceRelease(LockKey key, OwnerId owner) {
        Optional<LockInfo> lock = admin.forceRelease(key, owner);
        return lock.isPresent() ? lock : claimAdmin.forceRelease(key, owner);
    }

    @Override
    public int available(LockKey key, Claim.Kind kind, int size) {
        if (kind != Claim.Kind.LOCK) {
            return claims.available(key, kind, size);
        }
        return admin.held(key) ? 0 : 1;
    }

    @Override
    public boolean trySetCount(LockKey key, long count, Duration expiry) {
        return counters.trySetCount(key, count, expiry);
    }

    @Override
    public long countDown(LockKey key, String callId, Duration expiry) {
        return counters.countDown(key, callId, expiry);
    }

    @Override
    public long count(LockKey key) {
        return counters.count(key);
    }

    @Override
    public Subscription watchZero(LockKey key, Runnable wakeUp) {
        return counters.watchZero(key, wakeUp);
    }

    /** Checks the server's eviction policy and loads every script into its cache (see {@link ServerPreparation}). */
    void prepareServer() {
        ServerPreparation.prepare(commands);
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

    static String millisText(Duration d) {
        long ms;
        try {
            ms = d.toMillis();
        } catch (ArithmeticException e) {
            ms = Long.MAX_VALUE;
        }
        return Long.toString(Math.max(1, ms));
    }
}
