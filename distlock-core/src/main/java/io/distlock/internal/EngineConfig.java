package io.distlock.internal;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Objects;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * What a backend's builder hands to {@link LockEngine}.
 *
 * @param clientId unique per client instance; prefix of every owner id it writes: a label, a dot, a public tag of 8
 *     hex digits and a secret of 32 (see {@link io.distlock.spi.OwnerId})
 * @param watchdogLease the lease of holds taken without a lease argument, renewed every third of it
 * @param ticker the monotonic clock for deadlines and local lease bookkeeping
 * @param metrics metrics hooks
 * @param handOffLimit how many times in a row a release may hand the lock straight to a waiting thread of the same
 *     client before it releases through the store, giving other clients a chance
 * @param latchExpiry how long a count-down latch's data stays in the store without a change
 * @param maxWaiters how many acquires and latch awaits of the client may wait at once (asynchronous ones too); one
 *     more is refused at once
 * @param asyncExecutor where asynchronous acquires run their steps and complete their futures; null: the client's own
 *     small pool of daemon threads, shut down with the client (a given executor is left running)
 */
public record EngineConfig(
        String clientId,
        Duration watchdogLease,
        Ticker ticker,
        LockMetrics metrics,
        int handOffLimit,
        Duration latchExpiry,
        int maxWaiters,
        @Nullable Executor asyncExecutor) {

    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);
    public static final int DEFAULT_HAND_OFF_LIMIT = 16;
    public static final Duration DEFAULT_LATCH_EXPIRY = Duration.ofDays(1);
    public static final int DEFAULT_MAX_WAITERS = 10_000;

    private static final SecureRandom RANDOM = new SecureRandom();

    public EngineConfig {
        Objects.requireNonNull(clientId, "clientId");
        if (clientId.isBlank() || clientId.indexOf(':') >= 0) {
            throw new IllegalArgumentException("clientId must be non-blank and contain no ':': '" + clientId + "'");
        }
        Checks.lease(watchdogLease, "watchdogLease");
        Objects.requireNonNull(ticker, "ticker");
        Objects.requireNonNull(metrics, "metrics");
        if (handOffLimit < 0) {
            throw new IllegalArgumentException("handOffLimit must not be negative: " + handOffLimit);
        }
        Checks.lease(latchExpiry, "latchExpiry");
        Checks.positive(maxWaiters, "maxWaiters");
    }

    /** Defaults with a fresh random client id. */
    public static EngineConfig defaults() {
        return new EngineConfig(
                newClientId(),
                DEFAULT_LEASE,
                Ticker.system(),
                LockMetrics.NONE,
                DEFAULT_HAND_OFF_LIMIT,
                DEFAULT_LATCH_EXPIRY,
                DEFAULT_MAX_WAITERS,
                null);
    }

    /** A fresh client id labelled with the process id, so an operator can tell which process wrote a hold. */
    public static String newClientId() {
        return newClientId("pid" + ProcessHandle.current().pid());
    }

    /**
     * A fresh client id with this label: {@code <label>.<tag><secret>}, where the 8-hex-digit tag tells clients apart
     * in logs and the 32-hex-digit secret (128 bits from {@link SecureRandom}) makes owner ids unguessable.
     *
     * @throws IllegalArgumentException if the label is blank or contains {@code ':'}
     */
    public static String newClientId(String label) {
        Objects.requireNonNull(label, "clientId");
        if (label.isBlank() || label.indexOf(':') >= 0) {
            throw new IllegalArgumentException("clientId must be non-blank and contain no ':': '" + label + "'");
        }
        byte[] random = new byte[20];
        RANDOM.nextBytes(random);
        return label + "." + HexFormat.of().formatHex(random);
    }

    /** The client id {@link #newClientId(String) made} from this label: the label followed by a fresh secret. */
    public EngineConfig withClientId(String label) {
        return new EngineConfig(
                newClientId(label),
                watchdogLease,
                ticker,
                metrics,
                handOffLimit,
                latchExpiry,
                maxWaiters,
                asyncExecutor);
    }

    public EngineConfig withWatchdogLease(Duration value) {
        return new EngineConfig(clientId, value, ticker, metrics, handOffLimit, latchExpiry, maxWaiters, asyncExecutor);
    }

    public EngineConfig withTicker(Ticker value) {
        return new EngineConfig(
                clientId, watchdogLease, value, metrics, handOffLimit, latchExpiry, maxWaiters, asyncExecutor);
    }

    public EngineConfig withMetrics(LockMetrics value) {
        return new EngineConfig(
                clientId, watchdogLease, ticker, value, handOffLimit, latchExpiry, maxWaiters, asyncExecutor);
    }

    public EngineConfig withHandOffLimit(int value) {
        return new EngineConfig(
                clientId, watchdogLease, ticker, metrics, value, latchExpiry, maxWaiters, asyncExecutor);
    }

    public EngineConfig withMaxWaiters(int value) {
        return new EngineConfig(
                clientId, watchdogLease, ticker, metrics, handOffLimit, latchExpiry, value, asyncExecutor);
    }

    public EngineConfig withAsyncExecutor(@Nullable Executor value) {
        return new EngineConfig(clientId, watchdogLease, ticker, metrics, handOffLimit, latchExpiry, maxWaiters, value);
    }

    public EngineConfig withLatchExpiry(Duration value) {
        return new EngineConfig(
                clientId, watchdogLease, ticker, metrics, handOffLimit, value, maxWaiters, asyncExecutor);
    }
}
