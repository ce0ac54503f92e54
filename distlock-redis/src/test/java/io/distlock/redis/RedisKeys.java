package io.distlock.redis;

import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.sync.RedisKeyCommands;
import io.lettuce.core.api.sync.RedisScriptingCommands;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import java.util.ArrayList;
import java.util.List;

/** Test helpers that look at and change the keys of a lock behind the client's back. */
final class RedisKeys {
    private RedisKeys() {}

    static String holdKey(KeyLayout layout, String name) {
        return KeyLayout.key(layout.tag(name), KeyLayout.HOLD);
    }

    /** Deletes the hold key, as if the lease had run out; the fence counter stays. */
    static void expireHold(RedisKeyCommands<String, String> keys, KeyLayout layout, String name) {
        keys.del(holdKey(layout, name));
    }

    /**
     * Ends every read-write lock or semaphore hold of the name behind its owners' backs, as if their leases had run
     * out (what a sweep would do, without waking anybody); the fence counter stays.
     */
    static void expireClaimHolds(RedisScriptingCommands<String, String> scripts, KeyLayout layout, String name) {
        Long unused = scripts.eval(
                "redis.call('DEL', KEYS[2], KEYS[3]) redis.call('HDEL', KEYS[1], 'u', 'x')"
                        + " if redis.call('ZCARD', KEYS[4]) == 0 then redis.call('DEL', KEYS[1], KEYS[4], KEYS[5]) end"
                        + " return 0",
                ScriptOutputType.INTEGER,
                KeyLayout.claimKeys(layout.tag(name)));
    }

    /**
     * Every key of the name except what stays for ever (the fence counter, a semaphore's size), described for
     * assertion messages.
     */
    static List<String> residue(RedisKeyCommands<String, String> keys, KeyLayout layout, String name) {
        String fence = KeyLayout.key(layout.tag(name), KeyLayout.FENCE);
        String size = KeyLayout.key(layout.tag(name), KeyLayout.SIZE);
        List<String> found = new ArrayList<>();
        for (String key : scan(keys, layout.namePattern(name))) {
            if (!key.equals(fence) && !key.equals(size)) {
                // whether the key expires, not its remaining time, so two snapshots of an unchanged key are equal
                long pttl = keys.pttl(key);
                found.add(key + " (" + keys.type(key) + ", " + (pttl >= 0 ? "expires" : "no expiry") + ")");
            }
        }
        return found;
    }

    static List<String> scan(RedisKeyCommands<String, String> keys, String pattern) {
        List<String> found = new ArrayList<>();
        ScanArgs args = ScanArgs.Builder.matches(pattern).limit(1000);
        ScanCursor cursor = ScanCursor.INITIAL;
        do {
            KeyScanCursor<String> page = keys instanceof RedisAdvancedClusterCommands<String, String> cluster
                    ? cluster.scan(cursor, args)
                    : keys.scan(cursor, args);
            found.addAll(page.getKeys());
            cursor = page;
        } while (!cursor.isFinished());
        return found;
    }
}
