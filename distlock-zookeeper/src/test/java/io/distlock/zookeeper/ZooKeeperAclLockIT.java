package io.distlock.zookeeper;

import io.distlock.LockClient;
import io.distlock.testkit.AllLockContracts;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The whole contract suite with digest authentication and creator-only ACLs on every node: the ACLs change nothing
 * for clients of one user. The fixture's own client, which expires holds and looks for residue, is that user too.
 */
class ZooKeeperAclLockIT implements AllLockContracts {
    private static final String USER = "locker";
    private static final String PASSWORD = "l0cker-pw";
    private static final String ROOT = "/distlock-acl";

    private static TestingServer server;
    private static CuratorFramework admin;

    @BeforeAll
    static void startServer() throws Exception {
        server = ZooKeeperTestServers.startServer();
        admin = CuratorFrameworkFactory.builder()
                .connectString(server.getConnectString())
                .sessionTimeoutMs((int) ZooKeeperTestServers.SESSION_TIMEOUT.toMillis())
                .connectionTimeoutMs(5_000)
                .retryPolicy(new RetryOneTime(100))
                .authorization("digest", (USER + ":" + PASSWORD).getBytes(StandardCharsets.UTF_8))
                .build();
        admin.start();
        if (!admin.blockUntilConnected(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("admin client could not connect");
        }
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

    @Override
    public LockClient createClient(Duration watchdogLease) {
        return ZooKeeperLockClient.builder()
                .connectString(server.getConnectString())
                .rootPath(ROOT)
                .digest(USER, PASSWORD)
                .sessionTimeout(ZooKeeperTestServers.SESSION_TIMEOUT)
                .leaseTime(watchdogLease)
                .build();
    }

    @Override
    public Optional<ChildClient> childClient() {
        return Optional.of(new ChildClient(
                ZooKeeperChildClientFactory.class, String.join("\n", server.getConnectString(), ROOT, USER, PASSWORD)));
    }

    private static String lockPath(String name) {
        return ROOT + "/locks/" + ZkNames.lockNode(name);
    }

    @Override
    public void expireHold(String name) {
        try {
            List<String> queue = entries(lockPath(name));
            if (queue.isEmpty()) {
                throw new AssertionError("no hold to expire for " + name);
            }
            admin.delete().forPath(lockPath(name) + "/" + queue.get(0));
        } catch (Exception e) {
            throw new AssertionError("could not expire the hold of " + name, e);
        }
    }

    @Override
    public List<String> residue(String name) {
        try {
            List<String> out = new ArrayList<>();
            for (String child : entries(lockPath(name))) {
                out.add("node " + lockPath(name) + "/" + child);
            }
            return out;
        } catch (Exception e) {
            throw new AssertionError("could not list " + lockPath(name), e);
        }
    }

    /** The queue entries of a lock node in sequence order (the last 10 characters). */
    private static List<String> entries(String lockPath) throws Exception {
        List<String> children;
        try {
            children = new ArrayList<>(admin.getChildren().forPath(lockPath));
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
        children.sort(Comparator.comparing(c -> c.substring(c.length() - 10)));
        return children;
    }
}
