package io.distlock.internal;

/**
 * A monotonic clock in nanoseconds, as {@link System#nanoTime()}: only differences between readings mean anything.
 * Injectable so that lease and back-off logic can be tested without sleeping.
 */
@FunctionalInterface
public interface Ticker {

    long read();

    static Ticker system() {
        return System::nanoTime;
    }
}
