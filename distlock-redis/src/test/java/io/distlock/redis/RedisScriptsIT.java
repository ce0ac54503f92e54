package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.testkit.server.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Each Lua script called directly against a real redis-server: owner checks, expiry, missing keys, NOSCRIPT. */
class RedisScriptsIT {
    @RegisterExtension
    static final RedisServer redis = RedisServer.onFreePort();

    private static final KeyLayout layout = new KeyLayout("scripts-it:");
    private static RedisConnections connections;
    private static RedisClient lettuce;
    private static StatefulRedisConnection<String, String> connection;
    private static RedisCommands<String, String> sync;

    @BeforeAll
    static void connect() {
        connections = RedisConnections.standalone(RedisClient.create(), RedisURI.create(redis.uri()), true);
        lettuce = RedisClient.create(redis.uri());
        connection = lettuce.connect();
        sync = connection.sync();
    }

    @AfterAll
    static void disconnect() {
        connections.close();
        connection.close();
        lettuce.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }

    // ---------------------------------------------------------------- helpers

    private record Keys(String hold, String fence, String queue, String waiters, String channel) {
        static Keys of(String name) {
            String tag = layout.tag(name);
            return new Keys(
                    KeyLayout.key(tag, KeyLayout.HOLD),
                    KeyLayout.key(tag, KeyLayout.FENCE),
                    KeyLayout.key(tag, KeyLayout.QUEUE),
                    KeyLayout.key(tag, KeyLayout.WAITERS),
                    KeyLayout.key(tag, KeyLayout.CHANNEL));
        }
    }

    /** The spare tokens the tests' attempts ask for. */
    private static final int SPARE = 16;

    private static String name() {
        return "script-" + UUID.randomUUID();
    }

    private static List<Object> acquire(Keys k, String owner, long leaseMillis, boolean queue, long waiterTimeout) {
        if (!queue) {
            // a plain attempt answers one integer; the store reads it as this table (checked on its own below)
            return RedisLockStore.expandPlainAnswer(
                    connections
                            .commands()
                            .call(
                                    LuaScript.LOCK_ACQUIRE,
                                    ScriptOutputType.INTEGER,
                                    new String[] {k.hold, k.fence},
                                    owner,
                                    Long.toString(leaseMillis),
                                    Integer.toString(SPARE)),
                    SPARE);
        }
        return connections
                .commands()
                .call(
                        LuaScript.LOCK_ACQUIRE_QUEUED,
                        ScriptOutputType.MULTI,
                        new String[] {k.hold, k.fence, k.queue, k.waiters},
                        owner,
                        Long.toString(leaseMillis),
                        Long.toString(waiterTimeout),
                        k.channel,
                        "PUBLISH");
    }

    private static long release(LuaScript script, Keys k, String owner) {
        Long r = connections
                .commands()
                .call(script, ScriptOutputType.INTEGER, new String[] {k.hold}, owner, k.channel, "PUBLISH");
        return r == null ? -1 : r;
    }

    private static List<String> keysOf(String name) {
        return RedisKeys.scan(sync, layout.namePattern(name));
    }

    // ---------------------------------------------------------------- acquire

    /** A grant reserves the spare tokens asked after its own for local successions: the counter moves on by 17. */
    @Test
    void acquire_free_grantsWithTokenAndLease() {
        Keys k = Keys.of(name());
        assertThat(acquire(k, "a", 10_000, false, 5000)).containsExactly(1L, 1L, 16L);
        assertThat(sync.get(k.hold)).isEqualTo("a");
        assertThat(sync.pttl(k.hold)).isBetween(1L, 10_000L);
        assertThat(sync.ttl(k.fence)).as("fence never expires").isEqualTo(-1L);
    }

    /** A plain attempt's answer on the wire: the token alone, or minus the remaining lease (cheaper than a table). */
    @Test
    void acquire_plain_answersOneInteger_tokenOrMinusTheRemainingLease() {
        Keys k = Keys.of(name());
        String[] keys = {k.hold, k.fence};
        List<Object> granted =
                connections.commands().call(LuaScript.LOCK_ACQUIRE, ScriptOutputType.MULTI, keys, "a", "10000", "16");
        assertThat(granted).containsExactly(1L);
        List<Object> busy =
                connections.commands().call(LuaScript.LOCK_ACQUIRE, ScriptOutputType.MULTI, keys, "b", "10000", "16");
        assertThat(busy).hasSize(1);
        assertThat((Long) busy.get(0)).isBetween(-10_000L, -1L);
        assertThat(sync.get(k.fence)).as("the grant reserved 16 spare tokens").isEqualTo("17");
    }

    @Test
    void acquire_heldByOther_busyWithRemainingLease_changesNothing() {
        Keys k = Keys.of(name());
        acquire(k, "a", 10_000, false, 5000);
        List<Object> busy = acquire(k, "b", 10_000, false, 5000);
        assertThat(busy.get(0)).isEqualTo(0L);
        assertThat((Long) busy.get(1)).isBetween(1L, 10_000L);
        assertThat(sync.get(k.hold)).isEqualTo("a");
        assertThat(sync.get(k.fence)).isEqualTo("17");
        assertThat(sync.exists(k.queue, k.waiters))
                .as("a plain attempt leaves nothing")
                .isZero();
    }

    @Test
    void acquire_afterExpiry_grantsGreaterToken_fenceSurvivesExpiry() throws Exception {
        Keys k = Keys.of(name());
        assertThat(acquire(k, "a", 50, false, 5000)).containsExactly(1L, 1L, 16L);
        Thread.sleep(120);
        assertThat(sync.exists(k.hold)).as("hold expired").isZero();
        assertThat(sync.get(k.fence))
                .as("fence counter survives the hold's expiry")
                .isEqualTo("17");
        assertThat(acquire(k, "b", 10_000, false, 5000)).containsExactly(1L, 18L, 16L);
    }

    /** An attempt that arrives after a hand-off already gave its owner the lock must not grant a second token. */
    @Test
    void acquire_sameOwnerWhileHolding_busy_changesNothing() {
        Keys k = Keys.of(name());
        acquire(k, "a", 10_000, false, 5000);
        assertThat(acquire(k, "a", 10_000, false, 5000).get(0)).isEqualTo(0L);
        assertThat(acquire(k, "a", 10_000, true, 5000).get(0)).isEqualTo(0L);
        assertThat(sync.get(k.fence)).isEqualTo("17");
        assertThat(sync.get(k.hold)).isEqualTo("a");
    }

    // ---------------------------------------------------------------- release

    @Test
    void release_owner_deletesHold_keepsFence() {
        Keys k = Keys.of(name());
        acquire(k, "a", 10_000, false, 5000);
        assertThat(release(LuaScript.LOCK_RELEASE, k, "a")).isEqualTo(1L);
        assertThat(sync.exists(k.hold)).isZero();
        assertThat(sync.get(k.fence)).isEqualTo("17");
    }

    @Test
    void release_wrongOwner_changesNothing() {
        Keys k = Keys.of(name());
        acquire(k, "a", 10_000, false, 5000);
        long ttlBefore = sync.pttl(k.hold);
        assertThat(release(LuaScript.LOCK_RELEASE, k, "b")).isZero();
        assertThat(sync.get(k.hold)).isEqualTo("a");
        assertThat(sync.pttl(k.hold)).isBetween(1L, ttlBefore);
    }

    @Test
    void release_expiredKey_returnsZero_leavesNothing() throws Exception {
        String name = name();
        Keys k = Keys.of(name);
        acquire(k, "a", 30, false, 5000);
        Thread.sleep(80);
        assertThat(release(LuaScript.LOCK_RELEASE, k, "a")).isZero();
        assertThat(keysOf(name)).containsExactly(k.fence);
    }

    private static long leanRelease(Keys k, String name, String owner) {
        Long r = connections
                .commands()
                .call(
                        LuaScript.LOCK_RELEASE_LEAN,
                        ScriptOutputType.INTEGER,
                        new String[] {k.hold, k.queue, KeyLayout.key(layout.tag(name), KeyLayout.WAKE_ORDER)},
                        owner);
        return r == null ? -1 : r;
    }

    @Test
    void leanRelease_owner_nobodyWaiting_deletesHold_keepsFence() {
        String name = name();
        Keys k = Keys.of(name);
        acquire(k, "a", 10_000, false, 5000);
        assertThat(leanRelease(k, name, "b")).as("not the owner").isZero();
        assertThat(sync.get(k.hold)).isEqualTo("a");
        assertThat(leanRelease(k, name, "a")).isEqualTo(1L);
        assertThat(sync.exists(k.hold)).isZero();
        assertThat(sync.get(k.fence)).isEqualTo("17");
        assertThat(leanRelease(k, name, "a")).as("released already").isZero();
    }

    /** A waiting client (fair queue or waiting-client entry): the lean release changes nothing and answers 2. */
    @Test
    void leanRelease_aClientWaits_changesNothing_answersTwo() {
        String name = name();
        Keys k = Keys.of(name);
        String order = KeyLayout.key(layout.tag(name), KeyLayout.WAKE_ORDER);
        acquire(k, "a", 10_000, false, 5000);
        sync.zadd(order, 1, "other:w1");
        assertThat(leanRelease(k, name, "a")).isEqualTo(2L);
        assertThat(sync.get(k.hold)).isEqualTo("a");
        assertThat(sync.pttl(k.hold)).isBetween(1L, 10_000L);
        assertThat(sync.zrange(order, 0, -1)).containsExactly("other:w1");
        sync.del(order);
        sync.rpush(k.queue, "other:t1");
        assertThat(leanRelease(k, name, "a")).isEqualTo(2L);
        assertThat(sync.get(k.hold)).isEqualTo("a");
        assertThat(sync.lrange(k.queue, 0, -1)).containsExactly("other:t1");
        sync.del(k.queue);
        assertThat(leanRelease(k, name, "a")).isEqualTo(1L);
        assertThat(keysOf(name)).containsExactly(k.fence);
    }

    /** Seed 000: a release that runs HINCRBY owner -1 unchecked leaves a '-1' hash without TTL behind a missing key. */
    @Test
    void release_missingKey_leavesNoGarbage() {
        assertReleaseOfMissingKeyLeavesNothing(LuaScript.LOCK_RELEASE);
    }

    /** The check above fails on the seed's approach: it is not a test that cannot fail. */
    @Test
    void release_missingKey_seedHincrbyApproach_isCaught() {
        LuaScript seedStyle = new LuaScript(
                "seed-style-release.lua",
                // the seed's shape: decrement the caller's count unchecked, delete only when it reaches exactly zero
                "local n = redis.call('HINCRBY', KEYS[1], ARGV[1], -1)\n"
                        + "if n == 0 then redis.call('DEL', KEYS[1]) end\n"
                        + "return 0\n",
                "");
        LuaScript runnable = new LuaScript(seedStyle.name(), seedStyle.source(), sync.scriptLoad(seedStyle.source()));
        assertThatThrownBy(() -> assertReleaseOfMissingKeyLeavesNothing(runnable))
                .isInstanceOf(AssertionError.class);
    }

    private static void assertReleaseOfMissingKeyLeavesNothing(LuaScript script) {
        String name = name();
        Keys k = Keys.of(name);
        assertThat(release(script, k, "a")).isLessThanOrEqualTo(0L);
        assertThat(release(script, k, "a")).isLessThanOrEqualTo(0L);
        assertThat(keysOf(name)).as("keys after releasing a missing lock twice").isEmpty();
        // and the next acquirer is not blocked by anything the releases wrote
        assertThat(acquire(k, "b", 10_000, false, 5000).get(0)).isEqualTo(1L);
    }

    // ---------------------------------------------------------------- renew

    @Test
    void renew_batch_extendsOwnHolds_reportsGoneOnes_neverRecreates() {
        Keys mine = Keys.of(name());
        Keys theirs = Keys.of(name());
        Keys missing = Keys.of(name());
        acquire(mine, "a", 1000, false, 5000);
        acquire(theirs, "b", 1000, false, 5000);
        List<Object> gone = connections
                .commands()
                .call(
                        LuaScript.LOCK_RENEW,
                        ScriptOutputType.MULTI,
                        new String[] {mine.hold, theirs.hold, missing.hold},
                        "60000",
                        "a",
                        "a",
                        "a");
        assertThat(gone).containsExactly(2L, 3L);
        assertThat(sync.pttl(mine.hold)).isGreaterThan(1000L);
        assertThat(sync.pttl(theirs.hold))
                .as("another owner's hold is not extended")
                .isLessThanOrEqualTo(1000L);
        assertThat(sync.exists(missing.hold))
                .as("a missing hold is not recreated")
                .isZero();
    }

    @Test
    void renew_setsLeaseExactly_neverDoubles() {
        Keys k = Keys.of(name());
        acquire(k, "a", 1000, false, 5000);
        for (int i = 0; i < 5; i++) {
            List<Object> gone = connections
                    .commands()
                    .call(LuaScript.LOCK_RENEW, ScriptOutputType.MULTI, new String[] {k.hold}, "1000", "a");
            assertThat(gone).isEmpty();
        }
        assertThat(sync.pttl(k.hold)).isBetween(1L, 1000L);
    }

    /**
     * A release drops its own client's registrations among the waiting clients instead of giving the lock back to its
     * own client as a claim (found in a clean-clone run: a thread that waited got the lock by a local hand-off, its
     * registration stayed, and the last release left a claim behind) and gives it to the next other client.
     */
    @Test
    void release_dropsOwnClientsRegistrations_givesTheLockToTheNextOtherClient() {
        String name = name();
        String tag = layout.tag(name);
        String[] keys = KeyLayout.wakeKeys(tag); // hold, queue, waiters, wait order, wait deadlines, fence
        String[] acquireKeys = {keys[0], keys[5], keys[3], keys[4]};
        assertThat(connections
                        .commands()
                        .<List<Object>>call(
                                LuaScript.LOCK_ACQUIRE,
                                ScriptOutputType.MULTI,
                                acquireKeys,
                                "c1:t1",
                                "10000",
                                "16",
                                "c1:w1s16")
                        .get(0))
                .isEqualTo(1L);
        // another thread of c1 waits, registered as c1:w2; then it gets the lock inside c1, so c1:w2 stays
        assertThat(connections
                        .commands()
                        .<List<Object>>call(
                                LuaScript.LOCK_ACQUIRE,
                                ScriptOutputType.MULTI,
                                acquireKeys,
                                "c1:t2",
                                "10000",
                                "16",
                                "c1:w2s16")
                        .get(0))
                .isEqualTo(0L);
        Long released = connections
                .commands()
                .call(LuaScript.LOCK_RELEASE, ScriptOutputType.INTEGER, keys, "c1:t1", "wake:", "PUBLISH", tag, "1000");
        assertThat(released).isEqualTo(1L);
        assertThat(keysOf(name)).as("no claim for c1, no registration left").containsOnly(acquireKeys[1]);

        // with c2 waiting behind c1's stale registration, c2 gets the claim
        connections
                .commands()
                .<List<Object>>call(
                        LuaScript.LOCK_ACQUIRE,
                        ScriptOutputType.MULTI,
                        acquireKeys,
                        "c1:t1",
                        "10000",
                        "16",
                        "c1:w3s16");
        connections
                .commands()
                .<List<Object>>call(
                        LuaScript.LOCK_ACQUIRE,
                        ScriptOutputType.MULTI,
                        acquireKeys,
                        "c1:t2",
                        "10000",
                        "16",
                        "c1:w4s16");
        connections
                .commands()
                .<List<Object>>call(
                        LuaScript.LOCK_ACQUIRE, ScriptOutputType.MULTI, acquireKeys, "c2:t1", "10000", "5", "c2:w1s5");
        long fence = Long.parseLong(sync.get(keys[5]));
        released = connections
                .commands()
                .call(LuaScript.LOCK_RELEASE, ScriptOutputType.INTEGER, keys, "c1:t1", "wake:", "PUBLISH", tag, "1000");
        assertThat(released).isEqualTo(1L);
        assertThat(sync.get(keys[0])).as("claimed for c2").isEqualTo("c2:w1s5#" + (fence + 1));
        assertThat(sync.get(keys[5]))
                .as("the grant reserved the 5 spare tokens c2's entry asked for")
                .isEqualTo(Long.toString(fence + 6));
        assertThat(sync.zrange(keys[3], 0, -1))
                .as("c1's registration dropped, c2's left with the grant")
                .isEmpty();
    }

    // ---------------------------------------------------------------- hand-off

    @Test
    void handOff_fromHolder_replacesOwner_withFreshToken() {
        Keys k = Keys.of(name());
        acquire(k, "a", 10_000, false, 5000);
        Long token = connections
                .commands()
                .call(
                        LuaScript.LOCK_HANDOFF,
                        ScriptOutputType.INTEGER,
                        new String[] {k.hold, k.fence},
                        "a",
                        "b",
                        "5000",
                        "3");
        assertThat(token).isEqualTo(18L);
        assertThat(sync.get(k.fence)).as("3 spare tokens reserved after 18").isEqualTo("21");
        assertThat(sync.get(k.hold)).isEqualTo("b");
        assertThat(sync.pttl(k.hold)).isBetween(1L, 5000L);
    }

    @Test
    void handOff_wrongOwnerOrMissing_changesNothing() {
        String name = name();
        Keys k = Keys.of(name);
        Long none = connections
                .commands()
                .call(
                        LuaScript.LOCK_HANDOFF,
                        ScriptOutputType.INTEGER,
                        new String[] {k.hold, k.fence},
                        "a",
                        "b",
                        "5000",
                        "16");
        assertThat(none).isZero();
        assertThat(keysOf(name)).isEmpty();
        acquire(k, "c", 10_000, false, 5000);
        Long wrong = connections
                .commands()
                .call(
                        LuaScript.LOCK_HANDOFF,
                        ScriptOutputType.INTEGER,
                        new String[] {k.hold, k.fence},
                        "a",
                        "b",
                        "5000",
                        "16");
        assertThat(wrong).isZero();
        assertThat(sync.get(k.hold)).isEqualTo("c");
        assertThat(sync.get(k.fence)).isEqualTo("17");
    }

    // ---------------------------------------------------------------- fair queue and abandon

    @Test
    void queue_grantsInOrder_andEvictsWaiterThatStoppedComingBack() throws Exception {
        String name = name();
        Keys k = Keys.of(name);
        acquire(k, "holder", 10_000, false, 5000);
        assertThat(acquire(k, "w1", 10_000, true, 200).get(0)).isEqualTo(0L);
        assertThat(acquire(k, "w2", 10_000, true, 200).get(0)).isEqualTo(0L);
        assertThat(sync.lrange(k.queue, 0, -1)).containsExactly("w1", "w2");
        release(LuaScript.LOCK_RELEASE, k, "holder");
        assertThat(acquire(k, "w2", 10_000, true, 200).get(0))
                .as("w2 is not first")
                .isEqualTo(0L);
        Thread.sleep(300); // w1 never comes back: past its waiter timeout; w2 kept refreshing only once
        List<Object> granted = acquire(k, "w2", 10_000, true, 200);
        assertThat(granted.get(0)).as("w2 after w1 was evicted").isEqualTo(1L);
        assertThat(sync.exists(k.queue, k.waiters)).isZero();
    }

    @Test
    void queue_keysExpireWhenNobodyComesBack() throws Exception {
        String name = name();
        Keys k = Keys.of(name);
        acquire(k, "holder", 10_000, false, 5000);
        acquire(k, "w1", 10_000, true, 100);
        assertThat(sync.pttl(k.queue)).isBetween(1L, 100L);
        Thread.sleep(200);
        assertThat(keysOf(name)).containsExactlyInAnyOrder(k.hold, k.fence);
    }

    @Test
    void abandon_removesOwnQueueEntryAndOwnHold_only() {
        String name = name();
        Keys k = Keys.of(name);
        acquire(k, "holder", 10_000, false, 5000);
        acquire(k, "w1", 10_000, true, 5000);
        acquire(k, "w2", 10_000, true, 5000);
        Long removed = connections
                .commands()
                .call(
                        LuaScript.LOCK_ABANDON,
                        ScriptOutputType.INTEGER,
                        new String[] {k.hold, k.queue, k.waiters},
                        "w1",
                        k.channel,
                        "PUBLISH");
        assertThat(removed).isEqualTo(1L);
        assertThat(sync.lrange(k.queue, 0, -1)).containsExactly("w2");
        assertThat(sync.get(k.hold)).as("another owner's hold stays").isEqualTo("holder");
        Long nothing = connections
                .commands()
                .call(
                        LuaScript.LOCK_ABANDON,
                        ScriptOutputType.INTEGER,
                        new String[] {k.hold, k.queue, k.waiters},
                        "stranger",
                        k.channel,
                        "PUBLISH");
        assertThat(nothing).isZero();
        Long own = connections
                .commands()
                .call(
                        LuaScript.LOCK_ABANDON,
                        ScriptOutputType.INTEGER,
                        new String[] {k.hold, k.queue, k.waiters},
                        "holder",
                        k.channel,
                        "PUBLISH");
        assertThat(own).isEqualTo(1L);
        assertThat(sync.exists(k.hold)).isZero();
    }

    // ---------------------------------------------------------------- inspect and force-release

    @Test
    void inspectAndForceRelease_reportHold_keepFence() {
        String name = name();
        Keys k = Keys.of(name);
        acquire(k, "a", 10_000, false, 5000);
        String[] keys = {k.hold, k.fence, k.waiters};
        List<Object> info = connections.commands().call(LuaScript.LOCK_INSPECT, ScriptOutputType.MULTI, keys);
        assertThat(info.get(0)).isEqualTo("a");
        assertThat(info.get(2)).as("the fence counter: the last token reserved").isEqualTo(17L);
        List<Object> removed = connections
                .commands()
                .call(LuaScript.LOCK_FORCE_RELEASE, ScriptOutputType.MULTI, keys, k.channel, "PUBLISH");
        assertThat(removed.get(0)).isEqualTo("a");
        assertThat(keysOf(name)).containsExactly(k.fence);
        assertThat((List<Object>) connections.commands().call(LuaScript.LOCK_INSPECT, ScriptOutputType.MULTI, keys))
                .isEmpty();
        assertThat((List<Object>) connections
                        .commands()
                        .call(LuaScript.LOCK_FORCE_RELEASE, ScriptOutputType.MULTI, keys, k.channel, "PUBLISH"))
                .isEmpty();
    }

    @Test
    void forceRelease_ofOneOwner_removesOnlyThatOwnersHold() {
        String name = name();
        Keys k = Keys.of(name);
        acquire(k, "a", 10_000, false, 5000);
        String[] keys = {k.hold, k.fence, k.waiters};
        List<Object> other = connections
                .commands()
                .call(LuaScript.LOCK_FORCE_RELEASE, ScriptOutputType.MULTI, keys, k.channel, "PUBLISH", "", "b");
        assertThat(other).as("b holds nothing").isEmpty();
        assertThat(sync.get(k.hold)).isEqualTo("a");
        List<Object> removed = connections
                .commands()
                .call(LuaScript.LOCK_FORCE_RELEASE, ScriptOutputType.MULTI, keys, k.channel, "PUBLISH", "", "a");
        assertThat(removed.get(0)).isEqualTo("a");
        assertThat(keysOf(name)).containsExactly(k.fence);
    }

    // ---------------------------------------------------------------- script cache

    @Test
    void scriptFlush_thenCall_fallsBackToEval_andCachesAgain() {
        Keys k = Keys.of(name());
        acquire(k, "a", 10_000, false, 5000);
        sync.scriptFlush();
        assertThat(sync.scriptExists(LuaScript.LOCK_RELEASE.sha1())).containsExactly(false);
        assertThat(release(LuaScript.LOCK_RELEASE, k, "a")).isEqualTo(1L);
        assertThat(sync.scriptExists(LuaScript.LOCK_RELEASE.sha1())).containsExactly(true);
    }

    @Test
    void scriptSha_matchesServerDigest() {
        assertThat(LuaScript.ALL).hasSize(21);
        for (LuaScript s : LuaScript.ALL) {
            assertThat(sync.scriptLoad(s.source())).as(s.name()).isEqualTo(s.sha1());
        }
    }

    @Test
    void lease_isSetByServerClock() {
        Keys k = Keys.of(name());
        acquire(k, "a", 2000, false, 5000);
        assertThat(sync.pttl(k.hold)).isBetween(1000L, 2000L);
        assertThat(Duration.ofMillis(sync.pttl(k.hold))).isLessThanOrEqualTo(Duration.ofSeconds(2));
    }
}
