package io.distlock.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;

/**
 * One independent Redis node of a {@link RedLockClient}: a command connection and a pub/sub connection on a Lettuce
 * client of its own.
 *
 * <p>Commands to a node that is down fail at once (Lettuce rejects commands while disconnected) instead of queuing
 * for the reconnect, and every command is bounded by the node timeout, so one dead node never slows a round down
 * beyond that timeout. A node that was down when the client started is connected on first use after it came back
 * (at most one attempt per second); Lettuce reconnects, and re-subscribes, a connection that was lost.
 */
final class RedLockNode implements AutoCloseable {
    private static final long RECONNECT_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final RedisURI uri;
    private final RedisClient client;
    private final String channel;
    private final BiConsumer<String, String> onMessage;
    private final ReentrantLock connecting = new ReentrantLock();
    private volatile @Nullable StatefulRedisConnection<String, String> connection;
    private volatile @Nullable StatefulRedisPubSubConnection<String, String> pubSub;
    private volatile long lastAttempt;
    private volatile boolean closed;

    RedLockNode(RedisURI uri, Duration timeout, String channel, BiConsumer<String, String> onMessage) {
        this.uri = uri;
        this.channel = channel;
        this.onMessage = onMessage;
        this.client = SharedResources.newClient(r -> RedisClient.create(r, uri));
        client.setOptions(ClientOptions.builder()
                .autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.enabled(timeout))
                .build());
        uri.setTimeout(timeout);
        this.lastAttempt = System.nanoTime() - RECONNECT_INTERVAL_NANOS;
    }

    /** Connects now if not connected; false if the node cannot be reached. */
    boolean connect() {
        return commands() != null;
    }

    /** The node's commands, connecting first if needed; null while the node cannot be reached. */
    private @Nullable RedisAsyncCommands<String, String> commands() {
        StatefulRedisConnection<String, String> c = connection;
        if (c != null) {
            return c.async();
        }
        if (closed || System.nanoTime() - lastAttempt < RECONNECT_INTERVAL_NANOS || !connecting.tryLock()) {
            return null;
        }
        try {
            lastAttempt = System.nanoTime();
            StatefulRedisConnection<String, String> made = client.connect();
            StatefulRedisPubSubConnection<String, String> sub = client.connectPubSub();
            sub.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String ch, String message) {
                    onMessage.accept(ch, message);
                }
            });
            sub.sync().subscribe(channel);
            pubSub = sub;
            connection = made;
            if (closed) {
                closeConnections();
            }
            return made.async();
        } catch (RuntimeException e) {
            return null;
        } finally {
            connecting.unlock();
        }
    }

    /** Runs a script (EVALSHA, then EVAL when the node does not know it); fails at once when the node is down. */
    <T> CompletableFuture<T> eval(LuaScript script, ScriptOutputType type, String[] keys, String... args) {
        RedisAsyncCommands<String, String> c = commands();
        if (c == null) {
            return CompletableFuture.failedFuture(new IllegalStateException("not connected to " + this));
        }
        CompletableFuture<T> first =
                c.<T>evalsha(script.sha1(), type, keys, args).toCompletableFuture();
        return first.handle((value, error) -> {
                    if (error == null) {
                        return CompletableFuture.completedFuture(value);
                    }
                    if (unwrap(error) instanceof RedisNoScriptException) {
                        return c.<T>eval(script.source(), type, keys, args).toCompletableFuture();
                    }
                    return CompletableFuture.<T>failedFuture(unwrap(error));
                })
                .thenCompose(f -> f);
    }

    /** What {@link #evalOwnerChecked} answers for "not there" after the command was written more than once. */
    static final long UNKNOWN = -1;

    /**
     * Runs an owner-checked script (a release) whose integer answer is 1 (ended) or 0 (not there), like {@link #eval}.
     * A 0 that answers a command Lettuce wrote more than once (see {@link CountedScriptArgs}) becomes {@link #UNKNOWN}:
     * the first write may have ended the hold.
     */
    CompletableFuture<Long> evalOwnerChecked(LuaScript script, String[] keys, String... args) {
        RedisAsyncCommands<String, String> c = commands();
        if (c == null) {
            return CompletableFuture.failedFuture(new IllegalStateException("not connected to " + this));
        }
        CountedScriptArgs bySha = new CountedScriptArgs(script.sha1(), keys, args);
        return dispatch(c, CommandType.EVALSHA, bySha)
                .handle((value, error) -> {
                    if (error == null) {
                        return CompletableFuture.completedFuture(ownerChecked(value, bySha));
                    }
                    if (unwrap(error) instanceof RedisNoScriptException) {
                        CountedScriptArgs bySource = new CountedScriptArgs(script.source(), keys, args);
                        return dispatch(c, CommandType.EVAL, bySource).thenApply(v -> ownerChecked(v, bySource));
                    }
                    return CompletableFuture.<Long>failedFuture(unwrap(error));
                })
                .thenCompose(f -> f);
    }

    private static CompletableFuture<Long> dispatch(
            RedisAsyncCommands<String, String> c, CommandType type, CountedScriptArgs args) {
        return c.dispatch(type, new IntegerOutput<>(StringCodec.UTF8), args).toCompletableFuture();
    }

    private static long ownerChecked(@Nullable Long answer, CountedScriptArgs sent) {
        long a = answer == null ? 0 : answer;
        return a == 0 && sent.writes() > 1 ? UNKNOWN : a;
    }

    /** Runs any command of the node's connection; fails at once when the node is down. */
    <T> CompletableFuture<T> call(java.util.function.Function<RedisAsyncCommands<String, String>, ?> command) {
        RedisAsyncCommands<String, String> c = commands();
        if (c == null) {
            return CompletableFuture.failedFuture(new IllegalStateException("not connected to " + this));
        }
        @SuppressWarnings("unchecked")
        CompletableFuture<T> f = ((io.lettuce.core.RedisFuture<T>) command.apply(c)).toCompletableFuture();
        return f;
    }

    /** The answer of {@code future} within {@code deadline} (a {@link System#nanoTime()} value), or the failure. */
    static <T> Answer<T> await(CompletableFuture<T> future, long deadline) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    long left = deadline - System.nanoTime();
                    return new Answer<>(future.get(Math.max(0, left), TimeUnit.NANOSECONDS), null);
                } catch (TimeoutException e) {
                    future.cancel(false);
                    return new Answer<>(null, e);
                } catch (ExecutionException e) {
                    return new Answer<>(null, unwrap(e));
                } catch (InterruptedException e) {
                    interrupted = true; // a round is bounded by the node timeout: finish it, keep the flag
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** What one node answered: a value, or why it did not. */
    record Answer<T>(@Nullable T value, @Nullable Throwable error) {}

    static Throwable unwrap(Throwable e) {
        Throwable t = e;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    @Override
    public void close() {
        closed = true;
        connecting.lock();
        try {
            closeConnections();
        } finally {
            connecting.unlock();
        }
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        SharedResources.release(client);
    }

    private void closeConnections() {
        StatefulRedisConnection<String, String> c = connection;
        StatefulRedisPubSubConnection<String, String> s = pubSub;
        connection = null;
        pubSub = null;
        if (c != null) {
            c.close();
        }
        if (s != null) {
            s.close();
        }
    }

    @Override
    public String toString() {
        return uri.getHost() + ":" + uri.getPort();
    }
}
