package io.distlock.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Eviction
 *   The server's maxmemory-policy decides whether Redis may drop lock keys under memory pressure. allkeys-* may evict
 *   fence counters and semaphore sizes (which have no TTL) and holds of every kind, which breaks mutual exclusion and
 *   lets tokens go back: a warning. volatile-* may evict holds and latches only (they have TTLs), which their owners
 *   then find lost (a latch reads as absent): a note.
 *
 * Script cache
 *   Every script is loaded into the server's cache at start-up, so that no first call of an operation pays a NOSCRIPT
 *   round trip (on a Cluster Lettuce sends SCRIPT LOAD to every node).
 *
 * Cost and failures
 *   Both are sent together, one pipelined round trip. Failures are harmless: CONFIG may be disabled, and the EVALSHA
 *   fallback loads a script when it is missing.
 */
/** Prepares a Redis server for the lock client when it connects: checks its eviction policy, loads the scripts. */
final class ServerPreparation {
    private static final Logger log = LoggerFactory.getLogger(ServerPreparation.class);

    private ServerPreparation() {}

    static void prepare(CommandRunner commands) {
        CompletableFuture<Map<String, String>> config =
                commands.bounded(commands.async().configGet("maxmemory-policy"));
        List<CompletableFuture<String>> loads = new ArrayList<>();
        for (LuaScript script : LuaScript.ALL) {
            loads.add(commands.bounded(commands.async().scriptLoad(script.source())));
        }
        try {
            checkEviction(commands.await(config).getOrDefault("maxmemory-policy", ""));
        } catch (RuntimeException e) {
            log.debug("distlock: could not read maxmemory-policy (CONFIG may be disabled): {}", e.toString());
        }
        for (int i = 0; i < loads.size(); i++) {
            try {
                String sha = commands.await(loads.get(i));
                if (!LuaScript.ALL.get(i).sha1().equals(sha)) {
                    log.warn("distlock: the server digests {} as {}", LuaScript.ALL.get(i), sha);
                }
            } catch (RuntimeException e) {
                log.debug("distlock: SCRIPT LOAD of {} failed; EVALSHA falls back to EVAL", LuaScript.ALL.get(i), e);
            }
        }
    }

    /** Warns when the server may evict lock keys (the fence counter has no TTL, so only allkeys-* policies evict it). */
    private static void checkEviction(String policy) {
        if (policy.toLowerCase(Locale.ROOT).startsWith("allkeys")) {
            log.warn(
                    "distlock: Redis maxmemory-policy is '{}': under memory pressure Redis may evict lock holds,"
                            + " read-write lock and semaphore holds, latches, semaphore sizes and fence counters,"
                            + " which breaks mutual exclusion and lets fencing tokens go back."
                            + " Use noeviction or a volatile-* policy for the locks' Redis.",
                    policy);
        } else if (policy.toLowerCase(Locale.ROOT).startsWith("volatile")) {
            log.info(
                    "distlock: Redis maxmemory-policy is '{}': holds and latches (which have a TTL) may be evicted"
                            + " under memory pressure; owners then find their holds lost at the next renewal, and an"
                            + " evicted latch reads as absent",
                    policy);
        }
    }
}
