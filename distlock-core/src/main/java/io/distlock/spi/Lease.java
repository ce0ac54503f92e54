package io.distlock.spi;

import java.time.Duration;
import java.util.Objects;

/**
 * What a hold's lease is, carried unchanged from the API to the store: renewed by the client's watchdog (every third
 * of its length, for as long as the hold lasts), or fixed (it ends when its length has passed, with no renewal).
 * Either way {@link #length()} is how long the store keeps the hold from the grant or the last renewal.
 */
public sealed interface Lease {

    /** How long the hold lasts from its grant or last renewal. */
    Duration length();

    /** Whether the client's watchdog renews the hold. */
    boolean renewed();

    /** A lease the watchdog renews; {@code length} is the client's watchdog lease. */
    static Lease renewed(Duration length) {
        return new Renewed(length);
    }

    /** A lease that ends after {@code length}, with no renewal. */
    static Lease fixed(Duration length) {
        return new Fixed(length);
    }

    /** Renewed by the watchdog. */
    record Renewed(Duration length) implements Lease {
        public Renewed {
            checkPositive(length);
        }

        @Override
        public boolean renewed() {
            return true;
        }
    }

    /** Fixed: ends with its length. */
    record Fixed(Duration length) implements Lease {
        public Fixed {
            checkPositive(length);
        }

        @Override
        public boolean renewed() {
            return false;
        }
    }

    private static void checkPositive(Duration length) {
        Objects.requireNonNull(length, "length");
        if (length.isNegative() || length.isZero()) {
            throw new IllegalArgumentException("lease length must be positive: " + length);
        }
    }
}
