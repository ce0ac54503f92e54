package io.distlock.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** No server: the harness's phases run bodies that only count, sleep or fail. */
class HarnessTest {
    private static final Scenarios.Timing SHORT = new Scenarios.Timing(Duration.ofMillis(50), Duration.ofMillis(300));

    @Test
    void warm_runsTheFixedLengthFirst_thenStepsUntilTheJitIsQuiet_bounded() throws Exception {
        List<Duration> steps = new ArrayList<>();
        Duration took = Harness.warm(Duration.ofMillis(80), d -> {
            steps.add(d);
            Harness.sleep(d);
        });

        assertThat(steps.get(0)).isEqualTo(Duration.ofMillis(80));
        assertThat(steps.subList(1, steps.size())).allMatch(Harness.JIT_QUIET::equals);
        assertThat(took).isGreaterThanOrEqualTo(Duration.ofMillis(80));
        // a quiet step ends it; only a JIT that never stops compiling keeps it going, and only for JIT_WAIT more
        assertThat(took)
                .isLessThan(Duration.ofMillis(80).plus(Harness.JIT_WAIT).plus(Harness.JIT_QUIET.multipliedBy(2)));
    }

    @Test
    void jitMillis_countsUp() {
        long before = Harness.jitMillis();
        assertThat(before).as("HotSpot tells its compilation time").isNotNegative();
        assertThat(Harness.jitMillis()).isGreaterThanOrEqualTo(before);
    }

    @Test
    void interleaved_everyBodyMeasured_errorsCounted_labelsKept() {
        AtomicLong fast = new AtomicLong();
        AtomicLong slow = new AtomicLong();
        AtomicLong failing = new AtomicLong();
        List<Harness.Result> rows = Harness.interleaved(
                List.of("fast", "slow", "failing"),
                List.of(
                        (t, p) -> fast.incrementAndGet(),
                        (t, p) -> {
                            slow.incrementAndGet();
                            Thread.sleep(1);
                        },
                        (t, p) -> {
                            failing.incrementAndGet();
                            throw new IllegalStateException("store down");
                        }),
                SHORT);

        assertThat(rows).extracting(Harness.Result::label).containsExactly("fast", "slow", "failing");
        Harness.Result f = Harness.row(rows, "fast");
        Harness.Result s = Harness.row(rows, "slow");
        // one operation of each in turn: the measured rows ran about as many operations each
        assertThat(f.ops()).isPositive();
        assertThat(Math.abs(f.ops() - s.ops())).isLessThanOrEqualTo(1);
        assertThat(s.p50Micros()).isGreaterThan(f.p50Micros());
        assertThat(s.p50Micros()).isGreaterThanOrEqualTo(1000);
        // warmed alone before the interleaved part: more calls than measured operations
        assertThat(fast.get()).isGreaterThan(f.ops());
        Harness.Result e = Harness.row(rows, "failing");
        assertThat(e.ops()).isZero();
        assertThat(e.errors()).isPositive();
        assertThat(e.firstError()).contains("store down");
    }

    @Test
    void row_unknownLabel_namesItAndTheLabelsThereAre() {
        List<Harness.Result> rows = Harness.interleaved(List.of("a"), List.of((t, p) -> {}), SHORT);

        assertThat(Harness.ops(rows, "a")).isPositive();
        assertThatThrownBy(() -> Harness.row(rows, "b"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'b'")
                .hasMessageContaining("[a]");
    }

    @Test
    void alternating_eachBodyItsOwnSlices_roundRatiosPerRound() {
        List<Harness.Result> rows = Harness.alternating(
                List.of("quick", "sleepy"),
                List.of((t, r) -> {}, (t, r) -> {
                    try {
                        Thread.sleep(2);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }),
                2,
                SHORT,
                null);

        Harness.Result quick = Harness.row(rows, "quick");
        Harness.Result sleepy = Harness.row(rows, "sleepy");
        assertThat(quick.sliceRates()).isNotEmpty().hasSameSizeAs(sleepy.sliceRates());
        assertThat(quick.opsPerSec()).isGreaterThan(sleepy.opsPerSec());
        // two threads that each sleep 2 ms per operation: at most 1,000 ops/s
        assertThat(sleepy.opsPerSec()).isBetween(1.0, 1000.0);
        double[] ratios = Harness.roundRatios(quick, sleepy);
        assertThat(ratios).hasSize(quick.sliceRates().size());
        assertThat(ratios).isSorted();
        assertThat(ratios[0]).isGreaterThan(1.0);
    }
}
