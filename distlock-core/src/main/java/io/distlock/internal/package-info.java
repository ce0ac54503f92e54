/**
 * The machinery every backend shares: the one implementation of {@link io.distlock.DistributedLock} over a {@link
 * io.distlock.spi.ClaimStore} (owner identity, re-entry, waiting, hand-off), the lease watchdog, back-off, argument
 * checks, the ticker and metrics hooks.
 *
 * <p>Public only so that backend modules can reach it; it is not API and may change in any release.
 */
@NullMarked
@CheckReturnValue
package io.distlock.internal;

import com.google.errorprone.annotations.CheckReturnValue;
import org.jspecify.annotations.NullMarked;
