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
        return sync.eval(
                LuaScript.CLAIM_ACQUIRE.source(),
                ScriptOutputType.MULTI,
                KeyLayout.claimKeys(tag, KeyLayout.FENCE, KeyLayout.SIZE, KeyLayout.LATCH, KeyLayout.HOLD),
                "rw",
                RW_SIZE,
                mode,
                "1",
                owner,
                Long.toString(lease),
                queue ? "1" : "0",
                Long.toString(waiterTimeout),
                "PUBLISH",
                KeyLayout.key(tag, KeyLayout.CLAIM_CHANNEL));
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

    private static long commandCalls(String command) {
        for (String line : sync.info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_" + command + ":")) {
                int calls = line.indexOf("calls=");
                return Long.parseLong(line.substring(calls + 6, line.indexOf(',', calls)));
            }
        }
        return 0;
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
}
