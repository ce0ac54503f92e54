package io.distlock.redis;

import io.distlock.DistributedLockException;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisKeyCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Topology
 *   A lock client talks to a standalone server, to the master a Sentinel set names (a redis-sentinel:// URI; Lettuce
 *   follows failovers), or to a Cluster (Lettuce routes each command by its key's slot and follows the topology). It
 *   has one command connection, shared by every lock and thread, and one pub/sub side that connects on the first wait.
 *
 * The parts
 *   CommandRunner sends commands and scripts on the command connection and bounds each by the command timeout.
 *
 * Command timeout
 *   One bound for every command of the client: the builder's choice, made from the timeout the connection came with
 *   (its URI's). It is set on the command connection and on every pub/sub connection, so that Lettuce's own timers
 *   and its synchronous API (SCAN) use it too, and CommandRunner bounds every wait with it.
 *   RedisSubscriptions keeps the wake-up channels subscribed where releases publish them, across reconnects,
 *   failovers and slot moves; WakeUpDispatch routes their messages.
 *
 * Grants and replicas
 *   WAIT counts the replicas that have every write of the connection it is sent on, so a grant that must be WAITed for
 *   is written on the connection to the master that serves its slot (grantCommands).
 *
 * Life cycle
 *   close closes the pub/sub side, then the command connection, then the Lettuce client if this class made it; a
 *   client handed in by the caller stays open. Lettuce clients made by this module run on SharedResources.
 */
/** The Lettuce connections of one Redis lock client: the command connection, its runner, the subscriptions. */
final class RedisConnections implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RedisConnections.class);

    private final @Nullable AbstractRedisClient ownedClient;
    private final StatefulConnection<String, String> connection;
    private final CommandRunner commands;
    private final RedisKeyCommands<String, String> keyCommands;
    private final boolean cluster;
    private final RedisSubscriptions subscriptions;
    private final AtomicBoolean closed = new AtomicBoolean();

    private RedisConnections(
            @Nullable AbstractRedisClient ownedClient,
            @Nullable AbstractRedisClient listenedClient,
            @Nullable RedisClusterClient clusterClient,
            StatefulConnection<String, String> connection,
            RedisClusterAsyncCommands<String, String> async,
            RedisKeyCommands<String, String> keyCommands,
            Supplier<CompletionStage<StatefulRedisPubSubConnection<String, String>>> pubSubFactory,
            UnaryOperator<Duration> commandTimeout) {
        this.ownedClient = ownedClient;
        this.connection = connection;
        Duration timeout = commandTimeout.apply(connection.getTimeout());
        connection.setTimeout(timeout);
        this.commands = new CommandRunner(async, timeout);
        this.keyCommands = keyCommands;
        this.cluster = clusterClient != null;
        Supplier<CompletionStage<StatefulRedisPubSubConnection<String, String>>> bounded =
                () -> pubSubFactory.get().thenApply(ps -> {
                    ps.setTimeout(timeout);
                    return ps;
                });
        this.subscriptions = new RedisSubscriptions(commands, connection, listenedClient, clusterClient, bounded);
    }

    /**
     * Connects to a standalone server or, for a {@code redis-sentinel://} URI, to the master Sentinel names; commands are
     * bounded by the connection's own timeout.
     */
    static RedisConnections standalone(RedisClient client, @Nullable RedisURI uri, boolean owned) {
        return standalone(client, uri, owned, UnaryOperator.identity());
    }

    /**
     * As {@link #standalone(RedisClient, RedisURI, boolean)}, with the command timeout that {@code commandTimeout} makes
     * from the connection's own.
     */
    static RedisConnections standalone(
            RedisClient client, @Nullable RedisURI uri, boolean owned, UnaryOperator<Duration> commandTimeout) {
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
                null,
                c,
                c.async(),
                c.sync(),
                () -> uri != null
                        ? client.connectPubSubAsync(StringCodec.UTF8, uri)
                        // the client's default URI is private to it: connect on another thread, so that an interrupt
                        // of the waiting caller cannot break the connection attempt
                        : CompletableFuture.supplyAsync(() -> client.connectPubSub(StringCodec.UTF8)),
                commandTimeout);
    }

    /** Connects to a Cluster, with the command timeout that {@code commandTimeout} makes from the connection's own. */
    static RedisConnections cluster(RedisClusterClient client, boolean owned, UnaryOperator<Duration> commandTimeout) {
        StatefulRedisClusterConnection<String, String> c;
        try {
            c = client.connect(StringCodec.UTF8);
        } catch (RuntimeException e) {
            if (owned) {
                shutdown(client);
            }
            throw e;
        }
        return new RedisConnections(
                owned ? client : null,
                null,
                client,
                c,
                c.async(),
                c.sync(),
                () -> client.connectPubSubAsync(StringCodec.UTF8).thenApply(ps -> ps),
                commandTimeout);
    }

    /**
     * Whether the server has sharded pub/sub (Redis 7 or later: SSUBSCRIBE, SPUBLISH), from {@code INFO server} of the
     * node the command connection asks.
     */
    boolean hasShardedPubSub() {
        try {
            String info = commands.await(commands.async().info("server"));
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

    CommandRunner commands() {
        return commands;
    }

    RedisKeyCommands<String, String> keyCommands() {
        return keyCommands;
    }

    RedisSubscriptions subscriptions() {
        return subscriptions;
    }

    Duration timeout() {
        return commands.timeout();
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
        RedisClusterAsyncCommands<String, String> async = commands.async();
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
        return commands.await(
                c.getConnectionAsync(uri.getHost(), uri.getPort()).thenApply(StatefulRedisConnection::async));
    }

    /** Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        subscriptions.close();
        RedisSubscriptions.closeQuietly(connection);
        AbstractRedisClient owned = ownedClient;
        if (owned != null) {
            shutdown(owned);
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
