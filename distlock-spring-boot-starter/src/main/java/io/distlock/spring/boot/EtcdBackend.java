package io.distlock.spring.boot;

import io.distlock.LockClient;
import io.distlock.etcd.EtcdLockClient;
import io.etcd.jetcd.Client;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;

/**
 * etcd, on {@code distlock.etcd.endpoints} (a jetcd client of the lock client's own), or else on the application's
 * jetcd {@link Client} bean (used, never closed).
 */
final class EtcdBackend implements DistlockBackend {
    private final DistlockProperties properties;
    private final ObjectProvider<Client> clients;
    private final ObjectProvider<LockClientBuilderCustomizer<EtcdLockClient.Builder>> customizers;

    EtcdBackend(
            DistlockProperties properties,
            ObjectProvider<Client> clients,
            ObjectProvider<LockClientBuilderCustomizer<EtcdLockClient.Builder>> customizers) {
        this.properties = properties;
        this.clients = clients;
        this.customizers = customizers;
    }

    @Override
    public DistlockProperties.Backend id() {
        return DistlockProperties.Backend.ETCD;
    }

    @Override
    public @Nullable String configuredBy() {
        if (properties.getEtcd().getEndpoints() != null) {
            return "distlock.etcd.endpoints";
        }
        return clients.getIfUnique() != null ? "a jetcd Client bean" : null;
    }

    @Override
    public LockClient create() {
        DistlockProperties.Etcd etcd = properties.getEtcd();
        EtcdLockClient.Builder builder =
                EtcdLockClient.builder().namespace(etcd.getNamespace()).requestTimeout(etcd.getRequestTimeout());
        String endpoints = etcd.getEndpoints();
        Client client = clients.getIfUnique();
        if (endpoints != null) {
            builder.endpoints(endpoints);
            if (etcd.getUser() != null) {
                builder.user(etcd.getUser());
            }
            if (etcd.getPassword() != null) {
                builder.password(etcd.getPassword());
            }
        } else if (client != null) {
            builder.client(client);
        } else {
            throw new IllegalStateException(
                    "distlock.backend=etcd needs distlock.etcd.endpoints or a jetcd Client bean");
        }
        if (properties.getLeaseTime() != null) {
            builder.leaseTtl(properties.getLeaseTime());
        }
        if (properties.getClientId() != null) {
            builder.clientId(properties.getClientId());
        }
        if (properties.getMaxWaiters() != null) {
            builder.maxWaiters(properties.getMaxWaiters());
        }
        customizers.orderedStream().forEach(c -> c.customize(builder));
        return builder.build();
    }
}
