package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.Lease;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.DefaultACLProvider;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The existence hints of the acquire step (ZkQueueMirrors, Existence hints): which create a store sends when no mirror
 * can tell whether the lock node exists, told by a hook that records every create an attempt makes (true: the
 * one-round-trip create with the lock node, which fails when the lock node exists).
 */
class ZooKeeperExistenceHintIT {
    private final LockKey key = new LockKey("hinted");
    private final Claim a = Claim.lock(key, new OwnerId("a:t1"), Lease.fixed(Duration.ofSeconds(30)), 0);
    private final Claim b = Claim.lock(key, new OwnerId("b:t1"), Lease.fixed(Duration.ofSeconds(30)), 0);

    private TestingServer server;
    private CuratorFramework admin;
    private final List<ZooKeeperLockStore> stores = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        server = ZooKeeperTestServers.startServer();
        admin = ZooKeeperTestServers.adminClient(server.getConnectString());
    }

    @AfterEach
    void stop() throws Exception {
        try {
            stores.forEach(ZooKeeperLockStore::close);
        } finally {
            admin.close();
            server.close();
        }
    }

    /** A store on its own session, as the client builds it (raw ACLs known: the multi talks to ZooKeeper directly). */
    private ZooKeeperLockStore store() throws Exception {
        CuratorFramework curator = CuratorFrameworkFactory.builder()
                .connectString(server.getConnectString())
                .sessionTimeoutMs((int) ZooKeeperTestServers.SESSION_TIMEOUT.toMillis())
                .connectionTimeoutMs(5_000)
                .retryPolicy(new RetryOneTime(100))
                .build();
        curator.start();
        assertThat(curator.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
        ZooKeeperLockStore store = new ZooKeeperLockStore(
                curator,
                true,
                new DefaultACLProvider(),
                ZooKeeperLockClient.DEFAULT_ROOT_PATH,
                ZooKeeperTestServers.SESSION_TIMEOUT,
                null);
        store.start();
        stores.add(store);
        return store;
    }

    /** Records the creates {@code store} sends: true for the create with the lock node, false for one in it. */
    private static List<Boolean> creates(ZooKeeperLockStore store) {
        List<Boolean> creates = new CopyOnWriteArrayList<>();
        store.createHook((lockPath, withLockNode) -> creates.add(withLockNode));
        return creates;
    }

    private boolean lockNodeExists(ZooKeeperLockStore store) throws Exception {
        return admin.checkExists().forPath(store.lockPath(key)) != null;
    }

    private List<String> entries(ZooKeeperLockStore store) throws Exception {
        try {
            return admin.getChildren().forPath(store.lockPath(key));
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
    }

    @Test
    void contended_theNextAttempt_skipsTheCreateWithTheLockNode_thatFailedBefore() throws Exception {
        ZooKeeperLockStore x = store();
        ZooKeeperLockStore y = store();
        Attempt held = x.tryAcquire(a, true);
        assertThat(held).isInstanceOf(Attempt.Acquired.class);
        List<Boolean> creates = creates(y);

        assertThat(y.tryAcquire(b, false)).as("a plain try while x holds").isInstanceOf(Attempt.Busy.class);
        assertThat(creates)
                .as("the create with the lock node, which failed on it")
                .containsExactly(true);
        assertThat(entries(y)).as("a plain try leaves nothing").hasSize(1);

        assertThat(y.tryAcquire(b, true)).as("a queued try while x holds").isInstanceOf(Attempt.Busy.class);
        assertThat(creates)
                .as("the lock node was seen to exist: the entry is created in it at once")
                .containsExactly(true, false);
        assertThat(entries(y)).hasSize(2);

        assertThat(x.release(a.held(((Attempt.Acquired) held).fencingToken()))).isTrue();
        Attempt next = y.tryAcquire(b, true);
        assertThat(next).as("y's entry heads the queue now").isInstanceOf(Attempt.Acquired.class);
        assertThat(((Attempt.Acquired) next).fencingToken()).isGreaterThan(((Attempt.Acquired) held).fencingToken());
        assertThat(creates).as("no create more: the entry queued already").hasSize(2);
        assertThat(y.release(b.held(((Attempt.Acquired) next).fencingToken()))).isTrue();
        assertThat(entries(y)).isEmpty();
    }

    @Test
    void staleHint_costsOneCreateThatFails_thenTheCreateWithTheLockNode_acquires() throws Exception {
        ZooKeeperLockStore x = store();
        ZooKeeperLockStore y = store();
        Attempt held = x.tryAcquire(a, true);
        List<Boolean> creates = creates(y);
        assertThat(y.tryAcquire(b, false)).isInstanceOf(Attempt.Busy.class); // y saw the lock node exist
        assertThat(x.release(a.held(((Attempt.Acquired) held).fencingToken()))).isTrue();
        assertThat(lockNodeExists(y))
                .as("x was alone: its release deleted the lock node")
                .isFalse();

        Attempt next = y.tryAcquire(b, false);

        assertThat(next).isInstanceOf(Attempt.Acquired.class);
        assertThat(creates)
                .as("the hint said the lock node exists: the create in it failed, then the one with it went through")
                .containsExactly(true, false, true);
        assertThat(((Attempt.Acquired) next).fencingToken()).isGreaterThan(((Attempt.Acquired) held).fencingToken());
        assertThat(entries(y)).hasSize(1);
        assertThat(y.release(b.held(((Attempt.Acquired) next).fencingToken()))).isTrue();
        assertThat(lockNodeExists(y))
                .as("y was alone: its release deleted the lock node")
                .isFalse();

        creates.clear();
        Attempt again = y.tryAcquire(b, false);
        assertThat(again).isInstanceOf(Attempt.Acquired.class);
        assertThat(creates)
                .as("y deleted the lock node itself: back to the one-round-trip create")
                .containsExactly(true);
        assertThat(y.release(b.held(((Attempt.Acquired) again).fencingToken()))).isTrue();
    }
}
