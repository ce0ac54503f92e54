package io.distlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.redis.RedisLockClient;
import io.distlock.testkit.server.RedisServer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Every subcommand against a real redis-server started on a free loopback port. */
class RedisCommandsIT implements AdminCommandsContract {
    @RegisterExtension
    static final RedisServer redis = RedisServer.onFreePort();

    private static @Nullable RedisLockClient holder;

    @BeforeAll
    static void connect() {
        holder = RedisLockClient.create(redis.uri());
    }

    @AfterAll
    static void close() {
        if (holder != null) {
            holder.close();
        }
    }

    @Override
    public AdminCommandsChecks checks() {
        RedisLockClient h = java.util.Objects.requireNonNull(holder, "holder");
        return new AdminCommandsChecks(h, "--backend", redis.uri());
    }

    @Test
    void forceUnlock_yesJson_reportsRemovedHold() throws InterruptedException {
        checks().forceUnlock_yesJson_reportsRemovedHold();
    }

    @Test
    void bench_redis_printsBothRuns() {
        Cli.Result r = Cli.run("bench", "--backend", redis.uri(), "--seconds", "1", "--threads", "4");
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out()).contains("distlock bench: Redis " + redis.uri()).contains("4 threads, one key");
    }

    @Test
    void demo_redisJson_noLostUpdatesUnderTheLockAndStaleWriteRejected() {
        Cli.Result r = Cli.run(
                "demo", "--backend", redis.uri(), "--processes", "2", "--threads", "1", "--seconds", "1", "--json");
        assertThat(r.code()).as(r.toString()).isZero();
        String json = r.out();
        assertThat(json)
                .startsWith("{\"backend\":\"Redis " + redis.uri() + "\",\"processes\":2,\"threads\":1,")
                .contains("{\"phase\":1,\"name\":\"no lock\"")
                .contains("\"lockWaitP50Ms\":null")
                .containsPattern("\\{\"phase\":2,\"name\":\"distlock lock\",\"attempted\":(\\d+),\"accepted\":\\1,"
                        + "\"finalValue\":\\1,\"lostUpdates\":0,")
                .containsPattern("\\{\"phase\":3,\"name\":\"lease lost in a pause\",\"attempted\":\\d+,"
                        + "\"accepted\":(\\d+),\"finalValue\":\\1,\"lostUpdates\":0,")
                .contains("\"staleWriteRejected\":true,\"holdLostReported\":true")
                .endsWith("\"ok\":true}\n");
        // the counters are cleaned up
        assertThat(redis.command("KEYS", "distlock-demo:*").trim()).isEmpty();
    }
}
