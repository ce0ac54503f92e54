/**
 * What a backend implements: the atomic steps of a store. For backend authors.
 *
 * <p>{@link io.distlock.spi.ClaimStore} takes, renews and gives back holds (locks, read-write locks, semaphores),
 * {@link io.distlock.spi.CounterStore} keeps count-down latches and {@link io.distlock.spi.ClaimAdmin} the operator's
 * steps; optional abilities are interfaces the engine discovers once. Each method is a single round trip that never
 * waits. Waiting, re-entry, the
 * lease watchdog, owner identity, argument checks and events are done once, for every backend, by {@code
 * io.distlock.internal}; a backend only decides how to take, renew and give back one hold atomically, and how to tell
 * the client that a holder is gone.
 */
@NullMarked
@CheckReturnValue
package io.distlock.spi;

import com.google.errorprone.annotations.CheckReturnValue;
import org.jspecify.annotations.NullMarked;
