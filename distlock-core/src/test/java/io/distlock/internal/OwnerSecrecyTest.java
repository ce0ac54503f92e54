package io.distlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLock;
import io.distlock.LockHold;
import io.distlock.LockInfo;
import io.distlock.spi.OwnerId;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Owner ids are bearer credentials for a release: they carry 128 random bits, and toString, thread names, exception
 * messages and log lines show them redacted.
 */
class OwnerSecrecyTest {

    @Test
    void newClientId_hasALabelATagAnd128SecretBits_neverRepeats() {
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < 10_000; i++) {
            String id = EngineConfig.newClientId();
            assertThat(id).matches("pid\\d+\\.[0-9a-f]{40}");
            assertThat(seen.add(id.substring(id.indexOf('.') + 9)))
                    .as("secret %s repeated", id)
                    .isTrue();
        }
        assertThat(EngineConfig.defaults().clientId())
                .matches("pid" + ProcessHandle.current().pid() + "\\.[0-9a-f]{40}");
    }

    @Test
    void withClientId_keepsTheLabel_appendsAFreshSecret() {
        String first = EngineConfig.defaults().withClientId("billing-7").clientId();
        String second = EngineConfig.defaults().withClientId("billing-7").clientId();
        assertThat(first).matches("billing-7\\.[0-9a-f]{40}");
        assertThat(second).matches("billing-7\\.[0-9a-f]{40}").isNotEqualTo(first);
        assertThatThrownBy(() -> EngineConfig.defaults().withClientId("a:b"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("clientId")
                .hasMessageContaining("a:b");
        assertThatThrownBy(() -> EngineConfig.defaults().withClientId(" "))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void redact_leavesOutTheSecret_keepsLabelTagAndSuffix() {
        String id = "pid42.3fa9c2d1" + "0123456789abcdef".repeat(2);
        assertThat(OwnerId.redact(id)).isEqualTo("pid42.3fa9c2d1…");
        assertThat(OwnerId.redact(id + ":t17")).isEqualTo("pid42.3fa9c2d1…:t17");
        assertThat(OwnerId.redact(id + ":w3#99")).isEqualTo("pid42.3fa9c2d1…:w3#99");
        assertThat(new OwnerId(id + ":h5")).hasToString("pid42.3fa9c2d1…:h5");
        assertThat(new OwnerId(id + ":h5").value()).isEqualTo(id + ":h5");
        assertThat(OwnerId.redact("worker-1:t5"))
                .as("no secret where expected: only the suffix")
                .isEqualTo("…:t5");
        assertThat(OwnerId.redact("worker-1")).isEqualTo("…");
        LockInfo info = new LockInfo("n", id + ":t1", Duration.ZERO, 7, 0);
        assertThat(info.toString()).doesNotContain(secretOf(id)).contains("pid42.3fa9c2d1…:t1");
        assertThat(info.owner()).isEqualTo(id + ":t1");
        assertThat(new LockInfo("n", "session 12", Duration.ZERO, -1, -1).toString())
                .contains("owner=session 12");
    }

    @Test
    void clientHoldsAndLosses_neverShowTheSecret_inToStringThreadNamesMessagesOrLogs() throws Exception {
        FakeLockStore store = new FakeLockStore();
        LockEngine engine =
                LockEngine.create(store.view(), EngineConfig.defaults().withWatchdogLease(Duration.ofMillis(300)));
        String secret = secretOf(engine.clientId());
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        try {
            DistributedLock lock = engine.lock("secrecy");
            LockHold hold = lock.acquire();
            OwnerId owner = java.util.Objects.requireNonNull(store.holders.get("secrecy"));
            assertThat(owner.value()).as("the store keeps the whole owner id").contains(secret);
            assertThat(java.util.List.of(
                            engine.toString(),
                            lock.toString(),
                            hold.toString(),
                            owner.toString(),
                            engine.admin().inspect("secrecy").orElseThrow().toString()))
                    .allSatisfy(s -> assertThat(s).doesNotContain(secret));
            assertThat(Thread.getAllStackTraces().keySet())
                    .extracting(Thread::getName)
                    .anySatisfy(n -> assertThat(n).startsWith("distlock-watchdog-"))
                    .allSatisfy(n -> assertThat(n).doesNotContain(secret));
            System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
            store.expire("secrecy"); // the next renewal finds the hold gone and logs the loss at WARN
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (hold.isValid() && System.nanoTime() - deadline < 0) {
                Thread.sleep(20);
            }
            assertThat(hold.isValid()).as("found lost").isFalse();
            // the log line follows the loss (validity also ends by time alone, before the watchdog tells it)
            while (!captured.toString(StandardCharsets.UTF_8).contains("lost lock 'secrecy'")
                    && System.nanoTime() - deadline < 0) {
                Thread.sleep(20);
            }
        } finally {
            System.setErr(err);
            engine.close();
        }
        String log = captured.toString(StandardCharsets.UTF_8);
        assertThat(log)
                .as("the loss is logged")
                .contains("lost lock 'secrecy'")
                .contains(OwnerId.redact(engine.clientId()));
        assertThat(log).doesNotContain(secret);
        assertThatThrownBy(() -> engine.lock("after-close").tryLock())
                .isInstanceOf(IllegalStateException.class)
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain(secret));
    }

    /** The 32 secret hex digits of a client id. */
    private static String secretOf(String clientId) {
        int dot = clientId.lastIndexOf('.');
        String secret = clientId.substring(dot + 9);
        assertThat(secret).hasSize(32);
        return secret;
    }
}
