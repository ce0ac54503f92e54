package io.distlock.redis;

import io.distlock.spi.OwnerId;
import io.distlock.spi.Subscription;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.cluster.pubsub.StatefulRedisClusterPubSubConnection;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.net.SocketAddress;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Connection
 *   One pub/sub connection per client, opened on the first subscription (connected asynchronously and awaited
 *   uninterruptibly, so an interrupted waiter cannot break it). On a Redis 7 Cluster each shard channel is
 *   subscribed on the pub/sub connection of the node that serves its slot instead (Lettuce 6.5's Cluster pub/sub
 *   connection would send SSUBSCRIBE to its default node); a MOVED answer refreshes the topology and tries again.
 *
 * Channels
 *   A wake-up message comes on the client's own channel (sharded: one per slot and client), subscribed once, on the
 *   first wait, and kept, so a wait costs no SUBSCRIBE. The first registration of a channel subscribes on the server
 *   and returns only after the server confirmed it. A registration adds a WakeUpDispatch target for its lock name;
 *   every message, on whatever channel, goes to WakeUpDispatch. A channel that is not kept is unsubscribed when its
 *   last registration closes, without waiting: commands on one connection stay in order, so a later subscribe is not
 *   overtaken.
 *
 * Failover and resharding
 *   When Lettuce re-subscribes after a reconnect, every registered wake-up runs, because releases published while the
 *   connection was down were lost. When the command connection reconnects (standalone and Sentinel), the pub/sub
 *   connection is replaced, subscribed to every channel, and every waiter re-checks: after a Sentinel failover the old
 *   one may still be attached to the demoted master, which no longer sees releases. When a shard channel's slot moves,
 *   the old node unsubscribes us (SUNSUBSCRIBE, never sent by us for a kept channel): the channel is subscribed on the
 *   new node and every waiter re-checks.
 *
 * Concurrency
 *   subscribeLock guards the channel table, the channels' counters and the pub/sub connection field; it is never taken
 *   on the I/O thread (moves run on a pool thread), and dispatch reads WakeUpDispatch without it.
 */
/** The pub/sub side of one Redis lock client: its wake-up channels, on the node where releases publish them. */
final class RedisSubscriptions {
    private static final Logger log = LoggerFactory.getLogger(RedisSubscriptions.class);

    private final CommandRunner commands;
    private final WakeUpDispatch dispatch;
    private final StatefulConnection<String, String> commandConnection;
    private final @Nullable AbstractRedisClient listenedClient;
    private final @Nullable RedisClusterClient clusterClient;
    private final Supplier<CompletionStage<StatefulRedisPubSubConnection<String, String>>> pubSubFactory;
    private final ReentrantLock subscribeLock = new ReentrantLock();
    private final Map<String, Channel> channels = new ConcurrentHashMap<>();
    /** Node pub/sub connections that carry our listener (sharded channels are subscribed on the slot's node). */
    private final Set<StatefulRedisPubSubConnection<String, String>> listenedNodes =
            Collections.newSetFromMap(new IdentityHashMap<>());

    private @Nullable StatefulRedisPubSubConnection<String, String> pubSub;
    private volatile boolean closed;

    private final RedisConnectionStateListener reconnectListener = new RedisConnectionStateListener() {
        @Override
        public void onRedisConnected(RedisChannelHandler<?, ?> handler, SocketAddress address) {
            if (handler == commandConnection && !closed) {
                // the command connection came back, maybe to a new master (Sentinel failover): move pub/sub there too
                CompletableFuture.runAsync(RedisSubscriptions.this::renewPubSub);
            }
        }
    };

    /**
     * @param commandConnection the client's command connection, whose reconnects move the pub/sub connection
     * @param listenedClient the client whose connection events are watched for that; null for none (a Cluster)
     * @param clusterClient the Cluster client, for topology refreshes before re-subscribing shard channels; null when
     *     standalone
     */
    RedisSubscriptions(
            CommandRunner commands,
            StatefulConnection<String, String> commandConnection,
            @Nullable AbstractRedisClient listenedClient,
            @Nullable RedisClusterClient clusterClient,
            Supplier<CompletionStage<StatefulRedisPubSubConnection<String, String>>> pubSubFactory) {
        this.commands = commands;
        this.dispatch = new WakeUpDispatch();
        this.commandConnection = commandConnection;
        this.listenedClient = listenedClient;
        this.clusterClient = clusterClient;
        this.pubSubFactory = pubSubFactory;
        if (listenedClient != null) {
            listenedClient.addListener(reconnectListener);
        }
    }

    WakeUpDispatch dispatch() {
        return dispatch;
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
        return subscribe(channel, keep, sharded, new WakeUpDispatch.Target(name, wakeUp));
    }

    /** As the five-argument form, with the wake-up already made a target (see {@link WakeUpDispatch.Target}). */
    Subscription subscribe(String channel, boolean keep, boolean sharded, WakeUpDispatch.Target target) {
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
                        commands.await(ps.async().subscribe(channel));
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
            registration = new Registration(ch, target);
            dispatch.add(registration.target);
        } finally {
            subscribeLock.unlock();
        }
        return registration;
    }

    private void unsubscribe(Registration registration) {
        subscribeLock.lock();
        try {
            if (!dispatch.remove(registration.target)) {
                return;
            }
            Channel ch = registration.channel;
            ch.users--;
            if (ch.users > 0 || ch.keep) {
                return;
            }
            channels.remove(ch.name, ch);
            StatefulRedisPubSubConnection<String, String> node = ch.node;
            if (ch.sharded && node != null && !closed) {
                commands.bounded(node.async().sunsubscribe(ch.name)).exceptionally(e -> {
                    log.debug("distlock: unsubscribing from {} failed", OwnerId.redact(ch.name), e);
                    return null;
                });
                return;
            }
            StatefulRedisPubSubConnection<String, String> ps = pubSub;
            if (ps != null && !closed) {
                // not awaited: commands on one connection stay in order, so a later subscribe is not overtaken
                commands.bounded(ps.async().unsubscribe(ch.name)).exceptionally(e -> {
                    log.debug("distlock: unsubscribing from {} failed", OwnerId.redact(ch.name), e);
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
                    commands.await(fresh.async().subscribe(channels.keySet().toArray(String[]::new)));
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
        dispatch.wakeAll();
    }

    /** The pub/sub connection, opened on first use. Caller holds subscribeLock. */
    private StatefulRedisPubSubConnection<String, String> pubSub() {
        StatefulRedisPubSubConnection<String, String> ps = pubSub;
        if (ps == null) {
            // connected asynchronously and awaited uninterruptibly: an interrupted waiter must not break the client
            ps = commands.awaitConnection(pubSubFactory.get());
            ps.addListener(listener);
            pubSub = ps;
        }
        return ps;
    }

    private final RedisPubSubAdapter<String, String> listener = new RedisPubSubAdapter<String, String>() {
        @Override
        public void message(String channel, String message) {
            dispatch.dispatch(message);
        }

        @Override
        public void smessage(String channel, String message) {
            dispatch.dispatch(message);
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
            dispatch.wakeAll(); // a re-subscription after a reconnect: releases may have been missed
        }
    }

    /**
     * SSUBSCRIBE on the node that serves the channel's slot (Lettuce 6.5's Cluster pub/sub connection would send it to
     * its default node). A MOVED answer (stale topology) refreshes the topology and tries once more. Caller holds
     * subscribeLock.
     */
    private void ssubscribe(StatefulRedisPubSubConnection<String, String> ps, Channel ch) {
        if (!(ps instanceof StatefulRedisClusterPubSubConnection<String, String> cluster)) {
            commands.await(ps.async().ssubscribe(ch.name));
            return;
        }
        for (int attempt = 1; ; attempt++) {
            RedisClusterNode owner = cluster.getPartitions().getPartitionBySlot(SlotHash.getSlot(ch.name));
            try {
                if (owner == null) {
                    throw new IllegalStateException("no Cluster node serves the slot of " + ch.name);
                }
                StatefulRedisPubSubConnection<String, String> node =
                        commands.await(cluster.getConnectionAsync(owner.getNodeId()));
                if (listenedNodes.add(node)) {
                    node.addListener(listener);
                }
                StatefulRedisPubSubConnection<String, String> previous = ch.node;
                ch.node = node;
                commands.await(node.async().ssubscribe(ch.name));
                if (previous != null && previous != node) {
                    // best effort: the old node may still hold it
                    var unused = commands.bounded(previous.async().sunsubscribe(ch.name));
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
                    OwnerId.redact(ch.name),
                    e);
        } finally {
            subscribeLock.unlock();
        }
        dispatch.wakeAll();
    }

    /** Whether the client has a subscription on {@code channel}; for tests. */
    boolean subscribed(String channel) {
        return channels.containsKey(channel);
    }

    /** Drops every channel and registration and closes the pub/sub connection. Idempotent. */
    void close() {
        subscribeLock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            channels.clear();
            dispatch.close();
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
    }

    static void closeQuietly(StatefulConnection<?, ?> c) {
        try {
            c.close();
        } catch (RuntimeException e) {
            log.debug("distlock: closing a Redis connection failed", e);
        }
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
        final WakeUpDispatch.Target target;
        private volatile boolean open = true;

        Registration(Channel channel, WakeUpDispatch.Target target) {
            this.channel = channel;
            this.target = target;
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
}
