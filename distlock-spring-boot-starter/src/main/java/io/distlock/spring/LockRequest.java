package io.distlock.spring;

import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What {@link LockTemplate} takes: a name, a kind, how long to wait and the lease.
 *
 * @param name the lock name; not blank
 * @param kind which lock of the name
 * @param waitTime how long to wait; null to wait as long as it takes; zero or less tries once
 * @param leaseTime a fixed lease with no renewal; null for the watchdog
 */
public record LockRequest(
        String name, DistributedLock.Kind kind, @Nullable Duration waitTime, @Nullable Duration leaseTime) {

    public LockRequest {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(kind, "kind");
        if (name.isBlank()) {
            throw new IllegalArgumentException("name must not be blank: '" + name + "'");
        }
        if (leaseTime != null && (leaseTime.isNegative() || leaseTime.isZero())) {
            throw new IllegalArgumentException("leaseTime must be positive: " + leaseTime);
        }
    }

    /** The lock of this name, waiting as long as it takes, renewed by the watchdog. */
    public static LockRequest of(String name) {
        return new LockRequest(name, DistributedLock.Kind.LOCK, null, null);
    }

    /** The same request with this kind. */
    public LockRequest kind(DistributedLock.Kind value) {
        return new LockRequest(name, value, waitTime, leaseTime);
    }

    /** The same request with this wait time (zero or less tries once). */
    public LockRequest waitTime(Duration value) {
        return new LockRequest(name, kind, Objects.requireNonNull(value, "waitTime"), leaseTime);
    }

    /** The same request with a fixed lease and no renewal. */
    public LockRequest leaseTime(Duration value) {
        return new LockRequest(name, kind, waitTime, Objects.requireNonNull(value, "leaseTime"));
    }
}
