/**
 * Launchers for real local servers on free loopback ports, for backends' integration tests: each starts the
 * server's own process (no Docker), waits until it answers, and stops it after the test class.
 */
@NullMarked
package io.distlock.testkit.server;

import org.jspecify.annotations.NullMarked;
