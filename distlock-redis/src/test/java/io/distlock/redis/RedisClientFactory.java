package io.distlock.redis;

import io.distlock.LockClient;
import io.distlock.testkit.ClientFactory;

/** Makes a Redis lock client in a child JVM of the multi-process contracts; the argument is the server's URI. */
public final class RedisClientFactory implements ClientFactory {
    @Override
    public LockClient create(String argument) {
        return RedisLockClient.create(argument);
    }
}
