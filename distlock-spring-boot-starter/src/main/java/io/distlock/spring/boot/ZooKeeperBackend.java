package io.distlock.spring.boot;

import io.distlock.LockClient;
import io.distlock.zookeeper.ZooKeeperLockClient;
import org.apache.curator.framework.CuratorFramework;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;

/**
 * ZooKeeper, on the application's started {@link CuratorFramework} bean (used, never closed), or else on {@code
 * distlock.zookeeper.connect-string} (a Curator client of the lock client's own).
 */
final class ZooKeeperBackend implements DistlockBackend {
    private final DistlockProperties properties;
    private final ObjectProvider<CuratorFramework> curators;
    private final ObjectProvider<LockClientBuilderCustomizer<ZooKeeperLockClient.Builder>> customizers;

    ZooKeeperBackend(
            DistlockProperties properties,
            ObjectProvider<CuratorFramework> curators,
            ObjectProvider<LockClientBuilderCustomizer<ZooKeeperLockClient.Builder>> customizers) {
        this.properties = properties;
        this.curators = curators;
        this.customizers = customizers;
    }

    @Override
    public DistlockProperties.Backend id() {
        return DistlockProperties.Backend.ZOOKEEPER;
    }

    @Override
    public @Nullable String configuredBy() {
        if (properties.getZookeeper().getConnectString() != null) {
            return "distlock.zookeeper.connect-string";
        }
        return curators.getIfUnique() != null ? "a CuratorFramework bean" : null;
    }

    @Override
    public LockClient create() {
        DistlockProperties.ZooKeeper zk = properties.getZookeeper();
        ZooKeeperLockClient.Builder builder = ZooKeeperLockClient.builder().rootPath(zk.getRootPath());
        String connectString = zk.getConnectString();
        CuratorFramework curator = curators.getIfUnique();
        if (connectString != null) {
            builder.connectString(connectString)
                    .sessionTimeout(zk.getSessionTimeout())
                    .connectionTimeout(zk.getConnectionTimeout());
        } else if (curator != null) {
            builder.curator(curator);
        } else {
            throw new IllegalStateException(
                    "distlock.backend=zookeeper needs distlock.zookeeper.connect-string or a CuratorFramework bean");
        }
        if (properties.getLeaseTime() != null) {
            builder.leaseTime(properties.getLeaseTime());
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
