package io.distlock.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method while holding a distributed lock of the application's {@link io.distlock.LockClient}.
 *
 * <pre>{@code
 * @DistributedLock(key = "'stats:' + #day", waitTime = "0s", onTimeout = DistributedLock.OnTimeout.SKIP)
 * @Transactional
 * public void computeStats(LocalDate day, @FencingToken long token) { ... }
 * }</pre>
 *
 * <h2>Key</h2>
 *
 * <p>{@link #key} is a SpEL expression over the method's arguments ({@code #day}, {@code #p0}, {@code #a0}) and the
 * bean ({@code #root.target}, {@code #root.methodName}); its value, as a string, is the lock name. A literal name is
 * written in quotes: {@code "'nightly-report'"}. An empty key uses the class and method name.
 *
 * <h2>Release</h2>
 *
 * <p>Inside a Spring-managed transaction the lock is released after the transaction completes (commit or rollback),
 * so the next holder reads what this one committed; outside one it is released when the method returns or throws.
 * The hold belongs to the calling thread and is re-entrant: a locked method that calls another with the same key does
 * not wait for itself.
 *
 * <h2>Waiting and leases</h2>
 *
 * <p>{@link #waitTime} and {@link #leaseTime} are durations as Spring Boot reads them ({@code "500ms"}, {@code "5s"},
 * {@code "PT1M"}). An empty wait time takes {@code distlock.annotation.wait-time}, and without that the call waits as
 * long as it takes (answering interrupts). An empty lease lets the client's watchdog renew the hold for as long as the
 * method runs; a lease ends the hold when it runs out, renewed or not.
 *
 * <h2>Fencing</h2>
 *
 * <p>A {@code long} or {@code Long} parameter annotated {@link FencingToken} receives the hold's fencing token (the
 * value the caller passed is replaced), so the write the lock protects can be fenced.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface DistributedLock {

    /** SpEL over the method's arguments giving the lock name; empty for {@code ClassName.methodName}. */
    String key() default "";

    /** Which lock of the name to take. */
    Kind kind() default Kind.LOCK;

    /** How long to wait for the lock; empty for {@code distlock.annotation.wait-time} or no limit. */
    String waitTime() default "";

    /** A fixed lease with no renewal; empty for the watchdog. */
    String leaseTime() default "";

    /** What happens when the wait runs out. */
    OnTimeout onTimeout() default OnTimeout.THROW;

    /**
     * The method of the same bean to call when the wait runs out and {@link #onTimeout} is {@link
     * OnTimeout#FALLBACK}: it takes the same parameters as the locked method, or none, and returns a compatible type.
     */
    String fallback() default "";

    /** The lock kinds of a name. */
    enum Kind {
        /** The re-entrant lock ({@link io.distlock.LockClient#lock}). */
        LOCK,
        /** The fair lock: waiters in request order ({@link io.distlock.LockClient#fairLock}). */
        FAIR,
        /** The shared side of the name's read-write lock. */
        READ,
        /** The exclusive side of the name's read-write lock. */
        WRITE
    }

    /** What a call does when the lock is not acquired within the wait time. */
    enum OnTimeout {
        /** Throws {@link LockNotAcquiredException}. */
        THROW,
        /**
         * Skips the method: returns {@code null}, an empty {@link java.util.Optional}, or zero or false for a
         * primitive return type.
         */
        SKIP,
        /** Calls the {@link #fallback} method instead. */
        FALLBACK
    }
}
