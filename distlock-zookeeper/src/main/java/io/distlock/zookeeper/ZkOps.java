package io.distlock.zookeeper;

import io.distlock.DistributedLockException;
import io.distlock.spi.LockKey;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.CreateOptions;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * Role. The ZooKeeper steps every part of the lock store shares: the paths of the tree, reading a lock node's queue,
 * the deletes, multi-operation transactions, and the translation of ZooKeeper's checked exceptions into the library's
 * unchecked ones. It holds the Curator client, the ACLs when they are known, and whether the store is closed.
 *
 * Paths. Lock nodes live under <root>/locks; ZkNames turns a lock name into one path component. Paths are given
 * without Curator's namespace; a step that talks to the ZooKeeper handle directly adds it (ZKPaths.fixForNamespace).
 *
 * Transactions. transact runs a list of creates and deletes as one ZooKeeper multi. On the ZooKeeper handle directly
 * when the client is connected and the ACLs are known (a Curator client this library built) or not needed (deletes
 * only): tried once, and creates answer with their Stat. Otherwise through Curator's transaction API, which retries
 * after connection trouble and answers creates without a Stat.
 *
 * Deletes. deleteGuaranteed deletes at once when connected and hands the delete to Curator's guaranteed background
 * mode otherwise, so a caller (often the engine's watchdog) never blocks for a connection timeout; Curator retries it
 * while the session lives, and an ephemeral entry dies with its session anyway.
 *
 * Errors. call and run give RuntimeExceptions through, turn an interrupt into DistributedLockException with the
 * interrupt flag set again, and wrap every other exception, with its cause, in DistributedLockException. cleanUp runs
 * a step that must happen even on an interrupted thread (ZooKeeper calls fail at once there): the flag is cleared for
 * the step and set again after it.
 */
/** The ZooKeeper steps the parts of the lock store share; see the overview comment in the source. */
final class ZkOps {
    private final CuratorFramework curator;
    private final @Nullable ACLProvider rawAcls;
    private final String locksPath;
    private final String syncRoot;
    private volatile boolean closed;

    /**
     * @param rawAcls the ACLs the Curator client applies, when known (a client this library built); enables the
     *     direct transactions, which talk to ZooKeeper without Curator
     */
    ZkOps(CuratorFramework curator, @Nullable ACLProvider rawAcls, String rootPath) {
        this.curator = Objects.requireNonNull(curator, "curator");
        this.rawAcls = rawAcls;
        this.locksPath = ZKPaths.makePath(rootPath, "locks");
        this.syncRoot = ZKPaths.makePath(rootPath, "sync");
    }

    CuratorFramework curator() {
        return curator;
    }

    @Nullable
    ACLProvider rawAcls() {
        return rawAcls;
    }

    /** The parent of all lock nodes. */
    String locksPath() {
        return locksPath;
    }

    /** The path of the lock node of {@code key}. */
    String lockPath(LockKey key) {
        return ZKPaths.makePath(locksPath, ZkNames.lockNode(key.name()));
    }

    /** The parent of the name nodes of read-write locks, semaphores and latches. */
    String syncRoot() {
        return syncRoot;
    }

    /** The path of the name node of a read-write lock, semaphore or latch {@code key}. */
    String syncPath(LockKey key) {
        return ZKPaths.makePath(syncRoot, ZkNames.lockNode(key.name()));
    }

    /** Creates the name node at {@code path} (a container whose data is the full name), and its parent if needed. */
    void ensureNameNode(String path, String name) throws Exception {
        try {
            var unused = curator.create()
                    .creatingParentsIfNeeded()
                    .withMode(CreateMode.CONTAINER)
                    .forPath(path, name.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        } catch (KeeperException.NodeExistsException e) {
            // someone else made it
        }
    }

    /** The children of {@code path}; empty when it does not exist. */
    List<String> childNames(String path) throws Exception {
        try {
            return curator.getChildren().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
    }

    boolean closed() {
        return closed;
    }

    /** Marks the store closed; false if it was closed already. */
    boolean markClosed() {
        if (closed) {
            return false;
        }
        closed = true;
        return true;
    }

    void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("the ZooKeeper lock store is closed");
        }
    }

    /** Creates the parent of the lock nodes if needed. */
    void ensureLocksPath() throws Exception {
        try {
            var unused = curator.create().creatingParentsIfNeeded().forPath(locksPath);
        } catch (KeeperException.NodeExistsException e) {
            // someone else made it
        }
    }

    /** The queue of a lock node in grant order; empty when the lock node does not exist. */
    List<ZkNames.Entry> children(String lockPath) throws Exception {
        List<String> nodes;
        try {
            nodes = curator.getChildren().forPath(lockPath);
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
        List<ZkNames.Entry> queue = new ArrayList<>(nodes.size());
        for (String node : nodes) {
            ZkNames.Entry e = ZkNames.entry(node);
            if (e != null) {
                queue.add(e);
            }
        }
        Collections.sort(queue);
        return queue;
    }

    /** Deletes {@code path} now if connected; Curator keeps retrying after a connection loss. */
    void deleteGuaranteed(String path) throws Exception {
        if (!curator.getZookeeperClient().isConnected()) {
            // do not block the caller (often the watchdog) for a connection timeout; Curator retries until done
            curator.delete().guaranteed().inBackground().forPath(path);
            return;
        }
        try {
            curator.delete().guaranteed().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            // already gone
        }
    }

    void deleteInBackground(String path) throws Exception {
        curator.delete().guaranteed().inBackground().forPath(path);
    }

    /** The id of the current session; waits while Curator resets the session. */
    long sessionId() throws Exception {
        return curator.getZookeeperClient().getZooKeeper().getSessionId();
    }

    /** One operation of a transaction: a create when {@code mode} is set, else a delete of any version. */
    record TxOp(String path, byte[] data, @Nullable CreateMode mode) {
        static TxOp delete(String path) {
            return new TxOp(path, new byte[0], null);
        }

        static TxOp create(String path, byte[] data, CreateMode mode) {
            return new TxOp(path, data, mode);
        }
    }

    /** The outcome of one operation: the created path (without namespace), and its Stat when the server sent it. */
    record TxResult(String path, @Nullable Stat stat) {}

    /** Runs the operations as one ZooKeeper transaction; see Transactions in the overview. */
    List<TxResult> transact(List<TxOp> ops) throws Exception {
        ACLProvider acls = rawAcls;
        List<TxResult> out = new ArrayList<>(ops.size());
        boolean deletesOnly = true;
        for (TxOp op : ops) {
            deletesOnly &= op.mode() == null;
        }
        // deletes need no ACLs, so a Curator client given by the user takes the direct path for them too
        if ((acls != null || deletesOnly) && curator.getZookeeperClient().isConnected()) {
            ZooKeeper zk = curator.getZookeeperClient().getZooKeeper();
            String namespace = curator.getNamespace();
            List<Op> raw = new ArrayList<>(ops.size());
            for (TxOp op : ops) {
                String path = ZKPaths.fixForNamespace(namespace, op.path());
                CreateMode mode = op.mode();
                raw.add(
                        mode == null
                                ? Op.delete(path, -1)
                                : Op.create(
                                        path,
                                        op.data(),
                                        CreateOptions.newBuilder(
                                                        Objects.requireNonNull(acls, "acls")
                                                                .getAclForPath(op.path()),
                                                        mode)
                                                .build()));
            }
            List<OpResult> results = zk.multi(raw);
            for (int i = 0; i < ops.size(); i++) {
                if (results.get(i) instanceof OpResult.CreateResult created) {
                    String parent = ZKPaths.getPathAndNode(ops.get(i).path()).getPath();
                    out.add(new TxResult(
                            ZKPaths.makePath(parent, ZKPaths.getNodeFromPath(created.getPath())), created.getStat()));
                } else {
                    out.add(new TxResult(ops.get(i).path(), null));
                }
            }
            return out;
        }
        List<CuratorOp> curatorOps = new ArrayList<>(ops.size());
        for (TxOp op : ops) {
            CreateMode mode = op.mode();
            curatorOps.add(
                    mode == null
                            ? curator.transactionOp().delete().forPath(op.path())
                            : curator.transactionOp().create().withMode(mode).forPath(op.path(), op.data()));
        }
        for (CuratorTransactionResult r : curator.transaction().forOperations(curatorOps)) {
            String path = r.getResultPath();
            out.add(new TxResult(path != null ? path : r.getForPath(), r.getResultStat()));
        }
        return out;
    }

    /** A step that talks to ZooKeeper and answers. */
    interface ZkCall<T> {
        T run() throws Exception;
    }

    /** A step that talks to ZooKeeper. */
    interface ZkAction {
        void run() throws Exception;
    }

    /** Runs a clean-up step, also on an interrupted thread; see Errors in the overview. */
    static void cleanUp(ZkAction step) {
        boolean interrupted = Thread.interrupted();
        try {
            run("abandon", step);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    static void run(String operation, ZkAction action) {
        var unused = call(operation, () -> {
            action.run();
            return Boolean.TRUE;
        });
    }

    static <T> T call(String operation, ZkCall<T> call) {
        try {
            return call.run();
        } catch (RuntimeException e) {
            throw e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DistributedLockException("ZooKeeper " + operation + " was interrupted", e);
        } catch (Exception e) {
            throw new DistributedLockException("ZooKeeper " + operation + " failed: " + e, e);
        }
    }
}
