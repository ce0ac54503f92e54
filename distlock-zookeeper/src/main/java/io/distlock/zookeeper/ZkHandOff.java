package io.distlock.zookeeper;

import io.distlock.spi.HandOff;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Role. The hand-off step (HandsOff): when a local holder releases and another owner of this client waits, the engine
 * hands the lock over instead of releasing it.
 *
 * To a receiver without an entry. One ZooKeeper multi deletes the giver's entry, deletes the lock node and makes it
 * again with a new entry of the receiver. Deleting the lock node fails, and the multi with it, when any other entry
 * is there: so when it succeeds the receiver's entry is alone and holds the lock, with the transaction's zxid as its
 * czxid and token, in one round trip and one write. The multi is skipped when the mirror knows of other entries.
 * Otherwise a second multi deletes the giver's entry and queues the receiver's; the mirror (or a getChildren) tells
 * whether it is first (granted) or waits behind other owners (queued). Either way the new entry is protected like
 * Curator's protected mode: its name carries a GUID, so a transaction whose answer was lost is found again
 * (recoverHandOff).
 *
 * To a queued receiver. Deleting the giver's entry is the hand-off, and the receiver's entry holds if it is now first.
 * The receiver may be the owner the hold is kept under (a succession passed it on, and that owner waits again): its
 * entry is then the one handed off, not a place in the queue.
 *
 * Fencing. Tokens stay derived from czxids, so grants still follow creation order, and a hand-off never overtakes
 * another client's entry. A grant reserves the spare tokens the receiver's claim asks, up to the cap
 * (ZooKeeperLockStore), also when it grants a receiver that was queued.
 *
 * Wake-ups. The deletions a hand-off makes wake no local waiter (ZkQueueMirrors.markHandedOff): the receiver holds,
 * or the engine wakes the waiters itself.
 *
 * Failures. A hold of an earlier connection epoch or session is presumed lost: its entry is deleted and the answer is
 * notHeld. After any other failure the engine takes the hold as ended, so its entry is deleted in the background
 * (forget); the engine gives the receiver's possible entry back itself, by abandon or by its next attempt, which finds
 * it by owner tag.
 */
/** The hand-off step of the lock store; see the overview comment in the source. */
final class ZkHandOff {
    private static final Logger log = LoggerFactory.getLogger(ZkHandOff.class);
    /** Curator's protected-mode prefix; a hand-off's entry carries one of its own making. */
    private static final String PROTECTED_MARK = "_c_";

    private final ZkOps ops;
    private final CuratorFramework curator;
    private final OwnEntries entries;
    private final ZkSession session;
    private final ZkQueueMirrors mirrors;

    ZkHandOff(ZkOps ops, OwnEntries entries, ZkSession session, ZkQueueMirrors mirrors) {
        this.ops = ops;
        this.curator = ops.curator();
        this.entries = entries;
        this.session = session;
        this.mirrors = mirrors;
    }

    /**
     * Hands the hold of {@code from} to {@code to}.
     *
     * @param spare the spare tokens a grant reserves: the receiver's claim's ask, capped (see ZooKeeperLockStore)
     */
    HandOff handOff(LockKey key, OwnerId from, OwnerId to, int spare) {
        EntryId fromId = new EntryId(key.name(), from.value());
        EntryId toId = new EntryId(key.name(), to.value());
        OwnEntry held = entries.get(fromId);
        if (held == null) {
            return HandOff.notHeld();
        }
        return ZkOps.call("handOff", () -> {
            ops.ensureOpen();
            long epochAtStart = session.epoch();
            long sessionId = ops.sessionId();
            if (held.epoch() != epochAtStart || held.session() != sessionId) {
                // as in release: the connection was suspended since the grant, so the hold is presumed lost
                entries.remove(fromId, held);
                ops.deleteGuaranteed(held.path());
                return HandOff.notHeld();
            }
            String lockPath = ops.lockPath(key);
            // see To a queued receiver in the overview
            OwnEntry waiting = fromId.equals(toId) ? null : entries.get(toId);
            if (waiting != null && waiting.session() != sessionId) {
                // left over from a session that ended: it dies with it
                entries.remove(toId, waiting);
                ops.deleteInBackground(waiting.path());
                waiting = null;
            }
            boolean quiet = mirrors.watches(lockPath);
            if (quiet) {
                mirrors.markHandedOff(held.path());
            }
            HandOff answer = null;
            try {
                answer = waiting != null
                        ? handOffToQueued(fromId, held, toId, waiting, lockPath, epochAtStart, spare)
                        : handOffToNew(key, fromId, held, toId, to, lockPath, epochAtStart, spare);
                return answer;
            } finally {
                if (quiet && (answer == null || answer == HandOff.notHeld())) {
                    mirrors.unmarkHandedOff(held.path()); // deleted by nobody, or by someone else before
                }
            }
        });
    }

    /** The receiver has no entry: one transaction ends the hold and queues the receiver. */
    private HandOff handOffToNew(
            LockKey key,
            EntryId fromId,
            OwnEntry held,
            EntryId toId,
            OwnerId to,
            String lockPath,
            long epochAtStart,
            int spare)
            throws Exception {
        // protected like Curator's protected mode: a transaction retried after a lost answer is recognised by it
        String guid = UUID.randomUUID().toString();
        String entryPath = ZKPaths.makePath(lockPath, PROTECTED_MARK + guid + "-" + ZkNames.entryPrefix(to.value()));
        byte[] ownerData = to.value().getBytes(StandardCharsets.UTF_8);
        String heldNode = ZKPaths.getNodeFromPath(held.path());
        ZkQueueMirrors.Mirror sub = mirrors.get(lockPath);
        try {
            if (sub == null || !sub.knownOthers(heldNode)) {
                // nobody else queued: delete the lock node with the hold and make it again with the receiver's entry,
                // which fails as a whole if any other entry is there. The new entry is then alone, so it holds the
                // lock, and the transaction's zxid (the container's czxid, which the entry shares) is its token.
                try {
                    List<ZkOps.TxResult> done = ops.transact(List.of(
                            ZkOps.TxOp.delete(held.path()),
                            ZkOps.TxOp.delete(lockPath),
                            ZkOps.TxOp.create(
                                    lockPath, key.name().getBytes(StandardCharsets.UTF_8), CreateMode.CONTAINER),
                            ZkOps.TxOp.create(entryPath, ownerData, CreateMode.EPHEMERAL_SEQUENTIAL)));
                    entries.remove(fromId, held);
                    String path = done.get(3).path();
                    Stat stat = done.get(2).stat();
                    if (stat == null || stat.getCzxid() == 0) {
                        stat = curator.checkExists().forPath(path);
                        if (stat == null) {
                            throw new IllegalStateException("the entry " + path + " handed the lock vanished");
                        }
                    }
                    OwnEntry granted = new OwnEntry(path, stat.getCzxid(), held.session(), epochAtStart, true, true);
                    entries.put(toId, granted);
                    entries.dropIfClosed(toId, granted);
                    return HandOff.granted(granted.token(), spare);
                } catch (KeeperException.NotEmptyException e) {
                    // other owners are queued: the receiver joins them
                }
            }
            List<ZkOps.TxResult> done = ops.transact(List.of(
                    ZkOps.TxOp.delete(held.path()),
                    ZkOps.TxOp.create(entryPath, ownerData, CreateMode.EPHEMERAL_SEQUENTIAL)));
            entries.remove(fromId, held);
            String path = done.get(1).path();
            Stat stat = done.get(1).stat();
            if (stat == null || stat.getCzxid() == 0) {
                stat = curator.checkExists().forPath(path); // a server without stats in multi answers
                if (stat == null) {
                    throw new IllegalStateException("the entry " + path + " handed the lock vanished");
                }
            }
            OwnEntry queued = new OwnEntry(path, stat.getCzxid(), held.session(), epochAtStart, false, false);
            entries.put(toId, queued);
            entries.dropIfClosed(toId, queued);
            String tag = ZkNames.ownerTag(to.value());
            Boolean heads = sub == null
                    ? null
                    : sub.heads(ZKPaths.getNodeFromPath(path), null, tag, ZkQueueMirrors.MIRROR_WAIT_NANOS);
            if (heads == null) {
                List<ZkNames.Entry> queueNow = ops.children(lockPath);
                heads = !queueNow.isEmpty()
                        && ZKPaths.makePath(lockPath, queueNow.get(0).node()).equals(path);
            }
            return grantIfFirst(toId, queued, heads, epochAtStart, spare);
        } catch (KeeperException.NoNodeException
                | KeeperException.ConnectionLossException
                | KeeperException.OperationTimeoutException e) {
            // the hold's entry is gone, or the answer was lost (perhaps after a retry found the first try applied)
            try {
                return recoverHandOff(fromId, held, toId, lockPath, guid, epochAtStart, spare, e);
            } catch (Exception failed) {
                forget(fromId, held);
                throw failed;
            }
        } catch (Exception e) {
            forget(fromId, held);
            throw e;
        }
    }

    /** After a failed hand-off the engine takes the hold as ended: make sure its entry goes. */
    private void forget(EntryId fromId, OwnEntry held) {
        entries.remove(fromId, held);
        try {
            ops.deleteInBackground(held.path());
        } catch (Exception e) {
            log.warn("distlock: could not delete {} after a failed hand-off", OwnerId.redact(held.path()), e);
        }
    }

    /** The receiver is queued already: ending the hold may make it the head. */
    private HandOff handOffToQueued(
            EntryId fromId,
            OwnEntry held,
            EntryId toId,
            OwnEntry waiting,
            String lockPath,
            long epochAtStart,
            int spare)
            throws Exception {
        try {
            curator.delete().guaranteed().forPath(held.path());
        } catch (KeeperException.NoNodeException e) {
            entries.remove(fromId, held);
            return HandOff.notHeld();
        }
        entries.remove(fromId, held);
        String node = ZKPaths.getNodeFromPath(waiting.path());
        String tag = ZkNames.ownerTag(toId.owner());
        ZkQueueMirrors.Mirror sub = mirrors.get(lockPath);
        Boolean heads = sub == null
                ? null
                : sub.heads(node, ZKPaths.getNodeFromPath(held.path()), tag, ZkQueueMirrors.MIRROR_WAIT_NANOS);
        if (heads == null) {
            List<ZkNames.Entry> queueNow = ops.children(lockPath);
            heads = !queueNow.isEmpty() && queueNow.get(0).node().equals(node);
        }
        return grantIfFirst(toId, waiting, heads, epochAtStart, spare);
    }

    private HandOff grantIfFirst(EntryId toId, OwnEntry entry, boolean heads, long epochAtStart, int spare) {
        if (!heads) {
            return HandOff.queued(); // behind owners of other clients; the entry stays for tryAcquire or abandon
        }
        OwnEntry granted = entry.granted(epochAtStart, false);
        entries.put(toId, granted);
        return HandOff.granted(granted.token(), spare);
    }

    /**
     * A hand-off's transaction failed with a lost answer or a missing node: whether it was applied (by this try or by
     * a retry Curator made) shows in the receiver's protected entry.
     */
    private HandOff recoverHandOff(
            EntryId fromId,
            OwnEntry held,
            EntryId toId,
            String lockPath,
            String guid,
            long epochAtStart,
            int spare,
            KeeperException failure)
            throws Exception {
        List<ZkNames.Entry> queueNow = ops.children(lockPath);
        ZkNames.Entry created = null;
        boolean heldThere = false;
        String heldNode = ZKPaths.getNodeFromPath(held.path());
        for (ZkNames.Entry e : queueNow) {
            if (e.node().startsWith(PROTECTED_MARK + guid + "-")) {
                created = e;
            }
            heldThere |= e.node().equals(heldNode);
        }
        if (created == null) {
            if (!heldThere) {
                entries.remove(fromId, held);
                return HandOff.notHeld(); // the hold's entry was gone: nothing was changed
            }
            // not applied and the hold's entry is still there: the answer was lost; the connection trouble ends the
            // hold anyway (presumed lost), so do not leave its entry behind
            entries.remove(fromId, held);
            ops.deleteGuaranteed(held.path());
            throw failure;
        }
        // applied: the hold's entry went in the same transaction
        entries.remove(fromId, held);
        String path = ZKPaths.makePath(lockPath, created.node());
        Stat stat = curator.checkExists().forPath(path);
        if (stat == null) {
            throw new IllegalStateException("the entry " + path + " handed the lock vanished", failure);
        }
        OwnEntry entry = new OwnEntry(path, stat.getCzxid(), stat.getEphemeralOwner(), epochAtStart, false, false);
        entries.put(toId, entry);
        entries.dropIfClosed(toId, entry);
        return grantIfFirst(toId, entry, queueNow.get(0).equals(created), epochAtStart, spare);
    }
}
