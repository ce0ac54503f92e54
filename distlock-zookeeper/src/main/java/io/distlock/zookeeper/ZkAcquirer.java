package io.distlock.zookeeper;

import io.distlock.spi.Attempt;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * Role. The acquire step (tryAcquire): makes or finds the owner's queue entry and tells whether it is first.
 *
 * Uncontended. A free name with no lock node costs one round trip: a ZooKeeper multi that creates the lock node and
 * the entry together; if the lock node did not exist, the new entry is alone and holds the lock. The container's Stat
 * in the multi's answer carries the czxid, which the entry shares (raw ZooKeeper multi: Curator's transaction API
 * drops that Stat, so with a Curator client given by the user, whose ACL provider we cannot read, the entry's Stat
 * costs one more read). The multi is skipped when the lock node is believed to exist, since it would fail (a failed
 * multi still costs the server a transaction): the mirror knows it does, or with no mirror that can tell, this client
 * last saw it exist (ZkQueueMirrors, Existence hints). A wrong belief costs the create in the existing lock node,
 * which fails on the missing one, and then the multi.
 *
 * Contended. The entry is created in Curator's protected mode (a create whose answer was lost is found again by its
 * GUID, not repeated), and the queue decides: held if the owner's entry is first. A queueing attempt asks the mirror
 * of the name first (ZkQueueMirrors) and reads the children only when the mirror cannot tell. A non-queueing attempt
 * first reads the children and writes nothing if another owner is there; if it wrote an entry and is not first, it
 * deletes it again.
 *
 * Repairs. Each try checks the remembered entry against the queue. An entry granted before is never granted again
 * (its tokens were issued): it is ended and the owner queues anew. Duplicate entries of one owner (a retried multi
 * whose first try went through) are found by the owner tag and the later ones deleted; an entry of an ended session is
 * deleted and replaced; an entry that vanished (session expired, deleted by an operator) is replaced.
 *
 * Churn. When the lock node is removed and made again under every one of MAX_TRIES tries, others are busy with the
 * lock: that is contention, not a failure, so the answer is busy with CHURN_RETRY, leaving nothing behind for a
 * plain try.
 *
 * Spare tokens. A grant reserves the spare tokens the claim asks, up to the cap (ZooKeeperLockStore); the store
 * works that number out and passes it in.
 *
 * Epochs. Every entry made or granted carries the connection epoch read at the start of its try, so a grant that spans
 * connection trouble is presumed lost at once (ZkSession).
 */
/** The acquire step of the lock store; see the overview comment in the source. */
final class ZkAcquirer {
    /** Tests only: runs before each create an attempt makes, to change the tree at exactly that point. */
    @FunctionalInterface
    interface CreateHook {
        /**
         * Runs just before the create.
         *
         * @param withLockNode whether the create makes the lock node too (the one-round-trip path)
         */
        void beforeCreate(String lockPath, boolean withLockNode) throws Exception;
    }

    private final ZkOps ops;
    private final CuratorFramework curator;
    private final OwnEntries entries;
    private final ZkSession session;
    private final ZkQueueMirrors mirrors;
    private final Duration retryWithin;
    private volatile CreateHook createHook = (lockPath, withLockNode) -> {};

    /** @param retryWithin the longest wait a busy answer asks for: it bounds the cost of a lost wake-up */
    ZkAcquirer(ZkOps ops, OwnEntries entries, ZkSession session, ZkQueueMirrors mirrors, Duration retryWithin) {
        this.ops = ops;
        this.curator = ops.curator();
        this.entries = entries;
        this.session = session;
        this.mirrors = mirrors;
        this.retryWithin = retryWithin;
    }

    /** Tests only: see {@link CreateHook}. */
    void createHook(CreateHook hook) {
        this.createHook = Objects.requireNonNull(hook, "hook");
    }

    /** @param spare the spare tokens a grant reserves: the claim's ask, capped (see ZooKeeperLockStore) */
    Attempt tryAcquire(LockKey key, OwnerId owner, int spare, boolean queue) {
        return ZkOps.call("tryAcquire", () -> {
            EntryId id = new EntryId(key.name(), owner.value());
            String lockPath = ops.lockPath(key);
            String tag = ZkNames.ownerTag(owner.value());
            boolean lockNodeMissing = false;
            for (int tries = 0; tries < ZooKeeperLockStore.MAX_TRIES; tries++) {
                ops.ensureOpen();
                long epochAtStart = session.epoch();
                OwnEntry mine = entries.get(id);
                if (mine != null && mine.held()) {
                    // granted before and since lost (or held on by a successor that lost it): granting it again
                    // would repeat a token that was issued, or undercut a successor's; end it and queue anew
                    entries.remove(id, mine);
                    ops.deleteGuaranteed(mine.path());
                    mine = null;
                }
                ZkQueueMirrors.Mirror sub = mirrors.get(lockPath);
                if (mine == null) {
                    // a lock node believed to exist would make the one-round-trip create fail: skip it
                    OwnEntry alone = lockNodeMissing || !mirrors.believedToExist(lockPath, sub)
                            ? createWithLockNode(key, owner, lockPath, epochAtStart)
                            : null;
                    lockNodeMissing = false;
                    if (alone != null) {
                        entries.put(id, alone);
                        entries.dropIfClosed(id, alone);
                        return Attempt.acquired(alone.token(), spare);
                    }
                    if (!queue && othersQueued(ops.children(lockPath), tag)) {
                        return Attempt.busy(retryWithin); // nothing written
                    }
                    mine = createEntry(owner, lockPath, epochAtStart);
                    if (mine == null) {
                        mirrors.noteGone(lockPath);
                        lockNodeMissing = true; // reaped or released in between
                        continue;
                    }
                    entries.put(id, mine);
                    entries.dropIfClosed(id, mine);
                }
                if (queue && sub != null && mine.session() == ops.sessionId()) {
                    Boolean heads = sub.heads(
                            ZKPaths.getNodeFromPath(mine.path()), null, tag, ZkQueueMirrors.MIRROR_WAIT_NANOS);
                    if (heads != null) {
                        if (heads) {
                            OwnEntry held = mine.granted(epochAtStart, false);
                            entries.put(id, held);
                            return Attempt.acquired(held.token(), spare);
                        }
                        return Attempt.busy(retryWithin);
                    }
                }
                List<ZkNames.Entry> queueNow = ops.children(lockPath);
                ZkNames.Entry first = null;
                ZkNames.Entry own = null;
                for (ZkNames.Entry e : queueNow) {
                    if (first == null) {
                        first = e;
                    }
                    if (e.ownerTag().equals(tag)) {
                        if (own == null) {
                            own = e;
                        } else {
                            ops.deleteInBackground(ZKPaths.makePath(lockPath, e.node())); // a duplicate of ours
                        }
                    }
                }
                if (own == null) {
                    // our entry is gone (session expired, deleted by an operator): queue again
                    entries.remove(id, mine);
                    continue;
                }
                String ownPath = ZKPaths.makePath(lockPath, own.node());
                if (!ownPath.equals(mine.path())) {
                    // the entry we know of is gone but an earlier one of ours (a lost create answer) is there
                    ops.deleteInBackground(mine.path());
                    Stat stat = curator.checkExists().forPath(ownPath);
                    if (stat == null) {
                        entries.remove(id, mine);
                        continue;
                    }
                    mine = new OwnEntry(ownPath, stat.getCzxid(), stat.getEphemeralOwner(), epochAtStart, false, false);
                    entries.put(id, mine);
                }
                if (mine.session() != ops.sessionId()) {
                    // left over from a session that ended; it dies with that session, but do not wait for it
                    ops.deleteInBackground(mine.path());
                    entries.remove(id, mine);
                    continue;
                }
                if (own == first) {
                    OwnEntry held = mine.granted(epochAtStart, queueNow.size() == 1);
                    entries.put(id, held);
                    return Attempt.acquired(held.token(), spare);
                }
                if (!queue) {
                    entries.remove(id, mine);
                    ops.deleteGuaranteed(mine.path());
                }
                return Attempt.busy(retryWithin);
            }
            // see Churn in the overview
            if (!queue) {
                OwnEntry left = entries.remove(id);
                if (left != null) {
                    ops.deleteGuaranteed(left.path());
                }
            }
            return Attempt.busy(ZooKeeperLockStore.CHURN_RETRY);
        });
    }

    /** The one-round-trip path: creates lock node and entry together; null if the lock node exists. */
    private @Nullable OwnEntry createWithLockNode(LockKey key, OwnerId owner, String lockPath, long epochAtStart)
            throws Exception {
        createHook.beforeCreate(lockPath, true);
        byte[] name = key.name().getBytes(StandardCharsets.UTF_8);
        String entryPrefix = ZKPaths.makePath(lockPath, ZkNames.entryPrefix(owner.value()));
        for (int tries = 0; tries < 2; tries++) {
            ACLProvider acls = ops.rawAcls();
            if (acls != null && curator.getZookeeperClient().isConnected()) {
                // ZooKeeper's own multi answers with the container's Stat, whose czxid the entry shares; Curator's
                // transaction drops it, which would cost a round trip more
                ZooKeeper zk = curator.getZookeeperClient().getZooKeeper();
                String namespace = curator.getNamespace();
                List<OpResult> results;
                try {
                    results = zk.multi(List.of(
                            Op.create(
                                    ZKPaths.fixForNamespace(namespace, lockPath),
                                    name,
                                    acls.getAclForPath(lockPath),
                                    CreateMode.CONTAINER),
                            Op.create(
                                    ZKPaths.fixForNamespace(namespace, entryPrefix),
                                    owner.value().getBytes(StandardCharsets.UTF_8),
                                    acls.getAclForPath(entryPrefix),
                                    CreateMode.EPHEMERAL_SEQUENTIAL)));
                } catch (KeeperException.NodeExistsException e) {
                    mirrors.noteExists(lockPath);
                    return null;
                } catch (KeeperException.NoNodeException e) {
                    ops.ensureLocksPath(); // an operator deleted the root
                    continue;
                }
                String created = ((OpResult.CreateResult) results.get(1)).getPath();
                String path = ZKPaths.makePath(lockPath, ZKPaths.getNodeFromPath(created));
                Stat stat = ((OpResult.CreateResult) results.get(0)).getStat();
                if (stat == null) {
                    stat = curator.checkExists().forPath(path);
                    if (stat == null) {
                        return null;
                    }
                }
                return new OwnEntry(path, stat.getCzxid(), zk.getSessionId(), epochAtStart, true, true);
            }
            CuratorOp createLockNode = curator.transactionOp()
                    .create()
                    .withMode(CreateMode.CONTAINER)
                    .forPath(lockPath, name);
            CuratorOp createEntry = curator.transactionOp()
                    .create()
                    .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                    .forPath(entryPrefix, owner.value().getBytes(StandardCharsets.UTF_8));
            List<CuratorTransactionResult> results;
            try {
                results = curator.transaction().forOperations(createLockNode, createEntry);
            } catch (KeeperException.NodeExistsException e) {
                mirrors.noteExists(lockPath);
                return null;
            } catch (KeeperException.NoNodeException e) {
                ops.ensureLocksPath(); // an operator deleted the root
                continue;
            }
            String path = Objects.requireNonNull(results.get(1).getResultPath(), "entry path");
            Stat stat = results.get(0).getResultStat();
            if (stat == null || stat.getCzxid() == 0) {
                stat = curator.checkExists().forPath(path); // the container and the entry share one zxid
                if (stat == null) {
                    return null;
                }
            }
            return new OwnEntry(path, stat.getCzxid(), ops.sessionId(), epochAtStart, true, true);
        }
        return null;
    }

    /** Creates an entry in an existing lock node; null if the lock node is gone. */
    private @Nullable OwnEntry createEntry(OwnerId owner, String lockPath, long epochAtStart) throws Exception {
        createHook.beforeCreate(lockPath, false);
        String entryPrefix = ZKPaths.makePath(lockPath, ZkNames.entryPrefix(owner.value()));
        Stat stat = new Stat();
        String path;
        try {
            path = curator.create()
                    .withProtection()
                    .storingStatIn(stat)
                    .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                    .forPath(entryPrefix, owner.value().getBytes(StandardCharsets.UTF_8));
        } catch (KeeperException.NoNodeException e) {
            return null;
        }
        if (stat.getCzxid() == 0) {
            // protected mode found our entry after a lost answer and filled in no Stat
            Stat found = curator.checkExists().forPath(path);
            if (found == null) {
                return null;
            }
            stat = found;
        }
        return new OwnEntry(path, stat.getCzxid(), stat.getEphemeralOwner(), epochAtStart, false, false);
    }

    private static boolean othersQueued(List<ZkNames.Entry> queue, String tag) {
        for (ZkNames.Entry e : queue) {
            if (!e.ownerTag().equals(tag)) {
                return true;
            }
        }
        return false;
    }
}
