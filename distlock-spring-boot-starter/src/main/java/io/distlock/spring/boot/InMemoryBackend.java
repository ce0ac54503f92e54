package io.distlock.spring.boot;

import io.distlock.LockClient;
import io.distlock.testkit.InMemoryLockClient;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;

/**
 * The in-process client of distlock-testkit, only when {@code distlock.backend=in-memory}: for tests. Each
 * client has a server of its own; a customizer that sets {@code server(..)} lets several contexts share one.
 */
final class InMemoryBackend implements DistlockBackend {
    private final DistlockProperties properties;
    private final ObjectProvider<LockClientBuilderCustomizer<InMemoryLockClient.Builder>> customizers;

    InMemoryBackend(
            DistlockProperties properties,
            ObjectProvider<LockClientBuilderCustomizer<InMemoryLockClient.Builder>> customizers) {
        this.properties = properties;
        this.customizers = customizers;
    }

    @Override
    public DistlockProperties.Backend id() {
        return DistlockProperties.Backend.IN_MEMORY;
    }

    @Override
    public @Nullable String configuredBy() {
        return null;
    }

    @Override
    public LockClient create() {
        InMemoryLockClient.Builder builder = InMemoryLockClient.builder();
        if (properties.getLeaseTime() != null) {
            builder.leaseTime(properties.getLeaseTime());
        }
        if (properties.getMaxWaiters() != null) {
            builder.maxWaiters(properties.getMaxWaiters());
        }
        customizers.orderedStream().forEach(c -> c.customize(builder));
        return builder.build();
    }
}
