package io.distlock.redis;

import io.distlock.DistributedLockException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.protocol.CommandType;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/*
 * Overview
 *
 * Sending
 *   Every command goes through Lettuce's async API on the client's one command connection, so concurrent callers
 *   pipeline on it; a caller that needs the answer waits for its own future only.
 *
 * Deadlines
 *   Each command is bounded by the client's command timeout (see RedisConnections). One that is awaited at once is awaited with await, which
 *   sleeps without a timeout and leaves the deadline to AwaitDeadlines; one that is not (fire-and-forget, or one of
 *   several awaited in turn) is bounded: it fails by itself once the timeout has passed since it was issued. Either
 *   way the command is cancelled when its time is up, so one not yet sent (the connection is down) is never sent, and
 *   the late answer of one that was sent is read and dropped, as Lettuce's own per-command timer would do. A missed
 *   deadline is a DistributedLockException that names the timeout.
 *
 * Scripts
 *   A script runs with EVALSHA; a NOSCRIPT answer (server restarted, failed over, script cache flushed, a Cluster node
 *   that never saw the script) is answered with one EVAL of the source, which also caches it again on that server.
 *
 * Commands written twice
 *   When the connection breaks before a command's answer came, Lettuce writes the command again once it has
 *   reconnected. A release whose first write was applied then finds its hold gone and answers "not this owner's" about
 *   the hold it ended itself. callOwnerChecked counts the writes of its command (its arguments are encoded once per
 *   write) and answers such a "not found" that followed a second write as unknown, never as a lost hold.
 */
/** Sends commands and scripts on the command connection and waits for their answers within its timeout. */
final class CommandRunner {
    private final RedisClusterAsyncCommands<String, String> async;
    private final Duration timeout;

    CommandRunner(RedisClusterAsyncCommands<String, String> async, Duration timeout) {
        this.async = async;
        this.timeout = timeout;
    }

    RedisClusterAsyncCommands<String, String> async() {
        return async;
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

    /**
     * {@link #call(LuaScript, ScriptOutputType, String[], String...)} on the given commands (see {@link
     * RedisConnections#grantCommands}).
     */
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
     * Runs an owner-checked script (a release) and waits for its integer answer, where 0 means the owner's hold is not
     * there. A 0 that answers a command Lettuce wrote more than once (it writes again what was in flight when a
     * connection broke) may be about the hold the first write ended: it throws {@link DistributedLockException}, the
     * outcome unknown, rather than report the hold lost.
     */
    long callOwnerChecked(LuaScript script, String[] keys, String... args) {
        CountedScriptArgs sent = new CountedScriptArgs(script.sha1(), keys, args);
        Long answer;
        try {
            answer = await(dispatch(CommandType.EVALSHA, sent));
        } catch (RuntimeException e) {
            if (!isNoScript(e)) {
                throw e;
            }
            sent = new CountedScriptArgs(script.source(), keys, args);
            answer = await(dispatch(CommandType.EVAL, sent));
        }
        long a = answer == null ? 0 : answer;
        int writes = sent.writes();
        if (a == 0 && writes > 1) {
            throw new DistributedLockException(
                    "Redis answered that the hold was not there, but an earlier write of the same command may have"
                            + " ended it: whether this release took effect is unknown",
                    new IOException(
                            "the connection broke before the answer; Lettuce wrote the command " + writes + " times"));
        }
        return a;
    }

    private RedisFuture<Long> dispatch(CommandType type, CountedScriptArgs args) {
        return async.dispatch(type, new IntegerOutput<>(StringCodec.UTF8), args);
    }

    private static boolean isNoScript(Throwable e) {
        if (e instanceof RedisNoScriptException) {
            return true;
        }
        String message = e.getMessage();
        return message != null && message.startsWith("NOSCRIPT");
    }

    /**
     * Waits for a command's answer within the command timeout. Not interruptible: the command is on the wire and
     * its outcome matters (an interrupt is kept for the caller).
     *
     * <p>The Lettuce clients this module makes itself arm no timer per command (see {@code RedisLockClient}); this wait
     * is what bounds a command instead, and, like Lettuce's timer, it cancels the command when the time is up. The wait
     * itself sleeps without a timeout; {@link AwaitDeadlines} ends it, at most a few milliseconds after the time is up.
     * A command nobody waits for at once is {@link #bounded} instead.
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
     * Awaits a new connection. {@link #await} cancels what it waits for when the time is up, which does not stop a
     * connection attempt; so it waits on a stage of its own, and a connection that comes after the wait gave up is
     * closed rather than leaked.
     */
    <C extends StatefulConnection<?, ?>> C awaitConnection(CompletionStage<C> connecting) {
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
     * with a {@link TimeoutException} once the command timeout has passed since it was issued, as Lettuce's
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
}
