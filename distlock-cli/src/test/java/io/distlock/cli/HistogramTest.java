package io.distlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.assertj.core.data.Percentage;
import org.junit.jupiter.api.Test;

class HistogramTest {

    @Test
    void quantiles_uniformValues_withinTwoPercent() {
        Histogram h = new Histogram();
        for (long v = 1; v <= 10_000; v++) {
            h.record(v * 1000);
        }
        assertThat(h.count()).isEqualTo(10_000);
        assertThat(h.quantileNanos(0.5)).isCloseTo(5_000_000L, Percentage.withPercentage(2));
        assertThat(h.quantileNanos(0.99)).isCloseTo(9_900_000L, Percentage.withPercentage(2));
        assertThat(h.quantileNanos(1.0)).isCloseTo(10_000_000L, Percentage.withPercentage(2));
    }

    @Test
    void encode_decode_roundTripsAndMerges() {
        Histogram a = new Histogram();
        Histogram b = new Histogram();
        for (int i = 0; i < 100; i++) {
            a.record(1_000_000);
            b.record(50_000_000);
        }
        Histogram merged = Histogram.decode(a.encode());
        merged.add(Histogram.decode(b.encode()));
        assertThat(merged.count()).isEqualTo(200);
        assertThat(merged.quantileNanos(0.25)).isCloseTo(1_000_000L, Percentage.withPercentage(2));
        assertThat(merged.quantileNanos(0.99)).isCloseTo(50_000_000L, Percentage.withPercentage(2));
        assertThat(Histogram.decode(new Histogram().encode()).count()).isZero();
    }

    @Test
    void decode_garbage_throws() {
        assertThatThrownBy(() -> Histogram.decode("1:x")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Histogram.decode("99999:1")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void quantile_empty_throws() {
        assertThatThrownBy(() -> new Histogram().quantileNanos(0.5)).isInstanceOf(IllegalStateException.class);
    }
}
