package io.distlock.jdbc;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Builder validation of the synchronizer and async options; no server needed. */
class JdbcLockClientTest {

    @Test
    @SuppressWarnings("NullAway") // passing null on purpose
    void builder_synchronizerAndAsyncOptions_badValues_throw_namingTheArgument() {
        assertThatThrownBy(() -> JdbcLockClient.builder().asyncExecutor(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("asyncExecutor");
        assertThatThrownBy(() -> JdbcLockClient.builder().maxWaiters(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("maxWaiters must be positive: 0");
        assertThatThrownBy(() -> JdbcLockClient.builder().latchExpiry(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("latchExpiry")
                .hasMessageContaining("PT-1S");
        assertThatThrownBy(() -> JdbcLockClient.builder().latchExpiry(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("latchExpiry");
    }
}
