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
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * Reading
 *   inspect is one claim-inspect.lua: a latch's count, or a read-write lock's or semaphore's live holds (each with its
 *   permits, lease left and token) and waiters. list SCANs for the names' meta keys ('<tag>:claim') and latch keys
 *   with the prefix (SCAN is not atomic: a name may come and go while it runs), then inspects them in one pipelined
 *   batch.
 *
 * Forcing
 *   forceRelease ends every hold of the name, or every hold of one owner, and wakes the clients whose waiters can pass
 *   now, in one claim-force-release.lua; the owners learn of it at their next renewal or release. Latches have no holds.
 */
/** The operator's view of Redis read-write locks, semaphores and latches. */
final class RedisClaimAdmin {
    private final RedisConnections redis;
    private final KeyLayout layout;
    private final WakeChannels channels;

    RedisClaimAdmin(RedisConnections redis, KeyLayout layout, WakeChannels channels) {
        this.redis = redis;
        this.layout = layout;
        this.channels = channels;
    }

    Optional<LockInfo> inspect(LockKey key) {
        return info(key.name(), redis.commands().await(inspectAsync(key.name())));
    }

    private CompletableFuture<List<Object>> inspectAsync(String name) {
        return redis.commands()
                .eval(
                        LuaScript.CLAIM_INSPECT,
                        ScriptOutputType.MULTI,
                        KeyLayout.claimKeys(layout.tag(name), KeyLayout.LATCH));
    }

    /** The read-write locks, semaphores and latches whose names start with {@code prefix}, in name order. */
    List<LockInfo> list(String prefix, int limit) {
        TreeSet<String> names = new TreeSet<>();
        for (String suffix : List.of(KeyLayout.CLAIM, KeyLayout.LATCH)) {
            ScanIterator<String> scan = ScanIterator.scan(
                    redis.keyCommands(),
                    ScanArgs.Builder.matches(layout.keyPattern(prefix, suffix)).limit(1000));
            while (scan.hasNext()) {
                String name = layout.nameOfKey(scan.next(), suffix);
                if (name != null && name.startsWith(prefix)) {
                    names.add(name);
                }
            }
        }
        List<String> chosen = new ArrayList<>(names).subList(0, Math.min(names.size(), limit));
        List<CompletableFuture<List<Object>>> answers = new ArrayList<>(chosen.size());
        for (String name : chosen) {
            answers.add(inspectAsync(name));
        }
        List<LockInfo> infos = new ArrayList<>(chosen.size());
        for (int i = 0; i < chosen.size(); i++) {
            info(chosen.get(i), redis.commands().await(answers.get(i))).ifPresent(infos::add);
        }
        return infos;
    }

    /** Ends the holds of the name, whoever has them ({@code owner} null) or only {@code owner}'s. */
    Optional<LockInfo> forceRelease(LockKey key, @Nullable OwnerId owner) {
        String tag = layout.tag(key.name());
        String[] keys = KeyLayout.claimKeys(tag);
        String channel = KeyLayout.key(tag, KeyLayout.CLAIM_CHANNEL);
        CommandRunner commands = redis.commands();
        List<Object> answer = owner == null
                ? commands.call(
                        LuaScript.CLAIM_FORCE_RELEASE, ScriptOutputType.MULTI, keys, channels.publish(), channel)
                : commands.call(
                        LuaScript.CLAIM_FORCE_RELEASE,
                        ScriptOutputType.MULTI,
                        keys,
                        channels.publish(),
                        channel,
                        owner.value());
        return info(key.name(), answer);
    }

    /**
     * A claim-inspect.lua / claim-force-release.lua answer: {}, {'latch', count, ttl}, or {kind, size, waiters, then
     * member, permits, lease left, token per hold}.
     */
    private static Optional<LockInfo> info(String name, List<Object> answer) {
        if (answer.isEmpty()) {
            return Optional.empty();
        }
        String kind = String.valueOf(answer.get(0));
        if (kind.equals("latch")) {
            return Optional.of(LockInfo.ofLatch(
                    name, LuaScript.number(answer, 1), Duration.ofMillis(Math.max(0, LuaScript.number(answer, 2)))));
        }
        List<LockInfo.Holder> holders = new ArrayList<>();
        for (int i = 3; i + 3 < answer.size(); i += 4) {
            String member = String.valueOf(answer.get(i));
            holders.add(new LockInfo.Holder(
                    member.substring(1),
                    member.charAt(0) == 'x',
                    Math.toIntExact(LuaScript.number(answer, i + 1)),
                    Duration.ofMillis(Math.max(0, LuaScript.number(answer, i + 2))),
                    LuaScript.number(answer, i + 3)));
        }
        LockInfo.Kind k = kind.equals("sem") ? LockInfo.Kind.SEMAPHORE : LockInfo.Kind.READ_WRITE_LOCK;
        return Optional.of(LockInfo.ofHolders(name, k, holders, Math.toIntExact(LuaScript.number(answer, 2))));
    }
}
