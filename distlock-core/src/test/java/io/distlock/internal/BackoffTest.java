package io.distlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class BackoffTest {

    @Test
    void delays_growWithinBounds_andReset() {
        Backoff b = new Backoff(10, 1000);
        long maxSeen = 0;
        for (int i = 0; i < 200; i++) {
            long d = b.nextNanos();
            assertThat(d).isBetween(5L, 1000L);
            maxSeen = Math.max(maxSeen, d);
        }
        assertThat(maxSeen).as("reaches the cap region").isGreaterThan(500);
        b.reset();
        assertThat(b.nextNanos()).isBetween(5L, 10L);
    }

    @Test
    void badBounds_rejected() {
        assertThatThrownBy(() -> new Backoff(0, 10)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Backoff(10, 5)).isInstanceOf(IllegalArgumentException.class);
    }
}
