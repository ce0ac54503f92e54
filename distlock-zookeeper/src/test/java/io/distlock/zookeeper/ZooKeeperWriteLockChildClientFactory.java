package io.distlock.zookeeper;

import io.distlock.LockClient;
import io.distlock.testkit.ClientFactory;
import io.distlock.testkit.WriteLockAsLock;

/** Makes a ZooKeeper client in a child JVM whose locks are write locks; the argument is the connect string. */
public final class ZooKeeperWriteLockChildClientFactory implements ClientFactory {
    public ZooKeeperWriteLockChildClientFactory() {}

    @Override
    public LockClient create(String argument) {
        return new WriteLockAsLock.Client(new ZooKeeperChildClientFactory().create(argument));
    }
}
