package io.distlock.zookeeper;

import io.distlock.LockClient;
import io.distlock.testkit.AllLockContracts;
import io.distlock.testkit.AsyncContract;
import io.distlock.testkit.ForwardingLockClient;
import io.distlock.testkit.MultiProcessContract;
import io.distlock.testkit.fault.FaultProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The whole contract suite against an in-process ZooKeeper server. */
class ZooKeeperLockIT implements AllLockContracts, MultiProcessContract, AsyncContract {
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

    @Override
    public LockClient createClient(Duration watchdogLease) {
        return ZooKeeperLockClient.builder()
                .connectString(server.getConnectString())
                .sessionTimeout(ZooKeeperTestServers.SESSION_TIMEOUT)
                .leaseTime(watchdogLease)
                .build();
    }

    @Override
    public void expireHold(String name) {
        String lockPath = ZooKeeperTestServers.lockPath(name);
        try {
            List<String> queue = sortedEntries(lockPath);
            if (queue.isEmpty()) {
                throw new AssertionError("no hold to expire for " + name);
            }
            admin.delete().forPath(lockPath + "/" + queue.get(0));
        } catch (Exception e) {
            throw new AssertionError("could not expire the hold of " + name, e);
        }
    }

    @Override
    public List<String> residue(String name) {
        String lockPath = ZooKeeperTestServers.lockPath(name);
        try {
            List<String> out = new ArrayList<>();
            for (String child : admin.getChildren().forPath(lockPath)) {
                out.add("node " + lockPath + "/" + child);
            }
            return out;
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (Exception e) {
            throw new AssertionError("could not list " + lockPath, e);
        }
    }

    @Override
    public Optional<ChildClient> childClient() {
        return Optional.of(new ChildClient(ZooKeeperChildClientFactory.class, server.getConnectString()));
    }

    @Override
    public Duration deadWaiterEviction() {
        return ZooKeeperTestServers.SESSION_TIMEOUT.plusSeconds(2);
    }

    private static List<String> sortedEntries(String lockPath) throws Exception {
        List<String> children;
        try {
            children = new ArrayList<>(admin.getChildren().forPath(lockPath));
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
        Collections.sort(children, (a, b) -> a.substring(a.length() - 10).compareTo(b.substring(b.length() - 10)));
        return children;
    }

    /** A client through a proxy that swallows every byte once connected: no request gets an answer. */
    @Override
    public Optional<LockClient> createUnreachableClient() {
        FaultProxy proxy = FaultProxy.start(server.getPort());
        LockClient client = ZooKeeperLockClient.builder()
                .connectString("127.0.0.1:" + proxy.port())
                .sessionTimeout(ZooKeeperTestServers.SESSION_TIMEOUT)
                .connectionTimeout(Duration.ofSeconds(2))
                .build();
        var unused = proxy.blackhole(Duration.ofMinutes(5));
        return Optional.of(new ForwardingLockClient(client) {
            @Override
            public void close() {
                super.close();
                proxy.close();
            }
        });
    }
}
