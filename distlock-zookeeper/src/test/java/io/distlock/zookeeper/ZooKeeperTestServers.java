package io.distlock.zookeeper;

import java.time.Duration;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/** Helpers for in-process ZooKeeper servers in tests. */
final class ZooKeeperTestServers {
    /** A short tick so sessions may be as short as 2 ticks (1 s): dead clients are evicted fast. */
    static final int TICK_MILLIS = 500;

    /** The session timeout of test clients. */
    static final Duration SESSION_TIMEOUT = Duration.ofSeconds(4);

    private ZooKeeperTestServers() {}

    /** A started standalone server on a free loopback port with a temporary data directory. */
    static TestingServer startServer() throws Exception {
        InstanceSpec spec = new InstanceSpec(null, -1, -1, -1, true, -1, TICK_MILLIS, -1);
        return new TestingServer(spec, true);
    }

    /** A started Curator client for looking at and changing the tree behind the lock clients' backs. */
    static CuratorFramework adminClient(String connectString) throws InterruptedException {
        CuratorFramework c = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .sessionTimeoutMs((int) SESSION_TIMEOUT.toMillis())
                .connectionTimeoutMs(5_000)
                .retryPolicy(new RetryOneTime(100))
                .build();
        c.start();
        if (!c.blockUntilConnected(10, java.util.concurrent.TimeUnit.SECONDS)) {
            c.close();
            throw new IllegalStateException("admin client could not connect to " + connectString);
        }
        return c;
    }

    /** The lock node of {@code name} under the default root. */
    static String lockPath(String name) {
        return ZooKeeperLockClient.DEFAULT_ROOT_PATH + "/locks/" + ZkNames.lockNode(name);
    }
}
