package io.distlock.redis;

import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.HandOff;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.LockKey;
import io.distlock.spi.Mode;
import io.distlock.spi.OwnerId;
import io.distlock.spi.Subscription;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Holds
 *   Read-write locks and semaphores share one layout (claim-common.lua): every hold is a member of the name's holds zset
 *   (mode + owner id -> expiry by the server's clock), with its permits and fencing token in the grants hash, so each
 *   read hold and each permit hold has a lease of its own. A write lock is an exclusive claim of one permit, a read lock
 *   a shared claim of one permit of Integer.MAX_VALUE, a semaphore's acquisition a shared claim of its permits. Every
 *   grant takes a token from the name's fence counter (INCR), shared with locks.
 *
 * Order
 *   An attempt that may wait joins the name's queue (claim-acquire.lua). A claim is granted when it fits beside the live
 *   holds after every claim queued before it has been granted, in queue order: so a waiting writer holds back newer
 *   readers, and acquire(5) is not starved by a stream of acquire(1)s. A queued owner refreshes its deadline with each
 *   attempt (Busy.retryWithin is at most a third of the waiter timeout); one that does not come back (a dead client) is
 *   evicted by the next script that sweeps, so it blocks others for at most the waiter timeout.
 *
 * Expiry
 *   Holds past their lease and waiters past their deadline are swept by every acquire, release and abandon. The keys
 *   of the name never expire before a live hold or waiter needs them; their TTLs move only when a new hold expiry or
 *   waiter deadline passes them (to half a lease beyond it), and they are deleted when the name has neither holds nor
 *   waiters, so a name nobody uses leaves nothing behind (claim-common.lua, cover and settle). Renewal
 *   (claim-renew.lua, batched by RenewBatches with the locks' renewals) checks owner and token and never extends a hold
 *   whose lease has run out.
 *
 * Wake-ups
 *   Waiting clients subscribe to the name's own channel '<tag>:cw'. A release, abandon, forced release or eviction
 *   walks the queue from its head as the grants would go and publishes one message listing the owners whose waiters
 *   can pass now (claim-common.lua wake); other clients ignore it, and a listed client wakes only the listed waiters
 *   (WakeUpDispatch; the engine's WakesOwners). So a write release wakes the waiting readers or one writer, a permit
 *   release as many waiters as the permits serve, each with one PUBLISH whatever the number of waiters. A lost
 *   message costs at most Busy.retryWithin.
 *
 * Kinds
 *   A name is one kind at a time: a claim on a name in use as a latch, a lock, or the other claim kind, or a semaphore
 *   of another size, is refused with IllegalStateException and changes nothing. The semaphore's size is kept in its own
 *   key for ever, like the fence counter.
 */
/** The read-write lock and semaphore steps of the Redis store; see the overview comment in the source. */
final class RedisClaims {
    private static final Logger log = LoggerFactory.getLogger(RedisClaims.class);

    private final RedisConnections redis;
    private final CommandRunner commands;
    private final KeyLayout layout;
    private final WakeChannels channels;
    private final String waiterTimeoutMillis;
    private final boolean spin;
    private final ReplicaAcks replicaAcks;

    RedisClaims(
            RedisConnections redis,
            KeyLayout layout,
            WakeChannels channels,
            String clientId,
            Duration waiterTimeout,
            boolean spin,
            ReplicaAcks replicaAcks) {
        this.redis = redis;
        this.commands = redis.commands();
        this.layout = layout;
        this.channels = channels;
        this.waiterTimeoutMillis = Long.toString(Math.max(1, waiterTimeout.toMillis()));
        this.spin = spin;
        this.replicaAcks = replicaAcks;
        redis.subscriptions().dispatch().clientId(clientId);
    }

    Attempt tryAcquire(Claim claim, boolean queue) {
        String tag = layout.tag(claim.key().name());
        String[] keys = KeyLayout.claimKeys(tag, KeyLayout.FENCE, KeyLayout.SIZE, KeyLayout.LATCH, KeyLayout.HOLD);
        String mode = mode(claim.mode());
        String member = mode + claim.owner().value();
        RedisClusterAsyncCommands<String, String> on = replicaAcks.commandsFor(keys[1]);
        List<Object> answer = commands.call(
                on,
                LuaScript.CLAIM_ACQUIRE,
                ScriptOutputType.MULTI,
                keys,
                kind(claim.kind()),
                Integer.toString(claim.size()),
                mode,
                Integer.toString(claim.permits()),
                claim.owner().value(),
                RedisLockStore.millisText(claim.lease().length()),
                queue ? "1" : "0",
                waiterTimeoutMillis,
                channels.publish(),
                KeyLayout.key(tag, KeyLayout.CLAIM_CHANNEL),
                Long.toString(claim.request()));
        long status = LuaScript.number(answer, 0);
        if (status == 1) {
            long token = LuaScript.number(answer, 1);
            awaitReplicas(on, claim, keys[2], member, token);
            return Attempt.acquired(token);
        }
        if (status == 0) {
            return Attempt.busy(Duration.ofMillis(LuaScript.number(answer, 1)));
        }
        throw refused(claim.key(), claim.kind().label(), claim.size(), answer);
    }

    void abandon(Claim claim) {
        String tag = layout.tag(claim.key().name());
        Long unused = commands.call(
                LuaScript.CLAIM_ABANDON,
                ScriptOutputType.INTEGER,
                KeyLayout.claimKeys(tag),
                claim.owner().value(),
                mode(claim.mode()),
                Integer.toString(claim.permits()),
                channels.publish(),
                KeyLayout.key(tag, KeyLayout.CLAIM_CHANNEL));
    }

    boolean release(HeldClaim hold) {
        String tag = layout.tag(hold.key().name());
        long released = commands.callOwnerChecked(
                LuaScript.CLAIM_RELEASE,
                KeyLayout.claimKeys(tag),
                mode(hold.mode()) + hold.owner().value(),
                Long.toString(hold.fencingToken()),
                channels.publish(),
                KeyLayout.key(tag, KeyLayout.CLAIM_CHANNEL));
        return released == 1L;
    }

    /** Ends {@code from} and asks for {@code to}, queued, in one script (see claim-handoff.lua). */
    HandOff handOff(HeldClaim from, Claim to) {
        String tag = layout.tag(to.key().name());
        String[] keys = KeyLayout.claimKeys(tag, KeyLayout.FENCE);
        String mode = mode(to.mode());
        RedisClusterAsyncCommands<String, String> on = replicaAcks.commandsFor(keys[1]);
        List<Object> answer = commands.call(
                on,
                LuaScript.CLAIM_HANDOFF,
                ScriptOutputType.MULTI,
                keys,
                mode(from.mode()) + from.owner().value(),
                Long.toString(from.fencingToken()),
                mode,
                Integer.toString(to.permits()),
                to.owner().value(),
                RedisLockStore.millisText(to.lease().length()),
                waiterTimeoutMillis,
                channels.publish(),
                KeyLayout.key(tag, KeyLayout.CLAIM_CHANNEL),
                Long.toString(to.request()));
        long status = LuaScript.number(answer, 0);
        if (status == 1) {
            long token = LuaScript.number(answer, 1);
            awaitReplicas(on, to, keys[2], mode + to.owner().value(), token);
            return HandOff.granted(token);
        }
        return status == 0 ? HandOff.queued() : HandOff.notHeld();
    }

    /**
     * With replica acknowledgement required: waits until the replicas have {@code claim}'s grant of {@code token}
     * ({@code member}'s entry in {@code grants}), and releases it if they do not (see ReplicaAcks).
     */
    private void awaitReplicas(
            RedisClusterAsyncCommands<String, String> on, Claim claim, String grants, String member, long token) {
        if (!replicaAcks.required()) {
            return;
        }
        HeldClaim held = claim.held(token);
        String suffix = ":" + token;
        replicaAcks.await(
                on,
                claim.key(),
                () -> on.hget(grants, member).thenApply(g -> g != null && g.endsWith(suffix)),
                () -> releaseQuietly(held));
    }

    private void releaseQuietly(HeldClaim hold) {
        try {
            var unused = release(hold);
        } catch (RuntimeException e) {
            log.warn(
                    "distlock: could not release an unreplicated grant of '{}'; it expires with its lease",
                    hold.key(),
                    e);
        }
    }

    /** Adds the renewal of read-write lock and semaphore holds to a tick's batches (see claim-renew.lua). */
    static void renewArgs(String tag, HeldClaim h, List<String> keys, List<String> args) {
        keys.add(KeyLayout.key(tag, KeyLayout.CLAIM));
        keys.add(KeyLayout.key(tag, KeyLayout.HOLDS));
        keys.add(KeyLayout.key(tag, KeyLayout.GRANTS));
        args.add(mode(h.mode()) + h.owner().value());
        args.add(Long.toString(h.fencingToken()));
    }

    /**
     * Subscribes to the name's channel, which every waiting client shares (see the overview); the first wait of the
     * client for the name subscribes on the server, and the last one to end unsubscribes.
     */
    Subscription subscribe(LockKey key, Runnable wakeUp) {
        if (spin) {
            return Subscription.none();
        }
        String channel = KeyLayout.key(layout.tag(key.name()), KeyLayout.CLAIM_CHANNEL);
        return redis.subscriptions().subscribe(channel, false, channels.sharded(), channel, wakeUp);
    }

    /** As {@link #subscribe(LockKey, Runnable)}, told which of the client's owners each wake-up names. */
    Subscription subscribe(LockKey key, Consumer<Predicate<OwnerId>> wakeUp) {
        if (spin) {
            return Subscription.none();
        }
        String channel = KeyLayout.key(layout.tag(key.name()), KeyLayout.CLAIM_CHANNEL);
        return redis.subscriptions()
                .subscribe(channel, false, channels.sharded(), new WakeUpDispatch.Target(channel, wakeUp));
    }

    int available(LockKey key, Claim.Kind kind, int size) {
        List<Object> answer = commands.call(
                LuaScript.CLAIM_AVAILABLE,
                ScriptOutputType.MULTI,
                KeyLayout.claimKeys(layout.tag(key.name()), KeyLayout.SIZE, KeyLayout.LATCH, KeyLayout.HOLD),
                kind(kind),
                Integer.toString(size));
        if (LuaScript.number(answer, 0) != 1) {
            throw refused(key, kind.label(), size, answer);
        }
        return Math.toIntExact(LuaScript.number(answer, 1));
    }

    static String mode(Mode mode) {
        return mode == Mode.EXCLUSIVE ? "x" : "s";
    }

    static String kind(Claim.Kind kind) {
        return kind == Claim.Kind.SEMAPHORE ? "sem" : "rw";
    }

    /** How messages name a kind the scripts answer with ('rw', 'sem', 'latch', 'lock'). */
    static String label(String kind) {
        switch (kind) {
            case "rw":
                return Claim.Kind.READ_WRITE_LOCK.label();
            case "sem":
                return Claim.Kind.SEMAPHORE.label();
            case "latch":
                return "count-down latch";
            default:
                return kind;
        }
    }

    /** The refusal of a script answer {-1, kind} (another kind) or {-2, size} (another size). */
    static IllegalStateException refused(LockKey key, String asked, int size, List<Object> answer) {
        if (LuaScript.number(answer, 0) == -2) {
            return new IllegalStateException("semaphore '" + key.name() + "' has " + LuaScript.number(answer, 1)
                    + " permits in all; this client asked for a size of " + size);
        }
        return new IllegalStateException(
                "'" + key.name() + "' is in use as a " + label(String.valueOf(answer.get(1))) + ", not as a " + asked);
    }
}
