package io.distlock.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** No server: the harness's phases run bodies that only count, sleep or fail. */
@Timeout(120)
class HarnessTest {
    private static final Scenarios.Timing SHORT = new Scenarios.Timing(Duration.ofMillis(50), Duration.ofMillis(300));

    @Test
    void warm_jitQuiet_endsAfterOneQuietStep() throws Exception {
        List<Duration> steps = new ArrayList<>();
        long start = System.nanoTime();
        Harness.warm(Duration.ofMillis(80), steps::add, () -> 42, Duration.ofSeconds(30));
        Duration took = Duration.ofNanos(System.nanoTime() - start);

        assertThat(steps).containsExactly(Duration.ofMillis(80), Harness.JIT_QUIET);
        assertThat(took).isLessThan(Duration.ofSeconds(5));
    }

    @Test
    void warm_jitStillCompiling_goesOnInQuietSteps_untilTheBound() throws Exception {
        AtomicLong compiled = new AtomicLong();
        List<Duration> steps = new ArrayList<>();
        long start = System.nanoTime();
        Harness.warm(
                Duration.ofMillis(80),
                d -> {
                    steps.add(d);
                    Harness.sleep(d);
                },
                compiled::incrementAndGet,
                Duration.ofMillis(1250));
        Duration took = Duration.ofNanos(System.nanoTime() - start);

        // 1.25 s of 0.5 s steps after the fixed part: three steps start before the bound
        assertThat(steps).hasSize(4);
        assertThat(steps.get(0)).isEqualTo(Duration.ofMillis(80));
        assertThat(steps.subList(1, 4)).containsOnly(Harness.JIT_QUIET);
        assertThat(took).isGreaterThanOrEqualTo(Duration.ofMillis(80 + 3 * 500));
    }

    @Test
    void warm_jitDoesNotTell_onlyTheFixedLength() throws Exception {
        List<Duration> steps = new ArrayList<>();
        Harness.warm(Duration.ofMillis(80), steps::add, () -> -1, Duration.ofSeconds(30));

        assertThat(steps).containsExactly(Duration.ofMillis(80));
    }

    @Test
    void jitMillis_growsWhileTheJitCompiles() {
        // warm() waits for a step in which this clock stands still: a clock that never moves, or is not told (-1),
        // would end every warm-up after its fixed part, the JIT still compiling
        long before = Harness.jitMillis();
        assertThat(before).as("HotSpot tells its compilation time").isPositive();
        long giveUp = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        long sink = 0;
        for (int round = 0; Harness.jitMillis() == before && System.nanoTime() - giveUp < 0; round++) {
            // hot code the JIT has not seen: C1 and then C2 compile it
            sink += new SplittableRandom(round)
                    .ints(10_000)
                    .map(i -> (i * 31) ^ (i >>> 7))
                    .sum();
        }
        assertThat(Harness.jitMillis()).as("after hot code (%d)", sink).isGreaterThan(before);
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
        // warmed alone before the interleaved part (at least SHORT's 50 ms and one quiet step of 1 ms sleeps: over
        // 300 calls), besides the 50 ms interleaved warm-up (at most about 50)
        assertThat(slow.get() - s.ops()).isGreaterThan(300);
        Harness.Result e = Harness.row(rows, "failing");
        assertThat(e.ops()).isZero();
        assertThat(e.errors()).isPositive();
        assertThat(e.firstError()).contains("store down");
    }

    @Test
    void interleaved_eachBodyFollowsEveryOtherOne() {
        // with a rotation, body i would follow i-1 in 3 rounds of 4 and i-2 in the 4th, and never i+1
        int n = 4;
        int[] last = {-1};
        long[][] follows = new long[n][n]; // follows[i][j]: times body i ran right after body j
        List<Harness.Body> bodies = new ArrayList<>();
        List<String> labels = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int me = i;
            labels.add("b" + i);
            bodies.add((t, p) -> {
                if (last[0] >= 0) {
                    follows[me][last[0]]++;
                }
                last[0] = me;
            });
        }

        var unused = Harness.interleaved(labels, bodies, SHORT);

        for (int i = 0; i < n; i++) {
            long all = Arrays.stream(follows[i]).sum() - follows[i][i]; // not counting the warm-up alone
            for (int j = 0; j < n; j++) {
                if (j != i) {
                    assertThat(follows[i][j])
                            .as("b%d ran after b%d, of %d", i, j, all)
                            .isGreaterThan(all / 10);
                }
            }
        }
    }

    @Test
    void shuffle_keepsEveryElement_andMakesEveryOrder() {
        SplittableRandom random = new SplittableRandom(1);
        Set<String> seen = new HashSet<>();
        for (int k = 0; k < 600; k++) {
            int[] a = {0, 1, 2};
            Harness.shuffle(a, random);
            assertThat(a).containsExactlyInAnyOrder(0, 1, 2);
            seen.add(Arrays.toString(a));
        }
        assertThat(seen).hasSize(6);
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
                new Scenarios.Timing(Duration.ofMillis(50), Duration.ofMillis(2000)),
                null);

        Harness.Result quick = Harness.row(rows, "quick");
        Harness.Result sleepy = Harness.row(rows, "sleepy");
        assertThat(quick.sliceRates()).isNotEmpty().hasSameSizeAs(sleepy.sliceRates());
        assertThat(quick.opsPerSec()).isGreaterThan(sleepy.opsPerSec());
        // two threads that each sleep 2 ms per operation: at most 1,000 ops/s
        assertThat(sleepy.opsPerSec()).isBetween(1.0, 1000.0);
        assertThat(quick.sliceRates()).hasSize(2); // 2 s: two rounds of 1 s slices
        double[] ratios = Harness.roundRatios(quick, sleepy);
        assertThat(ratios).hasSize(2);
        assertThat(ratios[0]).isGreaterThan(1.0);
        assertThat(ratios[0]).isLessThanOrEqualTo(ratios[1]);
    }
}
