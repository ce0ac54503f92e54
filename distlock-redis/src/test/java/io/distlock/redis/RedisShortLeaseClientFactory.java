package io.distlock.redis;

import io.distlock.LockClient;
import io.distlock.testkit.ClientFactory;
import java.time.Duration;

/**
 * Makes a Redis lock client with a 3 s watchdog lease in a child JVM of the multi-process synchronizer contracts, so a
 * killed child's holds end within seconds; the argument is the server's URI.
 */
public final class RedisShortLeaseClientFactory implements ClientFactory {
    static final Duration LEASE = Duration.ofSeconds(3);

    @Override
    public LockClient create(String argument) {
        return RedisLockClient.builder().uri(argument).leaseTime(LEASE).build();
    }
}
