package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.Lease;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.DefaultACLProvider;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The store's answer when the lock node is removed and made again under every try of one attempt ("the lock node kept
 * changing"): made to happen deterministically by a hook that, before each create of the attempt, makes the lock node
 * exist when the store is about to create it with its entry, and removes it when the store is about to create its
 * entry in it.
 */
class ZooKeeperChurnIT {
    private final LockKey key = new LockKey("churn");
    private final OwnerId owner = new OwnerId("x:t1");
    private final Claim claim = Claim.lock(key, owner, Lease.fixed(Duration.ofSeconds(30)), 0);

    private TestingServer server;
    private CuratorFramework admin;
    private CuratorFramework curator;
    private ZooKeeperLockStore store;

    @BeforeEach
    void start() throws Exception {
        server = ZooKeeperTestServers.startServer();
        admin = ZooKeeperTestServers.adminClient(server.getConnectString());
        curator = CuratorFrameworkFactory.builder()
                .connectString(server.getConnectString())
                .sessionTimeoutMs((int) ZooKeeperTestServers.SESSION_TIMEOUT.toMillis())
                .connectionTimeoutMs(5_000)
                .retryPolicy(new RetryOneTime(100))
                .build();
        curator.start();
        assertThat(curator.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
        store = new ZooKeeperLockStore(
                curator,
                true,
                new DefaultACLProvider(),
                ZooKeeperLockClient.DEFAULT_ROOT_PATH,
                ZooKeeperTestServers.SESSION_TIMEOUT,
                null);
        store.start();
    }

    @AfterEach
    void stop() throws Exception {
        try {
            store.close();
        } finally {
            admin.close();
            server.close();
        }
    }

    /** Installs the churn; counts the creates the store tried. */
    private AtomicInteger churn() {
        AtomicInteger creates = new AtomicInteger();
        store.createHook((lockPath, withLockNode) -> {
            creates.incrementAndGet();
            if (withLockNode) {
                try {
                    admin.create()
                            .creatingParentsIfNeeded()
                            .withMode(CreateMode.CONTAINER)
                            .forPath(lockPath);
                } catch (KeeperException.NodeExistsException e) {
                    // there already
                }
            } else {
                try {
                    admin.delete().forPath(lockPath);
                } catch (KeeperException.NoNodeException e) {
                    // gone already
                }
            }
        });
        return creates;
    }

    private List<String> entries() throws Exception {
        try {
            return admin.getChildren().forPath(store.lockPath(key));
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
    }

    @ParameterizedTest(name = "queue={0}")
    @ValueSource(booleans = {false, true})
    @org.junit.jupiter.api.Timeout(value = 60, unit = TimeUnit.SECONDS)
    void attemptUnderChurn_isBusySoon_boundedInTries_leavesNothing_andTheNextAttemptWorks(boolean queue)
            throws Exception {
        AtomicInteger creates = churn();

        Attempt attempt = store.tryAcquire(claim, queue);

        assertThat(attempt)
                .as("contention, not a failure: a busy answer asking for a retry shortly")
                .isEqualTo(Attempt.busy(ZooKeeperLockStore.CHURN_RETRY));
        assertThat(creates.get())
                .as("each try creates once with the lock node and once in it, and the tries are bounded")
                .isEqualTo(2 * ZooKeeperLockStore.MAX_TRIES);
        assertThat(entries()).as("no entry left behind").isEmpty();
        assertThat(store.release(HeldClaim.lock(key, owner, 0)))
                .as("nothing held")
                .isFalse();

        store.createHook((lockPath, withLockNode) -> {});
        Attempt next = store.tryAcquire(claim, queue);
        assertThat(next).isInstanceOf(Attempt.Acquired.class);
        assertThat(entries()).hasSize(1);
        assertThat(store.release(claim.held(((Attempt.Acquired) next).fencingToken())))
                .isTrue();
        assertThat(entries()).isEmpty();
    }
}
