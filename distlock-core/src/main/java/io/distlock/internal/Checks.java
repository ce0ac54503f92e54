package io.distlock.internal;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/** Argument checks with messages that name the argument and show the value. */
public final class Checks {
    /** The shortest lease a store can represent (Redis {@code PX}, database timestamps). */
    public static final Duration MIN_LEASE = Duration.ofMillis(1);
    /** Longer than any lease makes sense for; guards against overflow in stores and deadlines. */
    public static final Duration MAX_LEASE = Duration.ofDays(365 * 100L);
    /**
     * The longest lock name, in {@code char}s (at most 3,072 bytes in UTF-8): every store keeps such a name or its
     * key, and a client cannot be made to send megabytes per lock to a shared store.
     */
    public static final int MAX_NAME_LENGTH = 1024;

    private Checks() {}

    /** A lock name: not null, not blank, at most {@link #MAX_NAME_LENGTH} chars. Anything else is a valid name. */
    @CanIgnoreReturnValue
    public static String name(String name) {
        Objects.requireNonNull(name, "name");
        if (name.length() > MAX_NAME_LENGTH) { // the length, not the value: it may be megabytes
            throw new IllegalArgumentException(
                    "name must be at most " + MAX_NAME_LENGTH + " characters long: " + name.length());
        }
        if (name.isBlank()) {
            throw new IllegalArgumentException("name must not be blank: '" + name + "'");
        }
        return name;
    }

    /** A lease given as a duration. */
    @CanIgnoreReturnValue
    public static Duration lease(Duration lease, String argument) {
        Objects.requireNonNull(lease, argument);
        if (lease.compareTo(MIN_LEASE) < 0 || lease.compareTo(MAX_LEASE) > 0) {
            throw new IllegalArgumentException(
                    argument + " must be between " + MIN_LEASE + " and " + MAX_LEASE + ": " + lease);
        }
        return lease;
    }

    /** A lease given as an amount and a unit. */
    @CanIgnoreReturnValue
    public static Duration lease(long amount, TimeUnit unit, String argument) {
        Objects.requireNonNull(unit, "unit");
        if (amount <= 0) {
            throw new IllegalArgumentException(argument + " must be positive: " + amount + " " + unit);
        }
        long nanos = unit.toNanos(amount);
        if (nanos == Long.MAX_VALUE || nanos > MAX_LEASE.toNanos()) {
            throw new IllegalArgumentException(
                    argument + " overflows (at most " + MAX_LEASE + "): " + amount + " " + unit);
        }
        return lease(Duration.ofNanos(nanos), argument);
    }

    /** A wait as nanoseconds: zero or less means "try once"; anything very long means "as long as it takes". */
    public static long waitNanos(long amount, TimeUnit unit) {
        Objects.requireNonNull(unit, "unit");
        return amount <= 0 ? 0 : Math.min(unit.toNanos(amount), Long.MAX_VALUE / 4);
    }

    public static long waitNanos(Duration wait, String argument) {
        Objects.requireNonNull(wait, argument);
        if (wait.isNegative() || wait.isZero()) {
            return 0;
        }
        try {
            return Math.min(wait.toNanos(), Long.MAX_VALUE / 4);
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE / 4;
        }
    }

    /** A positive duration for an option, such as a builder's timeout. */
    @CanIgnoreReturnValue
    public static Duration positive(Duration value, String argument) {
        Objects.requireNonNull(value, argument);
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(argument + " must be positive: " + value);
        }
        return value;
    }

    /** A positive count. */
    @CanIgnoreReturnValue
    public static int positive(int value, String argument) {
        if (value <= 0) {
            throw new IllegalArgumentException(argument + " must be positive: " + value);
        }
        return value;
    }
}
