package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Builder validation; no server needed. */
class RedisLockClientTest {

    @Test
    void builder_nothingChosen_throwsIllegalState() {
        assertThatThrownBy(() -> RedisLockClient.builder().build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("uri");
    }

    @Test
    void builder_uriAndCluster_throwsIllegalState() {
        assertThatThrownBy(() -> RedisLockClient.builder()
                        .uri("redis://127.0.0.1:1")
                        .cluster("redis://127.0.0.1:2")
                        .build())
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void builder_badUri_throwsIllegalArgument_withoutPassword() {
        assertThatThrownBy(() -> RedisLockClient.builder().uri("http://user:secret@host:1"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("uri")
                .hasMessageNotContaining("secret");
    }

    @Test
    @SuppressWarnings("NullAway") // passing null on purpose
    void builder_nullArguments_throwNullPointer() {
        assertThatThrownBy(() -> RedisLockClient.builder().uri((String) null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> RedisLockClient.builder().keyPrefix(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> RedisLockClient.builder().leaseTime(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void builder_badValues_throwIllegalArgument_namingTheValue() {
        assertThatThrownBy(() -> RedisLockClient.builder().leaseTime(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaseTime")
                .hasMessageContaining("PT-1S");
        assertThatThrownBy(() -> RedisLockClient.builder().keyPrefix("x{"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("x{");
        assertThatThrownBy(() -> RedisLockClient.builder().replicaAcks(-1, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("-1");
        assertThatThrownBy(() -> RedisLockClient.builder().waiterTimeout(Duration.ofMillis(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("PT0.001S");
        assertThatThrownBy(() -> RedisLockClient.builder().clientId("a:b"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("a:b");
        assertThatThrownBy(() -> RedisLockClient.builder().cluster()).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @SuppressWarnings("NullAway") // passing null on purpose
    void builder_badCommandTimeout_throws_namingTheArgumentAndValue() {
        assertThatThrownBy(() -> RedisLockClient.builder().commandTimeout(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("commandTimeout");
        assertThatThrownBy(() -> RedisLockClient.builder().commandTimeout(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("commandTimeout")
                .hasMessageContaining("PT0S");
        assertThatThrownBy(() -> RedisLockClient.builder().commandTimeout(Duration.ofNanos(999_999)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("commandTimeout")
                .hasMessageContaining("PT0.000999999S");
        assertThatThrownBy(() -> RedisLockClient.builder().commandTimeout(Duration.ofSeconds(-2)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("PT-2S");
    }

    @Test
    void builder_commandTimeoutNotLongerThanTheReplicaWait_throwsIllegalState_namingBoth() {
        // checked before connecting: nothing listens on port 1
        assertThatThrownBy(() -> RedisLockClient.builder()
                        .uri("redis://127.0.0.1:1")
                        .replicaAcks(1, Duration.ofSeconds(2))
                        .commandTimeout(Duration.ofSeconds(2))
                        .build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("commandTimeout")
                .hasMessageContaining("PT2S <= PT2S");
    }

    @Test
    @SuppressWarnings("NullAway") // passing null on purpose
    void builder_synchronizerAndAsyncOptions_badValues_throw_namingTheArgument() {
        assertThatThrownBy(() -> RedisLockClient.builder().asyncExecutor(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("asyncExecutor");
        assertThatThrownBy(() -> RedisLockClient.builder().maxWaiters(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("maxWaiters must be positive: 0");
        assertThatThrownBy(() -> RedisLockClient.builder().latchExpiry(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("latchExpiry")
                .hasMessageContaining("PT-1S");
        assertThatThrownBy(() -> RedLockClient.builder().asyncExecutor(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("asyncExecutor");
    }
}
