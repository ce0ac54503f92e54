package io.distlock.redis;

import io.distlock.spi.CounterStore;
import io.distlock.spi.LockKey;
import io.distlock.spi.Subscription;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.util.List;

/*
 * Overview
 *
 * Data
 *   A latch is one hash '<tag>:latch': '#' holds the count, and every count-down id it has counted is a field of its
 *   own, so a retried countDown with the same id is counted once (HSETNX). Every change sets the hash's TTL to the
 *   latch expiry, so an abandoned latch leaves nothing behind; at zero the hash is deleted and the latch reads as absent.
 *
 * Wake-ups
 *   Awaiting clients subscribe to the latch's channel '<tag>:zero'; the count-down that reaches zero publishes one
 *   message on it, whatever the number of waiters and clients. A lost message costs the engine's re-check interval.
 *
 * Kinds
 *   A latch refuses a name in use as a read-write lock, a semaphore or a held lock (IllegalStateException), and the
 *   claim scripts refuse a name whose latch is counting.
 */
/** The {@link CounterStore} of the Redis store: count-down latches; see the overview comment in the source. */
final class RedisCounters implements CounterStore {
    private final RedisConnections redis;
    private final CommandRunner commands;
    private final KeyLayout layout;
    private final WakeChannels channels;
    private final boolean spin;

    RedisCounters(RedisConnections redis, KeyLayout layout, WakeChannels channels, boolean spin) {
        this.redis = redis;
        this.commands = redis.commands();
        this.layout = layout;
        this.channels = channels;
        this.spin = spin;
    }

    private static String[] keys(String tag) {
        return new String[] {
            KeyLayout.key(tag, KeyLayout.LATCH), KeyLayout.key(tag, KeyLayout.CLAIM), KeyLayout.key(tag, KeyLayout.HOLD)
        };
    }

    @Override
    public boolean trySetCount(LockKey key, long count, Duration expiry) {
        List<Object> answer = commands.call(
                LuaScript.LATCH_SET,
                ScriptOutputType.MULTI,
                keys(layout.tag(key.name())),
                Long.toString(count),
                RedisLockStore.millisText(expiry));
        return value(key, answer) == 1;
    }

    @Override
    public long countDown(LockKey key, String callId, Duration expiry) {
        String tag = layout.tag(key.name());
        List<Object> answer = commands.call(
                LuaScript.LATCH_COUNT_DOWN,
                ScriptOutputType.MULTI,
                keys(tag),
                callId,
                RedisLockStore.millisText(expiry),
                channels.publish(),
                KeyLayout.key(tag, KeyLayout.ZERO));
        return value(key, answer);
    }

    @Override
    public long count(LockKey key) {
        List<Object> answer =
                commands.call(LuaScript.LATCH_COUNT, ScriptOutputType.MULTI, keys(layout.tag(key.name())));
        return value(key, answer);
    }

    private static long value(LockKey key, List<Object> answer) {
        if (LuaScript.number(answer, 0) != 1) {
            throw RedisClaims.refused(key, "count-down latch", 0, answer);
        }
        return LuaScript.number(answer, 1);
    }

    @Override
    public Subscription watchZero(LockKey key, Runnable wakeUp) {
        if (spin) {
            return Subscription.none();
        }
        String channel = KeyLayout.key(layout.tag(key.name()), KeyLayout.ZERO);
        return redis.subscriptions().subscribe(channel, false, channels.sharded(), channel, wakeUp);
    }

    /** The store closes the connections; nothing of this part's own to close. */
    @Override
    public void close() {}
}
