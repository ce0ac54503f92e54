package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedLock;
import io.distlock.testkit.server.RedisServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The start-up check of maxmemory-policy: a WARN on allkeys-* and volatile-* (both may evict holds), quiet on
 * noeviction and harmless when CONFIG is disabled.
 */
class RedisStartupChecksIT {

    private static String stderrWhile(Runnable action) {
        PrintStream original = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            action.run();
        } finally {
            System.setErr(original);
        }
        return captured.toString(StandardCharsets.UTF_8);
    }

    @Test
    void allkeysEvictionPolicy_warnsLoudly() {
        try (RedisServer server = RedisServer.started("--maxmemory-policy", "allkeys-lru")) {
            String log = stderrWhile(() -> RedisLockClient.create(server.uri()).close());
            assertThat(log).contains("WARN").contains("maxmemory-policy is 'allkeys-lru'");
        }
    }

    @Test
    void volatileEvictionPolicy_warnsToo() {
        try (RedisServer server = RedisServer.started("--maxmemory-policy", "volatile-lru")) {
            String log = stderrWhile(() -> RedisLockClient.create(server.uri()).close());
            assertThat(log)
                    .contains("WARN")
                    .contains("maxmemory-policy is 'volatile-lru'")
                    .contains("another client can then take a lock");
        }
    }

    @Test
    void noevictionPolicy_noWarning() {
        try (RedisServer server = RedisServer.started("--maxmemory-policy", "noeviction")) {
            String log = stderrWhile(() -> RedisLockClient.create(server.uri()).close());
            assertThat(log).doesNotContain("maxmemory-policy");
        }
    }

    @Test
    void configDisabled_clientStillWorks() {
        try (RedisServer server = RedisServer.started("--rename-command", "CONFIG", "")) {
            assertThat(server.command("CONFIG", "GET", "maxmemory-policy")).startsWith("-");
            try (RedisLockClient client = RedisLockClient.create(server.uri())) {
                DistributedLock lock = client.lock("startup-check");
                assertThat(lock.tryLock()).isTrue();
                lock.unlock();
            }
        }
    }
}
