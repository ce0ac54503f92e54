package io.distlock.zookeeper;

import io.distlock.LockClient;
import io.distlock.testkit.ClientFactory;

/** Makes a ZooKeeper lock client in a child JVM of the multi-process contracts; the argument is the connect string. */
public final class ZooKeeperChildClientFactory implements ClientFactory {
    public ZooKeeperChildClientFactory() {}

    @Override
    public LockClient create(String argument) {
        return ZooKeeperLockClient.builder()
                .connectString(argument)
                .sessionTimeout(ZooKeeperTestServers.SESSION_TIMEOUT)
                .build();
    }
}
