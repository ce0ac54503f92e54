/**
 * Distributed locks with {@code java.util.concurrent} semantics.
 *
 * <p>A {@link io.distlock.LockClient} is the entry point: one per process and store, shared by all threads. It hands
 * out {@link io.distlock.DistributedLock}s, which are {@link java.util.concurrent.locks.Lock}s whose owner is the
 * calling thread, and {@link io.distlock.LockHold}s, whose owner is the handle itself and which any thread may
 * release. Every backend keeps the same contract: mutual exclusion within a lease, owner-checked release, re-entry
 * counted in the client, leases renewed by a watchdog, lost holds reported at once, and a fencing token on every
 * fresh acquisition.
 */
@NullMarked
@CheckReturnValue
package io.distlock;

import com.google.errorprone.annotations.CheckReturnValue;
import org.jspecify.annotations.NullMarked;
