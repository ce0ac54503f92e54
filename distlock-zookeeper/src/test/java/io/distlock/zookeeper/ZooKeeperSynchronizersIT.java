package io.distlock.zookeeper;

import io.distlock.LockClient;
import io.distlock.testkit.AllSynchronizerContracts;
import io.distlock.testkit.AsyncSynchronizerContract;
import io.distlock.testkit.MultiProcessSynchronizerContract;
import io.distlock.testkit.SemaphoreAsLock;
import io.distlock.testkit.WriteLockAsLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;

/**
 * The read-write lock, semaphore and latch contracts against an in-process ZooKeeper server, across processes too,
 * and the whole lock contract on the write lock and on a one-permit semaphore.
 */
class ZooKeeperSynchronizersIT
        implements AllSynchronizerContracts, MultiProcessSynchronizerContract, AsyncSynchronizerContract {
    private static TestingServer server;
    private static CuratorFramework admin;

    @BeforeAll
    static void startServer() throws Exception {
        server = ZooKeeperTestServers.startServer();
        admin = ZooKeeperTestServers.adminClient(server.getConnectString());
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (admin != null) {
            admin.close();
        }
        if (server != null) {
            server.close();
        }
    }

    static LockClient client(Duration watchdogLease) {
        return ZooKeeperLockClient.builder()
                .connectString(server.getConnectString())
                .sessionTimeout(ZooKeeperTestServers.SESSION_TIMEOUT)
                .leaseTime(watchdogLease)
                .build();
    }

    @Override
    public LockClient createClient(Duration watchdogLease) {
        return client(watchdogLease);
    }

    @Override
    public void expireHold(String name) {
        expire(name);
    }

    @Override
    public List<String> residue(String name) {
        return leftOver(name);
    }

    @Override
    public Optional<ChildClient> childClient() {
        return Optional.of(new ChildClient(ZooKeeperChildClientFactory.class, server.getConnectString()));
    }

    @Override
    public Duration childHoldRelease() {
        return ZooKeeperTestServers.SESSION_TIMEOUT.plusSeconds(5);
    }

    @Override
    public Duration deadOwnerRelease() {
        return ZooKeeperTestServers.SESSION_TIMEOUT.plusSeconds(2);
    }

    /** Deletes the holders' entries of the name (its lock holder, or its read-write lock or semaphore holders). */
    static void expire(String name) {
        try {
            String lockPath = ZooKeeperTestServers.lockPath(name);
            List<ZkNames.Entry> lockQueue = new ArrayList<>();
            for (String child : children(lockPath)) {
                ZkNames.Entry e = ZkNames.entry(child);
                if (e != null) {
                    lockQueue.add(e);
                }
            }
            if (!lockQueue.isEmpty()) {
                lockQueue.sort(null);
                admin.delete()
                        .forPath(ZKPaths.makePath(lockPath, lockQueue.get(0).node()));
                return;
            }
            String syncPath = syncPath(name);
            List<ZkClaimQueue.Entry> queue = ZkClaimQueue.queue(children(syncPath));
            List<String> holders = new ArrayList<>();
            for (ZkClaimQueue.Entry e : queue) {
                if (ZkClaimQueue.holds(queue, e)) {
                    holders.add(e.node());
                }
            }
            if (holders.isEmpty()) {
                throw new AssertionError("no hold to expire for " + name);
            }
            for (String node : holders) {
                admin.delete().forPath(ZKPaths.makePath(syncPath, node));
            }
        } catch (Exception e) {
            throw new AssertionError("could not expire the hold of " + name, e);
        }
    }

    /** The nodes under the name's lock node and name node. */
    static List<String> leftOver(String name) {
        List<String> out = new ArrayList<>();
        try {
            for (String path : List.of(ZooKeeperTestServers.lockPath(name), syncPath(name))) {
                for (String child : children(path)) {
                    out.add("node " + path + "/" + child);
                }
            }
        } catch (Exception e) {
            throw new AssertionError("could not list the nodes of " + name, e);
        }
        return out;
    }

    static String syncPath(String name) {
        return ZooKeeperLockClient.DEFAULT_ROOT_PATH + "/sync/" + ZkNames.lockNode(name);
    }

    private static List<String> children(String path) throws Exception {
        try {
            return admin.getChildren().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
    }

    /** The whole lock contract on the write lock. */
    @Nested
    class WriteLockIT implements WriteLockAsLock {
        @Override
        public LockClient createBackendClient(Duration watchdogLease) {
            return client(watchdogLease);
        }

        @Override
        public void expireHold(String name) {
            expire(name);
        }

        @Override
        public List<String> residue(String name) {
            return leftOver(name);
        }

        @Override
        public Optional<ChildClient> childClient() {
            return Optional.of(new ChildClient(ZooKeeperWriteLockChildClientFactory.class, server.getConnectString()));
        }

        @Override
        public Duration deadOwnerRelease() {
            return ZooKeeperTestServers.SESSION_TIMEOUT.plusSeconds(2);
        }
    }

    /** The whole lock contract on a one-permit semaphore. */
    @Nested
    class SemaphoreIT implements SemaphoreAsLock {
        @Override
        public LockClient createBackendClient(Duration watchdogLease) {
            return client(watchdogLease);
        }

        @Override
        public void expireHold(String name) {
            expire(name);
        }

        @Override
        public List<String> residue(String name) {
            return leftOver(name);
        }

        @Override
        public Optional<ChildClient> childClient() {
            return Optional.of(new ChildClient(ZooKeeperSemaphoreChildClientFactory.class, server.getConnectString()));
        }

        @Override
        public Duration deadOwnerRelease() {
            return ZooKeeperTestServers.SESSION_TIMEOUT.plusSeconds(2);
        }
    }
}
