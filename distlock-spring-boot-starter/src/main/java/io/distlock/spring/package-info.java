/**
 * Spring integration of distlock: the {@link io.distlock.spring.DistributedLock} annotation, {@link
 * io.distlock.spring.LockTemplate} for code that cannot use it, and what they share (transaction-aware release,
 * observations, the registry of this instance's holds).
 */
@NullMarked
package io.distlock.spring;

import org.jspecify.annotations.NullMarked;
