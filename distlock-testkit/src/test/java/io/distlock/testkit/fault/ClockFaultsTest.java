package io.distlock.testkit.fault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A clock jump on a real child process: its wall clock moves and comes back; its monotonic clock does not move. */
class ClockFaultsTest {

    @Test
    void jump_movesTheWallClockOfTheProcessesOnTheClock_notTheirMonotonicClock_andHealsByItself() throws Exception {
        List<String> log = new CopyOnWriteArrayList<>();
        try (ClockFaults.FakeClock clock = ClockFaults.fakeClock("child")) {
            double[] before = clocks(clock);
            assertThat(before[0]).isCloseTo(System.currentTimeMillis() / 1e3, within(5.0));

            Fault f = clock.jump(Duration.ofHours(-1), Duration.ofSeconds(3), (n, t, s) -> log.add(n + " " + t + s));
            double[] during = clocks(clock);
            assertThat(during[0]).isCloseTo(System.currentTimeMillis() / 1e3 - 3600, within(5.0));
            assertThat(during[1])
                    .as("the monotonic clock is the machine's, as this JVM's nanoTime")
                    .isCloseTo(System.nanoTime() / 1e9, within(5.0));

            assertThat(f.awaitHealed(Duration.ofSeconds(10))).isTrue();
            assertThat(clocks(clock)[0]).isCloseTo(System.currentTimeMillis() / 1e3, within(5.0));
        }
        assertThat(log).containsExactly("clock-3600s childtrue", "clock-3600s childfalse");
    }

    /** The wall and monotonic clocks in seconds, as a child process on {@code clock} reads them. */
    private static double[] clocks(ClockFaults.FakeClock clock) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(
                        "python3", "-c", "import time; print(time.time(), time.clock_gettime(time.CLOCK_MONOTONIC))")
                .redirectErrorStream(true);
        pb.environment().putAll(clock.environment());
        Process p = pb.start();
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        String[] out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8)
                .trim()
                .split("\\s+");
        return new double[] {Double.parseDouble(out[0]), Double.parseDouble(out[1])};
    }
}
