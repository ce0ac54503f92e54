package io.distlock.zookeeper;

import io.distlock.LockClient;
import io.distlock.testkit.ClientFactory;
import io.distlock.testkit.SemaphoreAsLock;

/** Makes a ZooKeeper client in a child JVM whose locks are one-permit semaphores; the argument is the connect string. */
public final class ZooKeeperSemaphoreChildClientFactory implements ClientFactory {
    public ZooKeeperSemaphoreChildClientFactory() {}

    @Override
    public LockClient create(String argument) {
        return new SemaphoreAsLock.Client(new ZooKeeperChildClientFactory().create(argument));
    }
}
