package io.distlock.zookeeper;

import io.distlock.LockClient;
import io.distlock.testkit.ClientFactory;

/**
 * Makes a ZooKeeper lock client in a child JVM of the multi-process contracts. The argument is the connect string,
 * optionally followed by lines with the root path, and the digest user and password.
 */
public final class ZooKeeperChildClientFactory implements ClientFactory {
    public ZooKeeperChildClientFactory() {}

    @Override
    public LockClient create(String argument) {
        String[] lines = argument.split("\n", -1);
        ZooKeeperLockClient.Builder b = ZooKeeperLockClient.builder()
                .connectString(lines[0])
                .sessionTimeout(ZooKeeperTestServers.SESSION_TIMEOUT);
        if (lines.length > 1) {
            b.rootPath(lines[1]);
        }
        if (lines.length > 3) {
            b.digest(lines[2], lines[3]);
        }
        return b.build();
    }
}
