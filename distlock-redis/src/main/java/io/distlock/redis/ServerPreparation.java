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
 *   lets tokens go back. volatile-* may evict holds and latches (they have TTLs): an evicted hold is free for another
 *   client at once, while its owner believes in it until its next renewal finds it gone, so mutual exclusion breaks
 *   too (the fence counter survives, so tokens stay sound). Both are warnings; noeviction (and a policy Redis does not
 *   name, which the check leaves alone) is quiet. The check only warns: the client works on whatever policy it finds.
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

    /** Warns when the server may evict lock keys: every policy but noeviction may (see the overview). */
    static void checkEviction(String policy) {
        String p = policy.toLowerCase(Locale.ROOT);
        if (p.startsWith("allkeys")) {
            log.warn(
                    "distlock: Redis maxmemory-policy is '{}': under memory pressure Redis may evict lock holds,"
                            + " read-write lock and semaphore holds, latches, semaphore sizes and fence counters,"
                            + " which breaks mutual exclusion and lets fencing tokens go back."
                            + " Use noeviction for the locks' Redis.",
                    policy);
        } else if (p.startsWith("volatile")) {
            log.warn(
                    "distlock: Redis maxmemory-policy is '{}': under memory pressure Redis may evict lock holds"
                            + " and latches (they have a TTL): another client can then take a lock whose owner"
                            + " still believes it holds it, until the owner's next renewal finds it gone, and an"
                            + " evicted latch reads as absent. Fencing tokens stay sound."
                            + " Use noeviction for the locks' Redis.",
                    policy);
        }
    }
}
