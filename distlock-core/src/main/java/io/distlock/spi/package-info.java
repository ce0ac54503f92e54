/**
 * What a backend implements: the atomic steps of a lock store. For backend authors.
 *
 * <p>Each {@link io.distlock.spi.LockStore} method is a single round trip that never waits. Waiting, re-entry, the
 * lease watchdog, owner identity, argument checks and events are done once, for every backend, by {@code
 * io.distlock.internal}; a backend only decides how to take, renew and give back one hold atomically, and how to tell
 * the client that a holder is gone.
 */
@NullMarked
@CheckReturnValue
package io.distlock.spi;

import com.google.errorprone.annotations.CheckReturnValue;
import org.jspecify.annotations.NullMarked;
