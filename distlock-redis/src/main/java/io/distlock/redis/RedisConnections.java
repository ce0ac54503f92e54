package io.distlock.redis;

import io.distlock.DistributedLockException;
import io.distlock.spi.Subscription;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisKeyCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.cluster.pubsub.StatefulRedisClusterPubSubConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiPredicate;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * One command connection and (created on the first wait) one pub/sub connection per client, shared by every lock and
 * thread. Commands are sent through Lettuce's async API, so concurrent callers pipeline on the one connection; a
 * caller that needs the answer waits for its own future only.
 *
 * Scripts run with EVALSHA; a NOSCRIPT answer (server restarted, failed over, script cache flushed, a Cluster node
 * that never saw the script) is answered with one EVAL of the source, which also caches it again on that server.
 *
 * Subscriptions: a wake-up message carries the lock name's tag; name -> the wake-ups registered for it. Messages come
 * on the client's own channel (subscribed once, on the first wait, and kept), so a wait costs no SUBSCRIBE. The first
 * registration of a channel subscribes on the server and returns only after the server confirmed it. A message that
 * no registration claims (the client stopped waiting) is handed to the store, which passes the wake-up on to another
 * waiting client. Messages are dispatched on Lettuce's I/O thread. When Lettuce re-subscribes after a reconnect, every
 * registered wake-up runs, because releases published while the connection was down were lost.
 *
 * Sharded pub/sub (a Redis 7 Cluster): a shard channel is SSUBSCRIBEd on the pub/sub connection of the node that
 * serves its slot (Lettuce 6.5's Cluster pub/sub connection would send SSUBSCRIBE to its default node); a MOVED answer
 * refreshes the topology and tries again. When the slot moves, the old node unsubscribes us (SUNSUBSCRIBE): the channel
 * is subscribed on the new node and every waiter re-checks. When the command connection reconnects (standalone and
 * Sentinel), the pub/sub connection is replaced: after a Sentinel failover the old one may still be attached to the
 * demoted master, which no longer sees releases.
 */
/** The Lettuce connections of one Redis lock client, the script runner and the shared subscriptions. */
final class RedisConnections implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RedisConnections.class);

    private final @Nullable AbstractRedisClient ownedClient;
    private final StatefulConnection<String, String> connection;
    private final RedisClusterAsyncCommands<String, String> async;
    private final RedisKeyCommands<String, String> keyCommands;
    private final boolean cluster;
    private final Duration timeout;
    private final Supplier<CompletionStage<StatefulRedisPubSubConnection<String, String>>> pubSubFactory;
    private final ReentrantLock subscribeLock = new ReentrantLock();
    private final Map<String, Channel> channels = new ConcurrentHashMap<>();
    /** Lock name (its tag) -> the wake-ups registered for it, whatever channel their messages come on. */
    private final Map<String, Set<Registration>> names = new ConcurrentHashMap<>();

    private final AtomicLong wakeUpsReceived = new AtomicLong();
    private final AtomicLong wakeUpsUnclaimed = new AtomicLong();
    private volatile Consumer<String> unclaimed = name -> {};
    private volatile BiPredicate<String, String> grants = (name, grant) -> false;
    private final @Nullable AbstractRedisClient listenedClient;
    /** The Cluster client, for topology refreshes before re-subscribing sharded channels; null when standalone. */
    private volatile @Nullable RedisClusterClient clusterClient;
    /** Node pub/sub connections that carry our listener (sharded channels are subscribed on the slot's node). */
    private final Set<StatefulRedisPubSubConnection<String, String>> listenedNodes =
            java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());

    private final RedisConnectionStateListener reconnectListener = new RedisConnectionStateListener() {
        @Override
        public void onRedisConnected(RedisChannelHandler<?, ?> handler, SocketAddress address) {
            if (handler == connection && !closed) {
                // the command connection came back, maybe to a new master (Sentinel failover): move pub/sub there too
                CompletableFuture.runAsync(RedisConnections.this::renewPubSub);
            }
        }
    };
    private @Nullable StatefulRedisPubSubConnection<String, String> pubSub;
    private volatile boolean closed;

    private RedisConnections(
            @Nullable AbstractRedisClient ownedClient,
            @Nullable AbstractRedisClient listenedClient,
            StatefulConnection<String, String> connection,
            RedisClusterAsyncCommands<String, String> async,
            RedisKeyCommands<String, String> keyCommands,
            boolean cluster,
            Supplier<CompletionStage<StatefulRedisPubSubConnection<String, String>>> pubSubFactory) {
        this.ownedClient = ownedClient;
        this.connection = connection;
        this.async = async;
        this.keyCommands = keyCommands;
        this.cluster = cluster;
        this.timeout = connection.getTimeout();
        this.pubSubFactory = pubSubFactory;
        this.listenedClient = listenedClient;
        if (listenedClient != null) {
            listenedClient.addListener(reconnectListener);
        }
    }

    /** Connects to a standalone server or, for a {@code redis-sentinel://} URI, to the master Sentinel names. */
    static RedisConnections standalone(RedisClient client, @Nullable RedisURI uri, boolean owned) {
        StatefulRedisConnection<String, String> c;
        try {
            c = uri == null ? client.connect(StringCodec.UTF8) : client.connect(StringCodec.UTF8, uri);
        } catch (RuntimeException e) {
            if (owned) {
                shutdown(client);
            }
            throw e;
        }
        return new RedisConnections(
                owned ? client : null,
                client,
                c,
                c.async(),
                c.sync(),
                false,
                () -> uri != null
                        ? client.connectPubSubAsync(StringCodec.UTF8, uri)
                        // the client's default URI is private to it: connect on another thread, so that an interrupt
                        // of the waiting caller cannot break the connection attempt
                        : CompletableFuture.supplyAsync(() -> client.connectPubSub(StringCodec.UTF8)));
    }

    static RedisConnections cluster(RedisClusterClient client, boolean owned) {
        StatefulRedisClusterConnection<String, String> c;
        try {
            c = client.connect(StringCodec.UTF8);
        } catch (RuntimeException e) {
            if (owned) {
                shutdown(client);
            }
            throw e;
        }
        RedisConnections connections = new RedisConnections(
                owned ? client : null, null, c, c.async(), c.sync(), true, () -> client.connectPubSubAsync(
                                StringCodec.UTF8)
                        .thenApply(ps -> ps));
        connections.clusterClient = client;
        return connections;
    }

    /**
     * Whether the server has sharded pub/sub (Redis 7 or later: SSUBSCRIBE, SPUBLISH), from {@code INFO server} of the
     * node the command connection asks.
     */
    boolean hasShardedPubSub() {
        try {
            String info = await(async.info("server"));
            for (String line : info.split("\r?\n")) {
                if (line.startsWith("redis_version:")) {
                    String version = line.substring("redis_version:".length()).trim();
                    int dot = version.indexOf('.');
                    return Integer.parseInt(dot < 0 ? version : version.substring(0, dot)) >= 7;
                }
            }
        } catch (RuntimeException e) {
            log.debug("distlock: could not read the server version; classic pub/sub", e);
        }
        return false;
    }

    boolean isCluster() {
        return cluster;
    }

    RedisClusterAsyncCommands<String, String> async() {
        return async;
    }

    RedisKeyCommands<String, String> keyCommands() {
        return keyCommands;
    }

    Duration timeout() {
        return timeout;
    }

    /** Runs a script: EVALSHA, and EVAL when the server answers NOSCRIPT. Does not wait. */
    <T> CompletableFuture<T> eval(LuaScript script, ScriptOutputType type, String[] keys, String... args) {
        CompletableFuture<T> first = bounded(async.<T>evalsha(script.sha1(), type, keys, args));
        return first.exceptionallyCompose(e -> {
            Throwable cause = unwrap(e);
            if (isNoScript(cause)) {
                return bounded(async.<T>eval(script.source(), type, keys, args));
            }
            return CompletableFuture.failedFuture(cause);
        });
    }

    /** Runs a script and waits for its answer (without the extra completion stage of {@link #eval}). */
    <T> T call(LuaScript script, ScriptOutputType type, String[] keys, String... args) {
        return call(async, script, type, keys, args);
    }

    /** {@link #call(LuaScript, ScriptOutputType, String[], String...)} on the given commands (see {@link #grantCommands}). */
    <T> T call(
            RedisClusterAsyncCommands<String, String> on,
            LuaScript script,
            ScriptOutputType type,
            String[] keys,
            String... args) {
        try {
            return await(on.<T>evalsha(script.sha1(), type, keys, args));
        } catch (RuntimeException e) {
            if (isNoScript(e)) {
                return await(on.<T>eval(script.source(), type, keys, args));
            }
            throw e;
        }
    }

    /**
     * The commands on which a grant of {@code key} is written when it must then be WAITed for. {@code WAIT} counts the
     * replicas that have every write of the connection it is sent on; so the grant and the WAIT must share one
     * connection. Standalone (and Sentinel) that is the command connection. On a Cluster it is the connection to the
     * master that serves the key's slot in the client's current view, the one Lettuce routes that slot's writes over
     * too: a WAIT sent through the Cluster connection would go to whichever node Lettuce picks for a keyless command
     * and count nothing of this grant. A slot that moved in the meantime answers MOVED, which fails the attempt with
     * that cause; nothing is granted then.
     */
    RedisClusterAsyncCommands<String, String> grantCommands(String key) {
        if (!(async instanceof RedisAdvancedClusterAsyncCommands<String, String> clustered)) {
            return async;
        }
        StatefulRedisClusterConnection<String, String> c = clustered.getStatefulConnection();
        int slot = SlotHash.getSlot(key);
        RedisClusterNode master = c.getPartitions().getMasterBySlot(slot);
        if (master == null) {
            throw new DistributedLockException(
                    "no Cluster master serves slot " + slot + " of " + key,
                    new IllegalStateException("uncovered slot " + slot));
        }
        RedisURI uri = master.getUri();
        // awaited through thenApply: the pooled future itself must never be cancelled (await cancels on timeout), or
        // the node's shared connection would be poisoned for every later caller
        return await(c.getConnectionAsync(uri.getHost(), uri.getPort()).thenApply(StatefulRedisConnection::async));
    }

    private static boolean isNoScript(Throwable e) {
        if (e instanceof RedisNoScriptException) {
            return true;
        }
        String message = e.getMessage();
        return message != null && message.startsWith("NOSCRIPT");
    }

    /**
     * Waits for a command's answer within the connection's timeout. Not interruptible: the command is on the wire and
     * its outcome matters (an interrupt is kept for the caller).
     *
     * <p>The Lettuce clients this module makes itself arm no timer per command (see {@code RedisLockClient}); this wait
     * is what bounds a command instead, and, like Lettuce's timer, it cancels the command when the time is up: a command
     * not yet sent (the connection is down) is then never sent, and the late answer of one that was sent is read and
     * dropped. The wait itself sleeps without a timeout; {@link AwaitDeadlines} ends it, at most a few milliseconds
     * after the time is up. A command nobody waits for at once is {@link #bounded} instead.
     */
    <T> T await(CompletionStage<T> stage) {
        CompletableFuture<T> future = stage.toCompletableFuture();
        try {
            return AwaitDeadlines.SHARED.await(future, System.nanoTime() + timeout.toNanos());
        } catch (ExecutionException e) {
            Throwable cause = unwrap(e);
            // a bounded command's own time ran out, or Lettuce's timer's (a client handed in, or a Cluster)
            if (cause instanceof TimeoutException || cause instanceof RedisCommandTimeoutException) {
                throw noAnswer((Exception) cause);
            }
            throw rethrow(cause);
        } catch (TimeoutException e) {
            throw noAnswer(e); // AwaitDeadlines cancelled the command
        }
    }

    /**
     * Awaits a new connection of this client's own. {@link #await} cancels what it waits for when the time is up, which
     * does not stop a connection attempt; so it waits on a stage of its own, and a connection that comes after the
     * wait gave up is closed rather than leaked.
     */
    private <C extends StatefulConnection<?, ?>> C awaitConnection(CompletionStage<C> connecting) {
        CompletableFuture<C> connection = connecting.toCompletableFuture();
        try {
            return await(connection.thenApply(c -> c));
        } catch (RuntimeException e) {
            var unused = connection.thenAccept(StatefulConnection::closeAsync);
            throw e;
        }
    }

    private DistributedLockException noAnswer(Exception e) {
        return new DistributedLockException("Redis did not answer within " + timeout, e);
    }

    /**
     * A command that is not awaited at once (fire-and-forget, or one of several awaited in turn), made to fail by itself
     * with a {@link TimeoutException} once the connection's timeout has passed since it was issued, as Lettuce's
     * per-command timer would: a loop that awaits several of them then takes one timeout in all, not one each, and a
     * command not yet sent when its time is up is never sent.
     */
    <T> CompletableFuture<T> bounded(CompletionStage<T> command) {
        return command.toCompletableFuture().orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    static Throwable unwrap(Throwable e) {
        Throwable t = e;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    private static RuntimeException rethrow(Throwable cause) {
        if (cause instanceof RuntimeException r) {
            return r;
        }
        return new DistributedLockException("Redis command failed: " + cause, cause);
    }

    // ---------------------------------------------------------------- subscriptions

    /**
     * Called (on the I/O thread) with the message of a wake-up that no registration here claims: the client no longer
     * waits for that name, so it must pass the wake-up on. Must not block.
     */
    void onUnclaimed(Consumer<String> handler) {
        this.unclaimed = Objects.requireNonNull(handler, "handler");
    }

    /**
     * Registers {@code wakeUp} for wake-up messages that carry {@code name}, sent on {@code channel}; returns once the
     * server confirmed the channel's subscription (at once when it is subscribed already).
     *
     * @param keep the channel stays subscribed after its last registration closed: the client's own channel, shared
     *     by every name, subscribed once
     * @param sharded a shard channel (SSUBSCRIBE), subscribed on the Cluster node that serves its slot
     */
    Subscription subscribe(String channel, boolean keep, boolean sharded, String name, Runnable wakeUp) {
        Registration registration;
        subscribeLock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("the Redis connections are closed");
            }
            StatefulRedisPubSubConnection<String, String> ps = pubSub();
            Channel ch = channels.computeIfAbsent(channel, c -> new Channel(c, keep, sharded));
            if (!ch.confirmed) {
                try {
                    if (sharded) {
                        ssubscribe(ps, ch);
                    } else {
                        await(ps.async().subscribe(channel));
                    }
                } catch (RuntimeException e) {
                    if (ch.users == 0) {
                        channels.remove(channel, ch);
                    }
                    throw e;
                }
                ch.confirmed = true;
            }
            ch.users++;
            registration = new Registration(ch, name, wakeUp);
            names.computeIfAbsent(name, n -> ConcurrentHashMap.newKeySet()).add(registration);
        } finally {
            subscribeLock.unlock();
        }
        return registration;
    }

    private void unsubscribe(Registration registration) {
        subscribeLock.lock();
        try {
            Set<Registration> of = names.get(registration.name);
            if (of == null || !of.remove(registration)) {
                return;
            }
            if (of.isEmpty()) {
                names.remove(registration.name, of);
            }
            Channel ch = registration.channel;
            ch.users--;
            if (ch.users > 0 || ch.keep) {
                return;
            }
            channels.remove(ch.name, ch);
            StatefulRedisPubSubConnection<String, String> node = ch.node;
            if (ch.sharded && node != null && !closed) {
                bounded(node.async().sunsubscribe(ch.name)).exceptionally(e -> {
                    log.debug("distlock: unsubscribing from {} failed", ch.name, e);
                    return null;
                });
                return;
            }
            StatefulRedisPubSubConnection<String, String> ps = pubSub;
            if (ps != null && !closed) {
                // not awaited: commands on one connection stay in order, so a later subscribe is not overtaken
                bounded(ps.async().unsubscribe(ch.name)).exceptionally(e -> {
                    log.debug("distlock: unsubscribing from {} failed", ch.name, e);
                    return null;
                });
            }
        } finally {
            subscribeLock.unlock();
        }
    }

    /**
     * After the command connection reconnected: a Sentinel failover does not disconnect pub/sub clients of the
     * demoted master, so the pub/sub connection could stay there and hear nothing. Opens a fresh one (to wherever the
     * URI leads now), subscribes it to every channel, closes the old one, and wakes every waiter to re-check.
     */
    private void renewPubSub() {
        StatefulRedisPubSubConnection<String, String> old;
        subscribeLock.lock();
        try {
            old = pubSub;
            if (closed || old == null) {
                return;
            }
            pubSub = null;
            try {
                StatefulRedisPubSubConnection<String, String> fresh = pubSub();
                if (!channels.isEmpty()) {
                    await(fresh.async().subscribe(channels.keySet().toArray(String[]::new)));
                }
            } catch (RuntimeException e) {
                StatefulRedisPubSubConnection<String, String> half = pubSub;
                if (half != null) {
                    closeQuietly(half);
                }
                pubSub = old; // keep what we had; Lettuce reconnects it by itself
                old = null;
                log.warn("distlock: could not move the pub/sub connection after a reconnect", e);
            }
        } finally {
            subscribeLock.unlock();
        }
        if (old != null) {
            closeQuietly(old);
        }
        dispatchAll();
    }

    private StatefulRedisPubSubConnection<String, String> pubSub() {
        StatefulRedisPubSubConnection<String, String> ps = pubSub;
        if (ps == null) {
            // connected asynchronously and awaited uninterruptibly: an interrupted waiter must not break the client
            ps = awaitConnection(pubSubFactory.get());
            ps.addListener(listener);
            pubSub = ps;
        }
        return ps;
    }

    private final RedisPubSubAdapter<String, String> listener = new RedisPubSubAdapter<String, String>() {
        @Override
        public void message(String channel, String message) {
            dispatch(message);
        }

        @Override
        public void smessage(String channel, String message) {
            dispatch(message);
        }

        @Override
        public void subscribed(String channel, long count) {
            resubscribed(channel);
        }

        @Override
        public void ssubscribed(String channel, long count) {
            resubscribed(channel);
        }

        @Override
        public void sunsubscribed(String channel, long count) {
            Channel ch = channels.get(channel);
            if (ch != null && ch.sharded && !closed) {
                // not ours (we never unsubscribe a kept channel): the slot moved to another node, which must be told
                CompletableFuture.runAsync(() -> moveShardChannel(ch));
            }
        }
    };

    private void resubscribed(String channel) {
        Channel ch = channels.get(channel);
        if (ch != null && ch.subscribedEvents.incrementAndGet() > 1) {
            dispatchAll(); // a re-subscription after a reconnect: releases may have been missed
        }
    }

    /**
     * SSUBSCRIBE on the node that serves the channel's slot (Lettuce 6.5's Cluster pub/sub connection would send it to
     * its default node). A MOVED answer (stale topology) refreshes the topology and tries once more. Caller holds
     * subscribeLock.
     */
    private void ssubscribe(StatefulRedisPubSubConnection<String, String> ps, Channel ch) {
        if (!(ps instanceof StatefulRedisClusterPubSubConnection<String, String> cluster)) {
            await(ps.async().ssubscribe(ch.name));
            return;
        }
        for (int attempt = 1; ; attempt++) {
            RedisClusterNode owner = cluster.getPartitions().getPartitionBySlot(SlotHash.getSlot(ch.name));
            try {
                if (owner == null) {
                    throw new IllegalStateException("no Cluster node serves the slot of " + ch.name);
                }
                StatefulRedisPubSubConnection<String, String> node =
                        await(cluster.getConnectionAsync(owner.getNodeId()));
                if (listenedNodes.add(node)) {
                    node.addListener(listener);
                }
                StatefulRedisPubSubConnection<String, String> previous = ch.node;
                ch.node = node;
                await(node.async().ssubscribe(ch.name));
                if (previous != null && previous != node) {
                    var unused = bounded(previous.async().sunsubscribe(ch.name)); // best effort: it may still hold it
                }
                return;
            } catch (RuntimeException e) {
                if (attempt >= 3) {
                    throw e;
                }
                refreshTopology();
            }
        }
    }

    private void refreshTopology() {
        RedisClusterClient client = clusterClient;
        if (client != null) {
            try {
                client.refreshPartitions();
            } catch (RuntimeException e) {
                log.debug("distlock: refreshing the Cluster topology failed", e);
            }
        }
    }

    /** A shard channel's slot moved (the server unsubscribed us): subscribe on the new node, then wake everyone. */
    private void moveShardChannel(Channel ch) {
        subscribeLock.lock();
        try {
            StatefulRedisPubSubConnection<String, String> ps = pubSub;
            if (closed || ps == null || channels.get(ch.name) != ch) {
                return;
            }
            refreshTopology();
            ssubscribe(ps, ch);
        } catch (RuntimeException e) {
            log.warn(
                    "distlock: could not move {} to the node that serves its slot now; waiters poll at lease ends",
                    ch.name,
                    e);
        } finally {
            subscribeLock.unlock();
        }
        dispatchAll();
    }

    /**
     * Called (on the I/O thread) with a wake-up that carries a grant (the message is the name's tag followed by the
     * grant): answers true when the grant was taken, and the message is done with; false makes it a plain wake-up for
     * the tag. Must not block.
     */
    void onGrant(BiPredicate<String, String> handler) {
        this.grants = Objects.requireNonNull(handler, "handler");
    }

    /**
     * A wake-up message: the name's tag {@code <prefix>{...}} (whose first '}' ends it: the prefix and the encoded
     * name contain none), and after it the grant the release made to this client, if it made one. A grant is offered
     * first; otherwise the message runs the tag's registrations, or is passed on when there are none.
     */
    private void dispatch(String message) {
        wakeUpsReceived.incrementAndGet();
        String name = message;
        int end = message.indexOf('}');
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
        Set<Registration> of = names.get(name);
        boolean claimed = false;
        if (of != null) {
            for (Registration r : of) {
                claimed = true;
                run(r);
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

    private void dispatchAll() {
        for (Set<Registration> of : names.values()) {
            for (Registration r : of) {
                run(r);
            }
        }
    }

    private static void run(Registration r) {
        try {
            r.wakeUp.run();
        } catch (RuntimeException e) {
            log.warn("distlock: a wake-up for {} failed", r.name, e);
        }
    }

    /** Whether the client has a subscription on {@code channel}; for tests. */
    boolean subscribed(String channel) {
        return channels.containsKey(channel);
    }

    /** Whether a wake-up for {@code name} would be claimed: somebody of this client waits for it. */
    boolean listening(String name) {
        Set<Registration> of = names.get(name);
        return of != null && !of.isEmpty();
    }

    /** Wake-up messages received, and of those the ones nobody claimed (passed on); for tests. */
    long[] wakeUpCounts() {
        return new long[] {wakeUpsReceived.get(), wakeUpsUnclaimed.get()};
    }

    /** A subscribed channel; guarded by subscribeLock except the event counter. */
    private static final class Channel {
        final String name;
        final boolean keep;
        final boolean sharded;
        int users;
        boolean confirmed;
        /** The node connection a shard channel is subscribed on. */
        @Nullable
        StatefulRedisPubSubConnection<String, String> node;
        /** Subscribe confirmations seen; the first answers our SUBSCRIBE, later ones are re-subscriptions. */
        final AtomicInteger subscribedEvents = new AtomicInteger();

        Channel(String name, boolean keep, boolean sharded) {
            this.name = name;
            this.keep = keep;
            this.sharded = sharded;
        }
    }

    private final class Registration implements Subscription {
        final Channel channel;
        final String name;
        final Runnable wakeUp;
        private volatile boolean open = true;

        Registration(Channel channel, String name, Runnable wakeUp) {
            this.channel = channel;
            this.name = name;
            this.wakeUp = wakeUp;
        }

        @Override
        public void close() {
            if (!open) {
                return;
            }
            open = false;
            try {
                unsubscribe(this);
            } catch (RuntimeException e) {
                log.debug("distlock: closing a subscription failed", e);
            }
        }
    }

    // ---------------------------------------------------------------- life cycle

    @Override
    public void close() {
        subscribeLock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            channels.clear();
            names.clear();
            AbstractRedisClient listened = listenedClient;
            if (listened != null) {
                listened.removeListener(reconnectListener);
            }
        } finally {
            subscribeLock.unlock();
        }
        StatefulRedisPubSubConnection<String, String> ps = pubSub;
        if (ps != null) {
            closeQuietly(ps);
        }
        closeQuietly(connection);
        AbstractRedisClient owned = ownedClient;
        if (owned != null) {
            shutdown(owned);
        }
    }

    private static void closeQuietly(StatefulConnection<?, ?> c) {
        try {
            c.close();
        } catch (RuntimeException e) {
            log.debug("distlock: closing a Redis connection failed", e);
        }
    }

    static void shutdown(AbstractRedisClient client) {
        try {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        } catch (RuntimeException e) {
            log.debug("distlock: shutting down the Redis client failed", e);
        } finally {
            SharedResources.release(client);
        }
    }
}
