package io.distlock.redis;

import io.distlock.LockInfo;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * Reading
 *   inspect is one lock-inspect.lua (hold, fence counter, fair-queue size, read together). list SCANs for hold keys of
 *   names with the prefix (SCAN is not atomic: a name may come and go while it runs), then inspects every name found
 *   in one pipelined batch; a name released in between is left out.
 *
 * Forcing
 *   forceRelease deletes the hold, whoever owns it or only when a given owner does, and wakes one waiting client, in
 *   one lock-force-release.lua. The fence counter stays, so the next holder still gets a greater token; the owner that
 *   lost its hold learns of it at its next renewal or release.
 */
/** The operator's view of the Redis locks: inspect, list, force-release; and whether a name is held. */
final class RedisLockAdmin {
    private final RedisConnections redis;
    private final KeyLayout layout;
    private final WakeChannels channels;

    RedisLockAdmin(RedisConnections redis, KeyLayout layout, WakeChannels channels) {
        this.redis = redis;
        this.layout = layout;
        this.channels = channels;
    }

    Optional<LockInfo> inspect(LockKey key) {
        return info(key.name(), redis.commands().await(inspectAsync(key.name())));
    }

    private CompletableFuture<List<Object>> inspectAsync(String name) {
        String tag = layout.tag(name);
        return redis.commands().eval(LuaScript.LOCK_INSPECT, ScriptOutputType.MULTI, new String[] {
            KeyLayout.key(tag, KeyLayout.HOLD),
            KeyLayout.key(tag, KeyLayout.FENCE),
            KeyLayout.key(tag, KeyLayout.WAITERS)
        });
    }

    List<LockInfo> list(String prefix, int limit) {
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
            info(names.get(i), redis.commands().await(answers.get(i))).ifPresent(infos::add);
        }
        return infos;
    }

    /** Whether somebody holds the name now (an owner, or a waiting client a release gave it to). */
    boolean held(LockKey key) {
        CommandRunner commands = redis.commands();
        Long n = commands.await(commands.async().exists(layout.keys(key.name()).hold));
        return n != null && n > 0;
    }

    /** Removes the hold of the name, whoever has it ({@code owner} null) or only when {@code owner} has it. */
    Optional<LockInfo> forceRelease(LockKey key, @Nullable OwnerId owner) {
        String tag = layout.tag(key.name());
        String[] keys = {
            KeyLayout.key(tag, KeyLayout.HOLD),
            KeyLayout.key(tag, KeyLayout.FENCE),
            KeyLayout.key(tag, KeyLayout.WAITERS),
            KeyLayout.key(tag, KeyLayout.QUEUE),
            KeyLayout.key(tag, KeyLayout.WAKE_ORDER),
            KeyLayout.key(tag, KeyLayout.WAKE_DEADLINES)
        };
        String prefix = channels.prefix(tag);
        List<Object> answer = owner == null
                ? redis.commands()
                        .call(
                                LuaScript.LOCK_FORCE_RELEASE,
                                ScriptOutputType.MULTI,
                                keys,
                                prefix,
                                channels.publish(),
                                tag)
                : redis.commands()
                        .call(
                                LuaScript.LOCK_FORCE_RELEASE,
                                ScriptOutputType.MULTI,
                                keys,
                                prefix,
                                channels.publish(),
                                tag,
                                owner.value());
        return info(key.name(), answer);
    }

    /** A lock-inspect.lua / lock-force-release.lua answer: {} or {owner, remainingLeaseMillis, token, waiters}. */
    private static Optional<LockInfo> info(String name, List<Object> answer) {
        if (answer.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new LockInfo(
                name,
                String.valueOf(answer.get(0)),
                Duration.ofMillis(Math.max(0, LuaScript.number(answer, 1))),
                LuaScript.number(answer, 2),
                (int) LuaScript.number(answer, 3)));
    }
}
