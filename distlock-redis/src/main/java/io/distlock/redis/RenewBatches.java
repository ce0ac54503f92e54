package io.distlock.redis;

import io.distlock.spi.HeldClaim;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.SlotHash;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/*
 * Overview
 *
 * Batches
 *   One watchdog tick renews every hold of a client. The holds are grouped by Cluster slot (a script's keys must share
 *   one; standalone they form one group) and each group is cut into scripts of at most HOLDS_PER_SCRIPT holds, so no
 *   script runs for long. Every script of a tick is sent before any answer is awaited: they pipeline on the one
 *   connection, so a tick costs one round trip per node however many holds and kinds (locks, read-write locks,
 *   semaphores) it renews.
 *
 * Answers
 *   Each script answers the 1-based positions of the holds in it that are gone. No hold counts as renewed unless every
 *   script answered; the first failure is thrown (with a few of the others), and the watchdog tries again next tick.
 */
/** The renewal scripts of one watchdog tick, sent together and awaited together. */
final class RenewBatches {
    static final int HOLDS_PER_SCRIPT = 1000;
    /** Failures of further scripts kept on the first one. */
    private static final int MAX_SUPPRESSED = 3;

    /** Adds one hold's keys and arguments to a renewal script. */
    interface HoldArgs {
        void add(String tag, HeldClaim hold, List<String> keys, List<String> args);
    }

    private final CommandRunner commands;
    private final KeyLayout layout;
    private final boolean cluster;
    private final List<List<HeldClaim>> batches = new ArrayList<>();
    private final List<CompletableFuture<List<Object>>> answers = new ArrayList<>();

    RenewBatches(CommandRunner commands, KeyLayout layout, boolean cluster) {
        this.commands = commands;
        this.layout = layout;
        this.cluster = cluster;
    }

    /** Sends the scripts that renew {@code holds} with {@code script}, whose first argument is the lease. */
    void send(LuaScript script, Collection<HeldClaim> holds, String leaseMillis, HoldArgs holdArgs) {
        Map<Integer, List<Map.Entry<String, HeldClaim>>> groups = new LinkedHashMap<>();
        int i = 0;
        for (HeldClaim h : holds) {
            String tag = layout.tag(h.key().name());
            int group = cluster ? SlotHash.getSlot(tag) : i++ / HOLDS_PER_SCRIPT;
            groups.computeIfAbsent(group, g -> new ArrayList<>()).add(Map.entry(tag, h));
        }
        for (List<Map.Entry<String, HeldClaim>> group : groups.values()) {
            for (int from = 0; from < group.size(); from += HOLDS_PER_SCRIPT) {
                List<Map.Entry<String, HeldClaim>> part =
                        group.subList(from, Math.min(group.size(), from + HOLDS_PER_SCRIPT));
                List<String> keys = new ArrayList<>();
                List<String> args = new ArrayList<>();
                args.add(leaseMillis);
                List<HeldClaim> batch = new ArrayList<>(part.size());
                for (Map.Entry<String, HeldClaim> e : part) {
                    holdArgs.add(e.getKey(), e.getValue(), keys, args);
                    batch.add(e.getValue());
                }
                batches.add(batch);
                answers.add(commands.eval(
                        script, ScriptOutputType.MULTI, keys.toArray(String[]::new), args.toArray(String[]::new)));
            }
        }
    }

    /** Awaits every script sent; returns the holds that are gone. */
    Set<HeldClaim> gone() {
        Set<HeldClaim> gone = new HashSet<>();
        RuntimeException failure = null;
        for (int b = 0; b < batches.size(); b++) {
            List<HeldClaim> batch = batches.get(b);
            try {
                List<Object> positions = commands.await(answers.get(b));
                for (Object p : positions) {
                    gone.add(batch.get((int) ((Long) p - 1)));
                }
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else if (failure.getSuppressed().length < MAX_SUPPRESSED) {
                    failure.addSuppressed(e); // a Cluster renewal can have thousands of batches: keep a few
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
        return gone;
    }
}
