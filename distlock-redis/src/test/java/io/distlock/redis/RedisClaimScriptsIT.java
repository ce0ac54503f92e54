package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.testkit.server.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The read-write lock and semaphore scripts called directly against a real redis-server: one message per release
 * whatever the number of waiters, naming only the clients that can pass; a dead waiting writer's own expiry; leases of
 * their own per read hold; renewal never extends an ended hold.
 */
class RedisClaimScriptsIT {
    @RegisterExtension
    static final RedisServer redis = RedisServer.onFreePort();

    private static final KeyLayout layout = new KeyLayout("claims-it:");
    private static final String RW_SIZE = Integer.toString(Integer.MAX_VALUE);
    private static RedisClient lettuce;
    private static StatefulRedisConnection<String, String> connection;
    private static RedisCommands<String, String> sync;

    @BeforeAll
    static void connect() {
        lettuce = RedisClient.create(redis.uri());
        connection = lettuce.connect();
        sync = connection.sync();
    }

    @AfterAll
    static void disconnect() {
        connection.close();
        lettuce.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }

    private static String tag() {
        return layout.tag("claim-" + UUID.randomUUID());
    }

    private static List<Object> acquire(
            String tag, String mode, String owner, long lease, boolean queue, long waiterTimeout) {
        return acquire(tag, "rw", RW_SIZE, mode, 1, owner, lease, queue, waiterTimeout);
    }

    /** A semaphore of {@code size} permits: a shared claim of {@code permits}. */
    private static List<Object> acquirePermits(String tag, int size, int permits, String owner, long lease) {
        return acquire(tag, "sem", Integer.toString(size), "s", permits, owner, lease, false, 5000);
    }

    private static List<Object> acquire(
            String tag,
            String kind,
            String size,
            String mode,
            int permits,
            String owner,
            long lease,
            boolean queue,
            long waiterTimeout) {
        return acquire(tag, kind, size, mode, permits, owner, lease, queue, waiterTimeout, REQUESTS.incrementAndGet());
    }

    /** Acquire ids: each call is an acquire of its own unless a test gives one. */
    private static final AtomicLong REQUESTS = new AtomicLong();

    private static List<Object> acquire(
            String tag,
            String kind,
            String size,
            String mode,
            int permits,
            String owner,
            long lease,
            boolean queue,
            long waiterTimeout,
            long request) {
        return sync.eval(
                LuaScript.CLAIM_ACQUIRE.source(),
                ScriptOutputType.MULTI,
                KeyLayout.claimKeys(tag, KeyLayout.FENCE, KeyLayout.SIZE, KeyLayout.LATCH, KeyLayout.HOLD),
                kind,
                size,
                mode,
                Integer.toString(permits),
                owner,
                Long.toString(lease),
                queue ? "1" : "0",
                Long.toString(waiterTimeout),
                "PUBLISH",
                KeyLayout.key(tag, KeyLayout.CLAIM_CHANNEL),
                Long.toString(request));
    }

    private static long release(String tag, String member, long token) {
        return sync.eval(
                LuaScript.CLAIM_RELEASE.source(),
                ScriptOutputType.INTEGER,
                KeyLayout.claimKeys(tag),
                member,
                Long.toString(token),
                "PUBLISH",
                KeyLayout.key(tag, KeyLayout.CLAIM_CHANNEL));
    }

    /** claim-handoff.lua: ends {@code member}'s hold and asks for a shared claim of {@code permits} for {@code owner}. */
    private static List<Object> handOff(
            String tag, String member, long token, int permits, String owner, long lease, long waiterTimeout) {
        return handOff(tag, member, token, permits, owner, lease, waiterTimeout, REQUESTS.incrementAndGet());
    }

    private static List<Object> handOff(
            String tag,
            String member,
            long token,
            int permits,
            String owner,
            long lease,
            long waiterTimeout,
            long request) {
        return sync.eval(
                LuaScript.CLAIM_HANDOFF.source(),
                ScriptOutputType.MULTI,
                KeyLayout.claimKeys(tag, KeyLayout.FENCE),
                member,
                Long.toString(token),
                "s",
                Integer.toString(permits),
                owner,
                Long.toString(lease),
                Long.toString(waiterTimeout),
                "PUBLISH",
                KeyLayout.key(tag, KeyLayout.CLAIM_CHANNEL),
                Long.toString(request));
    }

    /** A semaphore's claim that may wait: queued when it is not granted. */
    private static List<Object> acquireQueued(String tag, int size, String owner, long lease, long waiterTimeout) {
        return acquire(tag, "sem", Integer.toString(size), "s", 1, owner, lease, true, waiterTimeout);
    }

    private static long commandCalls(String command) {
        for (String line : sync.info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_" + command + ":")) {
                int calls = line.indexOf("calls=");
                return Long.parseLong(line.substring(calls + 6, line.indexOf(',', calls)));
            }
        }
        return 0;
    }

    private static long renew(String tag, String member, long token, long lease) {
        List<Object> gone = sync.eval(
                LuaScript.CLAIM_RENEW.source(),
                ScriptOutputType.MULTI,
                new String[] {
                    KeyLayout.key(tag, KeyLayout.CLAIM),
                    KeyLayout.key(tag, KeyLayout.HOLDS),
                    KeyLayout.key(tag, KeyLayout.GRANTS)
                },
                Long.toString(lease),
                member,
                Long.toString(token));
        return gone.size();
    }

    /** Every call counted by INFO commandstats but the scripts' own EVAL/EVALSHA and INFO: what the scripts ran. */
    private static long commandsRunByScripts() {
        long sum = 0;
        for (String line : sync.info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_") && !line.startsWith("cmdstat_eval") && !line.startsWith("cmdstat_info:")) {
                int calls = line.indexOf("calls=");
                sum += Long.parseLong(line.substring(calls + 6, line.indexOf(',', calls)));
            }
        }
        return sum;
    }

    /**
     * Watches the five claim keys of one name against its holds and waiters, one script reading it all at one moment:
     * a key that exists expires (no key without a TTL); meta, holds and grants not before the latest live hold or
     * waiter, the queue keys not before the latest waiter (a key that expired earlier would end a live hold, the count
     * of permits in use, or a waiter's place behind its owner's back); and none more than {@code slack} after the
     * latest hold expiry or waiter deadline the name has been given (each check also records the latest it sees, so
     * every step that sets one must be followed by a check).
     */
    private static final class KeyExpiries {
        private final String tag;
        private final long slack;
        private long latestGiven;

        KeyExpiries(String tag, long slack) {
            this.tag = tag;
            this.slack = slack;
        }

        void check(String when) {
            String[] keys = KeyLayout.claimKeys(tag);
            List<Object> seen = sync.eval(
                    "local t = redis.call('TIME')"
                            + " local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)"
                            + " local h = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')"
                            + " local d = redis.call('ZRANGE', KEYS[5], -1, -1, 'WITHSCORES')"
                            + " local out = {now, 0, 0}"
                            + " if h[2] then out[2] = tonumber(h[2]) end"
                            + " if d[2] then out[3] = tonumber(d[2]) end"
                            + " for _, k in ipairs(KEYS) do out[#out + 1] = redis.call('PTTL', k) end"
                            + " return out",
                    ScriptOutputType.MULTI,
                    keys);
            long now = (Long) seen.get(0);
            long hold = (Long) seen.get(1);
            long waiter = (Long) seen.get(2);
            long latest = Math.max(hold, waiter);
            assertThat(latest).as("a live hold or waiter %s", when).isGreaterThan(now);
            latestGiven = Math.max(latestGiven, latest);
            for (int i = 0; i < keys.length; i++) {
                long pttl = (Long) seen.get(i + 3);
                if (pttl == -2) {
                    continue; // the key is not there (an empty queue, say)
                }
                long needed = i < 3 ? latest : waiter;
                // the server's clock reads within one script may differ by a millisecond or two
                assertThat(pttl)
                        .as(
                                "TTL of %s %s (latest hold in %d ms, waiter in %d ms, latest given in %d ms)",
                                keys[i], when, hold - now, waiter - now, latestGiven - now)
                        .isGreaterThanOrEqualTo(needed - now - 2)
                        .isLessThanOrEqualTo(latestGiven + slack - now + 2);
            }
        }
    }

    /** With 1 and with 200 readers of 200 clients waiting behind a writer: one PUBLISH, naming every waiting reader. */
    @Test
    void writeRelease_publishesOnce_namingEveryWaitingReader() throws Exception {
        for (int readers : new int[] {1, 200}) {
            String tag = tag();
            String channel = KeyLayout.key(tag, KeyLayout.CLAIM_CHANNEL);
            long token = (Long) acquire(tag, "x", "w:t1", 30_000, false, 5000).get(1);
            for (int i = 0; i < readers; i++) {
                assertThat(acquire(tag, "s", "r" + i + ":t1", 30_000, true, 5000)
                                .get(0))
                        .isEqualTo(0L);
            }
            LinkedBlockingQueue<String> messages = new LinkedBlockingQueue<>();
            try (StatefulRedisPubSubConnection<String, String> sub = lettuce.connectPubSub()) {
                sub.addListener(new RedisPubSubAdapter<>() {
                    @Override
                    public void message(String ch, String message) {
                        messages.add(message);
                    }
                });
                sub.sync().subscribe(channel);
                long publishes = commandCalls("publish");
                assertThat(release(tag, "xw:t1", token)).isEqualTo(1L);
                assertThat(commandCalls("publish") - publishes)
                        .as("PUBLISHes per release")
                        .isEqualTo(1);
                String message = messages.poll(5, TimeUnit.SECONDS);
                assertThat(message).startsWith(channel + ":");
                // '<channel>:<client id>:<suffix>:...', one owner per waiting reader
                List<String> parts =
                        List.of(message.substring(channel.length() + 1).split(":"));
                assertThat(parts).hasSize(2 * readers);
                List<String> owners = new ArrayList<>();
                for (int i = 0; i < parts.size(); i += 2) {
                    owners.add(parts.get(i) + ":" + parts.get(i + 1));
                }
                assertThat(owners).contains("r0:t1", "r" + (readers - 1) + ":t1");
            }
        }
    }

    /** A release carrying an older grant's token ends nothing: the owner's hold now is the later grant. */
    @Test
    void release_withAnOlderGrantsToken_leavesTheLaterGrant() {
        String tag = tag();
        long first = (Long) acquirePermits(tag, 2, 1, "a:t1", 30_000).get(1);
        long second = (Long) acquirePermits(tag, 2, 1, "a:t1", 30_000).get(1);
        assertThat(second).isGreaterThan(first);
        assertThat(release(tag, "sa:t1", first))
                .as("release with the older token")
                .isZero();
        assertThat(sync.hget(KeyLayout.key(tag, KeyLayout.GRANTS), "sa:t1")).matches("1r\\d+:" + second);
        assertThat(sync.hget(KeyLayout.key(tag, KeyLayout.CLAIM), "u")).isEqualTo("1");
        assertThat(release(tag, "sa:t1", second)).isEqualTo(1L);
    }

    /**
     * A hand-off keeps the queue's order: with another client's waiter ahead, the hold ends, that waiter is named in
     * the one message and the claim stays queued behind it; once at the head, the claim is granted with a greater token
     * and leaves the queue. The keys' expiries cover every live hold and waiter throughout.
     */
    @Test
    void handOff_grantsTheClaimOnlyInQueueOrder_andKeepsTheKeysCovered() throws Exception {
        String tag = tag();
        String channel = KeyLayout.key(tag, KeyLayout.CLAIM_CHANNEL);
        String queue = KeyLayout.key(tag, KeyLayout.CLAIM_QUEUE);
        long lease = 1500;
        long waiterTimeout = 5000;
        KeyExpiries keys = new KeyExpiries(tag, waiterTimeout / 2);
        long a = (Long) acquireQueued(tag, 1, "a:h1", lease, waiterTimeout).get(1);
        assertThat(acquireQueued(tag, 1, "other:h1", lease, waiterTimeout).get(0))
                .isEqualTo(0L);
        assertThat(acquireQueued(tag, 1, "a:h2", lease, waiterTimeout).get(0)).isEqualTo(0L);
        keys.check("with two waiters");
        LinkedBlockingQueue<String> messages = new LinkedBlockingQueue<>();
        try (StatefulRedisPubSubConnection<String, String> sub = lettuce.connectPubSub()) {
            sub.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String ch, String message) {
                    messages.add(message);
                }
            });
            sub.sync().subscribe(channel);
            assertThat(handOff(tag, "sa:h1", a, 1, "a:h2", lease, waiterTimeout))
                    .as("another client's waiter is ahead")
                    .containsExactly(0L);
            assertThat(messages.poll(5, TimeUnit.SECONDS)).isEqualTo(channel + ":other:h1");
            assertThat(messages.poll(200, TimeUnit.MILLISECONDS))
                    .as("one message")
                    .isNull();
        }
        keys.check("after a hand-off that queued");
        assertThat(sync.hget(KeyLayout.key(tag, KeyLayout.GRANTS), "sa:h1"))
                .as("the hold ended")
                .isNull();
        assertThat(sync.zrange(queue, 0, -1)).containsExactly("1sother:h1", "1sa:h2");
        long other =
                (Long) acquireQueued(tag, 1, "other:h1", lease, waiterTimeout).get(1);
        keys.check("after the head's grant");
        List<Object> handed = handOff(tag, "sother:h1", other, 1, "a:h2", lease, waiterTimeout);
        assertThat(handed.get(0)).as("granted at the head").isEqualTo(1L);
        assertThat((Long) handed.get(1)).isGreaterThan(other);
        keys.check("after a hand-off that granted");
        assertThat(sync.zrange(queue, 0, -1)).as("it left the queue").isEmpty();
        assertThat(sync.hget(KeyLayout.key(tag, KeyLayout.CLAIM), "u")).isEqualTo("1");
        assertThat(release(tag, "sa:h2", (Long) handed.get(1))).isEqualTo(1L);
        assertThat(sync.keys(KeyLayout.glob(tag) + ":*"))
                .as("only the fence counter and the size stay")
                .containsExactlyInAnyOrder(KeyLayout.key(tag, KeyLayout.FENCE), KeyLayout.key(tag, KeyLayout.SIZE));
    }

    /**
     * A hand-off that ran while the waiter's own attempt was on its way: the attempt finds the grant made for the same
     * acquire and answers it again, its lease restarted, taking no more permits and no new token.
     */
    @Test
    void attempt_afterAHandOffToTheSameAcquire_answersThatGrant() {
        String tag = tag();
        String holds = KeyLayout.key(tag, KeyLayout.HOLDS);
        long keeper = (Long) acquireQueued(tag, 1, "k:h1", 30_000, 5000).get(1);
        assertThat(acquire(tag, "sem", "1", "s", 1, "w:h1", 30_000, true, 5000, 7)
                        .get(0))
                .as("queued")
                .isEqualTo(0L);
        List<Object> handed = handOff(tag, "sk:h1", keeper, 1, "w:h1", 1_000, 5000, 7);
        assertThat(handed.get(0)).isEqualTo(1L);
        long token = (Long) handed.get(1);
        assertThat(sync.zscore(holds, "sw:h1")).as("the hand-off's 1 s lease").isLessThan(nowMillis() + 1_500.0);
        assertThat(acquire(tag, "sem", "1", "s", 1, "w:h1", 30_000, true, 5000, 7))
                .as("the attempt gets the same grant")
                .containsExactly(1L, token);
        assertThat(sync.zscore(holds, "sw:h1")).as("its lease restarted").isGreaterThan(nowMillis() + 20_000.0);
        assertThat(sync.hget(KeyLayout.key(tag, KeyLayout.GRANTS), "sw:h1")).isEqualTo("1r7:" + token);
        assertThat(sync.hget(KeyLayout.key(tag, KeyLayout.CLAIM), "u")).isEqualTo("1");
        assertThat(release(tag, "sw:h1", token)).isEqualTo(1L);
        assertThat(sync.keys(KeyLayout.glob(tag) + ":*"))
                .as("only the fence counter and the size stay")
                .containsExactlyInAnyOrder(KeyLayout.key(tag, KeyLayout.FENCE), KeyLayout.key(tag, KeyLayout.SIZE));
    }

    /** The hand-off finds the grant the claim's own attempt made for the same acquire: the same token again. */
    @Test
    void handOff_afterTheClaimsOwnGrant_answersThatGrant() {
        String tag = tag();
        long keeper = (Long)
                acquire(tag, "sem", "2", "s", 1, "k:h1", 30_000, true, 5000, 21).get(1);
        long own = (Long)
                acquire(tag, "sem", "2", "s", 1, "w:h1", 30_000, true, 5000, 22).get(1);
        assertThat(handOff(tag, "sk:h1", keeper, 1, "w:h1", 30_000, 5000, 22)).containsExactly(1L, own);
        assertThat(sync.hget(KeyLayout.key(tag, KeyLayout.CLAIM), "u"))
                .as("the keeper's permit ended, the waiter has one")
                .isEqualTo("1");
        assertThat(sync.hget(KeyLayout.key(tag, KeyLayout.GRANTS), "sk:h1")).isNull();
        assertThat(release(tag, "sw:h1", own)).isEqualTo(1L);
    }

    /** An earlier hold of the same owner, granted to another acquire, is not answered again: a new grant replaces it. */
    @Test
    void acquire_ofAnotherRequest_doesNotGetTheOwnersEarlierGrant() {
        String tag = tag();
        long first = (Long)
                acquire(tag, "sem", "2", "s", 1, "a:t1", 30_000, true, 5000, 31).get(1);
        long second = (Long)
                acquire(tag, "sem", "2", "s", 1, "a:t1", 30_000, true, 5000, 32).get(1);
        assertThat(second).isGreaterThan(first);
        assertThat(sync.hget(KeyLayout.key(tag, KeyLayout.GRANTS), "sa:t1")).isEqualTo("1r32:" + second);
        assertThat(sync.hget(KeyLayout.key(tag, KeyLayout.CLAIM), "u")).isEqualTo("1");
        assertThat(release(tag, "sa:t1", second)).isEqualTo(1L);
    }

    private static double nowMillis() {
        List<String> t = sync.time();
        return Long.parseLong(t.get(0)) * 1000.0 + Long.parseLong(t.get(1)) / 1000.0;
    }

    /** A hand-off with the token of the owner's earlier grant changes nothing: the later grant and the queue stay. */
    @Test
    void handOff_withAnOlderGrantsToken_changesNothing() {
        String tag = tag();
        long first = (Long) acquireQueued(tag, 2, "a:t1", 30_000, 5000).get(1);
        long second = (Long) acquireQueued(tag, 2, "a:t1", 30_000, 5000).get(1);
        long keeper = (Long) acquireQueued(tag, 2, "k:h1", 30_000, 5000).get(1);
        assertThat(acquireQueued(tag, 2, "w:h1", 30_000, 5000).get(0)).isEqualTo(0L);
        assertThat(handOff(tag, "sa:t1", first, 1, "w:h1", 30_000, 5000))
                .as("the older token")
                .containsExactly(-1L);
        assertThat(sync.hget(KeyLayout.key(tag, KeyLayout.GRANTS), "sa:t1")).matches("1r\\d+:" + second);
        assertThat(sync.hget(KeyLayout.key(tag, KeyLayout.CLAIM), "u")).isEqualTo("2");
        assertThat(sync.zrange(KeyLayout.key(tag, KeyLayout.CLAIM_QUEUE), 0, -1))
                .containsExactly("1sw:h1");
        assertThat(release(tag, "sa:t1", second)).isEqualTo(1L);
        assertThat(release(tag, "sk:h1", keeper)).isEqualTo(1L);
    }

    /** A writer at the head of the queue: a read release names only the writer, never the later readers. */
    @Test
    void readRelease_withAWriterQueued_namesOnlyTheWriter() throws Exception {
        String tag = tag();
        String channel = KeyLayout.key(tag, KeyLayout.CLAIM_CHANNEL);
        long token = (Long) acquire(tag, "s", "a:t1", 30_000, false, 5000).get(1);
        assertThat(acquire(tag, "x", "w:t1", 30_000, true, 5000).get(0)).isEqualTo(0L);
        assertThat(acquire(tag, "s", "b:t1", 30_000, true, 5000).get(0))
                .as("a reader after the waiting writer")
                .isEqualTo(0L);
        LinkedBlockingQueue<String> messages = new LinkedBlockingQueue<>();
        try (StatefulRedisPubSubConnection<String, String> sub = lettuce.connectPubSub()) {
            sub.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String ch, String message) {
                    messages.add(message);
                }
            });
            sub.sync().subscribe(channel);
            assertThat(release(tag, "sa:t1", token)).isEqualTo(1L);
            assertThat(messages.poll(5, TimeUnit.SECONDS)).isEqualTo(channel + ":w:t1");
        }
    }

    /** A waiting writer that never comes back holds readers off for its waiter timeout, no longer. */
    @Test
    void deadWaitingWriter_isEvictedAfterItsWaiterTimeout() throws Exception {
        String tag = tag();
        acquire(tag, "s", "a:t1", 30_000, false, 300);
        assertThat(acquire(tag, "x", "w:t1", 30_000, true, 300).get(0)).isEqualTo(0L);
        assertThat(acquire(tag, "s", "b:t1", 30_000, false, 300).get(0)).isEqualTo(0L);
        Thread.sleep(450);
        assertThat(acquire(tag, "s", "b:t1", 30_000, false, 300).get(0))
                .as("the reader passes once the writer's entry has expired")
                .isEqualTo(1L);
        assertThat(sync.zcard(KeyLayout.key(tag, KeyLayout.CLAIM_QUEUE))).isZero();
    }

    /** Each read hold expires by itself; renewal does not bring back one whose lease ended. */
    @Test
    void readHolds_expireEachByItsOwnLease_renewalNeverRevives() throws Exception {
        String tag = tag();
        long shortToken = (Long) acquire(tag, "s", "a:t1", 200, false, 5000).get(1);
        long longToken = (Long) acquire(tag, "s", "b:t1", 30_000, false, 5000).get(1);
        Thread.sleep(300);
        List<Object> gone = sync.eval(
                LuaScript.CLAIM_RENEW.source(),
                ScriptOutputType.MULTI,
                new String[] {
                    KeyLayout.key(tag, KeyLayout.CLAIM),
                    KeyLayout.key(tag, KeyLayout.HOLDS),
                    KeyLayout.key(tag, KeyLayout.GRANTS),
                    KeyLayout.key(tag, KeyLayout.CLAIM),
                    KeyLayout.key(tag, KeyLayout.HOLDS),
                    KeyLayout.key(tag, KeyLayout.GRANTS)
                },
                "30000",
                "sa:t1",
                Long.toString(shortToken),
                "sb:t1",
                Long.toString(longToken));
        assertThat(gone).containsExactly(1L);
        assertThat(release(tag, "sa:t1", shortToken))
                .as("the expired hold is gone")
                .isZero();
        assertThat(acquire(tag, "x", "w:t1", 30_000, false, 5000).get(0))
                .as("the live reader still holds writers off")
                .isEqualTo(0L);
        assertThat(release(tag, "sb:t1", longToken)).isEqualTo(1L);
        assertThat(sync.keys(KeyLayout.glob(tag) + ":*"))
                .as("only the fence counter stays")
                .containsExactly(KeyLayout.key(tag, KeyLayout.FENCE));
    }

    /**
     * Through acquires, a release, renewal for a longer lease, a later hold of the shorter lease, a queued writer,
     * releases and a grant that creates the holds again, every key of the name expires, never before a live hold or
     * waiter needs it and never more than half the longest lease or waiter timeout after the latest hold expiry or
     * waiter deadline given; once nothing is held or queued only the fence counter is left.
     */
    @Test
    void keys_outliveEveryLiveHoldAndWaiter_byAtMostHalfALease() throws Exception {
        String tag = tag();
        long lease = 1500;
        long longLease = 4000;
        long waiterTimeout = 5000;
        KeyExpiries keys = new KeyExpiries(tag, waiterTimeout / 2);
        long a = (Long) acquire(tag, "s", "a:t1", lease, false, waiterTimeout).get(1);
        keys.check("after the first read hold");
        Thread.sleep(30);
        long b = (Long) acquire(tag, "s", "b:t1", lease, false, waiterTimeout).get(1);
        keys.check("after a second read hold");
        assertThat(release(tag, "sb:t1", b)).isEqualTo(1L);
        keys.check("after releasing the second hold");
        assertThat(renew(tag, "sa:t1", a, longLease)).as("holds gone").isZero();
        keys.check("after renewing the first hold for a longer lease");
        Thread.sleep(1000);
        long c = (Long) acquire(tag, "s", "c:t1", lease, false, waiterTimeout).get(1);
        keys.check("after a later hold of the shorter lease");
        assertThat(acquire(tag, "x", "w:t1", lease, true, waiterTimeout).get(0)).isEqualTo(0L);
        keys.check("with a writer queued");
        assertThat(release(tag, "sc:t1", c)).isEqualTo(1L);
        keys.check("after releasing the latest granted hold");
        assertThat(release(tag, "sa:t1", a)).isEqualTo(1L);
        keys.check("with only the writer queued");
        Thread.sleep(30);
        long w = (Long) acquire(tag, "x", "w:t1", lease, true, waiterTimeout).get(1);
        keys.check("after the queued writer's grant");
        assertThat(release(tag, "xw:t1", w)).isEqualTo(1L);
        assertThat(sync.keys(KeyLayout.glob(tag) + ":*"))
                .as("only the fence counter stays")
                .containsExactly(KeyLayout.key(tag, KeyLayout.FENCE));
    }

    /**
     * A name kept in use by one hold: acquiring and releasing another permit sets no expiry (the keys' shared expiry
     * already covers the new lease) and stays within 16 commands inside the scripts.
     */
    @Test
    void permitAcquireAndRelease_onANameInUse_setNoExpiry_andRunFewCommands() {
        String tag = tag();
        long lease = 30_000;
        acquirePermits(tag, 4, 1, "keeper:t1", lease);
        long pexpires = commandCalls("pexpire") + commandCalls("pexpireat");
        long before = commandsRunByScripts();
        int rounds = 20;
        for (int i = 0; i < rounds; i++) {
            List<Object> got = acquirePermits(tag, 4, 1, "p:t1", lease);
            assertThat(got.get(0)).isEqualTo(1L);
            assertThat(release(tag, "sp:t1", (Long) got.get(1))).isEqualTo(1L);
        }
        long perRound = (commandsRunByScripts() - before) / rounds;
        assertThat(commandCalls("pexpire") + commandCalls("pexpireat") - pexpires)
                .as("expiries set")
                .isZero();
        assertThat(perRound)
                .as("commands inside the scripts per acquire + release")
                .isLessThanOrEqualTo(16);
        new KeyExpiries(tag, lease / 2).check("after the rounds");
    }

    /**
     * The permits in use, kept in the meta hash, stay the sum of the live holds' permits through grants, a lease that
     * runs out and releases: the semaphore grants exactly up to its size at every step.
     */
    @Test
    void permitsInUse_followTheLiveHolds_throughExpiryAndRelease() throws Exception {
        String tag = tag();
        String meta = KeyLayout.key(tag, KeyLayout.CLAIM);
        long shortLived = (Long) acquirePermits(tag, 3, 2, "a:t1", 200).get(1);
        long kept = (Long) acquirePermits(tag, 3, 1, "b:t1", 30_000).get(1);
        assertThat(acquirePermits(tag, 3, 1, "c:t1", 30_000).get(0))
                .as("a fourth permit")
                .isEqualTo(0L);
        assertThat(sync.hget(meta, "u")).isEqualTo("3");
        Thread.sleep(300);
        long c = (Long) acquirePermits(tag, 3, 2, "c:t1", 30_000).get(1);
        assertThat(sync.hget(meta, "u"))
                .as("the ended hold's permits came back")
                .isEqualTo("3");
        assertThat(acquirePermits(tag, 3, 1, "d:t1", 30_000).get(0)).isEqualTo(0L);
        assertThat(release(tag, "sa:t1", shortLived)).as("the ended hold").isZero();
        assertThat(release(tag, "sb:t1", kept)).isEqualTo(1L);
        assertThat(sync.hget(meta, "u")).isEqualTo("2");
        long d = (Long) acquirePermits(tag, 3, 1, "d:t1", 30_000).get(1);
        assertThat(acquirePermits(tag, 3, 1, "e:t1", 30_000).get(0)).isEqualTo(0L);
        assertThat(release(tag, "sc:t1", c)).isEqualTo(1L);
        assertThat(release(tag, "sd:t1", d)).isEqualTo(1L);
        assertThat(sync.keys(KeyLayout.glob(tag) + ":*"))
                .as("the fence counter and the size stay")
                .containsExactlyInAnyOrder(KeyLayout.key(tag, KeyLayout.FENCE), KeyLayout.key(tag, KeyLayout.SIZE));
    }

    /**
     * A name whose meta hash is gone (evicted, say) counts as having nothing live: what is left in its other keys ends,
     * its owner is told its hold is gone, and the semaphore grants its whole size again, no more. The kind checks still
     * refuse another size.
     */
    @Test
    void metaHashGone_whatIsLeftEnds_andTheSizeStillHolds() {
        String tag = tag();
        long a = (Long) acquirePermits(tag, 2, 2, "a:t1", 30_000).get(1);
        sync.del(KeyLayout.key(tag, KeyLayout.CLAIM));
        assertThat(acquire(tag, "sem", "3", "s", 1, "x:t1", 30_000, false, 5000))
                .as("another size")
                .containsExactly(-2L, 2L);
        long b = (Long) acquirePermits(tag, 2, 2, "b:t1", 30_000).get(1);
        assertThat(acquirePermits(tag, 2, 1, "c:t1", 30_000).get(0)).isEqualTo(0L);
        assertThat(release(tag, "sa:t1", a)).as("the hold left behind").isZero();
        assertThat(sync.hget(KeyLayout.key(tag, KeyLayout.CLAIM), "u")).isEqualTo("2");
        assertThat(release(tag, "sb:t1", b)).isEqualTo(1L);
    }
}
