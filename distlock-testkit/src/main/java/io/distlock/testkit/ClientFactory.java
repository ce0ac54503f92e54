package io.distlock.testkit;

import io.distlock.LockClient;

/**
 * Makes a client in a child JVM for the multi-process contracts. Implementations need a public no-argument
 * constructor; {@code argument} is whatever the parent's fixture passed (a URI, a JDBC URL, a connect string).
 */
public interface ClientFactory {
    LockClient create(String argument);
}
