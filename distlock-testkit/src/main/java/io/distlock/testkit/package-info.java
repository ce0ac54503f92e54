/**
 * The contract every distlock backend keeps, as executable JUnit 5 test interfaces, plus what those tests need: the
 * fenced resource that catches two holders at once, an in-memory {@link io.distlock.LockClient} with exactly the
 * contract's semantics (also for users' own unit tests), and timing helpers.
 *
 * <p>A backend's {@code *IT} class implements {@link io.distlock.testkit.BackendUnderTest} and every contract
 * interface it supports; the interfaces it implements are the capabilities it claims.
 */
@NullMarked
package io.distlock.testkit;

import org.jspecify.annotations.NullMarked;
