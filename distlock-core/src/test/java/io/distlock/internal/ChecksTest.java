package io.distlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ChecksTest {

    @Test
    void lease_badValues_nameArgumentAndValue() {
        assertThatThrownBy(() -> Checks.lease(0, TimeUnit.SECONDS, "leaseTime"))
                .hasMessage("leaseTime must be positive: 0 SECONDS");
        assertThatThrownBy(() -> Checks.lease(Long.MAX_VALUE, TimeUnit.HOURS, "leaseTime"))
                .hasMessageStartingWith("leaseTime overflows");
        assertThatThrownBy(() -> Checks.lease(Duration.ofNanos(10), "lease"))
                .hasMessageContaining("lease must be between")
                .hasMessageEndingWith("PT0.00000001S");
        assertThat(Checks.lease(30, TimeUnit.SECONDS, "leaseTime")).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void name_nullOrBlank_rejected() {
        assertThatThrownBy(() -> Checks.name(nullString()))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("name");
        assertThatThrownBy(() -> Checks.name(" ")).hasMessage("name must not be blank: ' '");
        assertThat(Checks.name(" x ")).isEqualTo(" x ");
    }

    @Test
    void name_longerThanTheLimit_rejectedWithItsLength() {
        String longest = "n".repeat(Checks.MAX_NAME_LENGTH);
        assertThat(Checks.name(longest)).isSameAs(longest);
        assertThat(Checks.name("✓".repeat(Checks.MAX_NAME_LENGTH))).hasSize(1024);
        assertThatThrownBy(() -> Checks.name(longest + "n"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("name must be at most 1024 characters long: 1025");
        assertThatThrownBy(() -> Checks.name(" ".repeat(1 << 20)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("name must be at most 1024 characters long: 1048576");
    }

    @Test
    void waitNanos_zeroOrNegativeMeansTryOnce_hugeIsBounded() {
        assertThat(Checks.waitNanos(-1, TimeUnit.SECONDS)).isZero();
        assertThat(Checks.waitNanos(Duration.ofSeconds(-1), "wait")).isZero();
        assertThat(Checks.waitNanos(Long.MAX_VALUE, TimeUnit.DAYS)).isEqualTo(Long.MAX_VALUE / 4);
        assertThat(Checks.waitNanos(Duration.ofSeconds(Long.MAX_VALUE), "wait")).isEqualTo(Long.MAX_VALUE / 4);
    }

    @SuppressWarnings("NullAway")
    private static String nullString() {
        return null;
    }
}
