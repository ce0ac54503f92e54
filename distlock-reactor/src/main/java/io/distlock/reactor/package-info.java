/**
 * Project Reactor adapters of distlock: {@link io.distlock.reactor.ReactiveLocks}. Optional: only applications that use
 * Reactor need this module.
 */
@NullMarked
package io.distlock.reactor;

import org.jspecify.annotations.NullMarked;
