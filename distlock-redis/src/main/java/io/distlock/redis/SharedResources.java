package io.distlock.redis;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The Lettuce thread pools shared by every Lettuce client this module creates itself (Lettuce recommends one set per
 * process): created with the first such client, shut down after the last one closes.
 */
final class SharedResources {
    private static final ReentrantLock lock = new ReentrantLock();
    private static final Set<AbstractRedisClient> users = Collections.newSetFromMap(new IdentityHashMap<>());
    private static @Nullable ClientResources resources;

    private SharedResources() {}

    /** Makes a Lettuce client on the shared resources; {@link #release} it when it is shut down. */
    static <C extends AbstractRedisClient> C newClient(Function<ClientResources, C> factory) {
        lock.lock();
        try {
            ClientResources r = resources;
            if (r == null) {
                r = DefaultClientResources.create();
                resources = r;
            }
            C client = factory.apply(r);
            users.add(client);
            return client;
        } finally {
            lock.unlock();
        }
    }

    static void release(AbstractRedisClient client) {
        ClientResources toShutdown = null;
        lock.lock();
        try {
            if (users.remove(client) && users.isEmpty()) {
                toShutdown = resources;
                resources = null;
            }
        } finally {
            lock.unlock();
        }
        if (toShutdown != null) {
            var unused = toShutdown.shutdown(0, 2, TimeUnit.SECONDS);
        }
    }
}
