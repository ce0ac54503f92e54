package io.distlock.testkit;

import java.time.Duration;

/**
 * Waits in tests, scaled by the system property {@code distlock.timing} (default 1) so that slow machines can stretch
 * them without editing tests. Used only for bounds ("within"), never for expected durations.
 */
public final class Timing {
    private static final double MULTIPLIER = Double.parseDouble(System.getProperty("distlock.timing", "1"));

    private Timing() {}

    public static Duration scaled(Duration d) {
        return Duration.ofNanos((long) (d.toNanos() * MULTIPLIER));
    }

    public static Duration seconds(long s) {
        return scaled(Duration.ofSeconds(s));
    }

    public static Duration millis(long ms) {
        return scaled(Duration.ofMillis(ms));
    }

    public static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
