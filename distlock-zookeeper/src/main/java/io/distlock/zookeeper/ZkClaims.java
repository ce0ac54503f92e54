package io.distlock.zookeeper;

import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.LockKey;
import io.distlock.spi.Mode;
import io.distlock.spi.OwnerId;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.curator.framework.CuratorFramework;
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
 * Role. The store steps of read-write locks and semaphores: tryAcquire, release, abandon, abandonHold and renew.
 *
 * Layout. Every such name has a name node <root>/sync/<ZkNames.lockNode(name)>, a CONTAINER (reaped by the server once
 * empty) whose data is the full name. Its children are the queue: one EPHEMERAL_SEQUENTIAL entry per owner and mode
 * that holds or waits, whose name says what it asks for (ZkClaimQueue) and whose data is the owner id. The grant
 * rules, the kind checks and the entries a waiter watches are ZkClaimQueue's; a count-down latch of the same name is
 * the child "latch" of the same node (ZkLatches), so one getChildren tells a claim that the name is a latch.
 *
 * Acquire. A queueing attempt creates its entry in Curator's protected mode (a create whose answer was lost is found
 * again by its GUID, not repeated) and reads the children: granted if the verdict says so; else it records its wait
 * and registers exists watches on the entries the verdict names (ZkClaimWatches) and answers busy, so a later attempt
 * (after a wake-up, which comes only when the entries it waits on have freed enough) reads the queue again. Two round
 * trips for an acquire, plus one per wake-up and one per entry newly watched by this client. The engine's re-check
 * right after an entry's first busy answer (it subscribes, then tries once more) reads nothing when the wait that
 * answer registered is still whole (ZkClaimWatches.stillWaits): no entry it waits on has left since, the connection
 * has had no trouble, and the subscription that hears the next deletion was there before the wait was registered, so
 * the answer would be busy again. An entry's first attempt registers its wait only on a subscription made before it;
 * the first waiter of a name in a client then reads on its re-check, and registers there. A plain
 * try (queue false) reads the children first and writes nothing when it would wait; if it wrote an entry that then
 * waits (the queue changed in between), it deletes it again.
 *
 * Own entries. What this client knows of its entries is kept per (name, owner, mode): an owner holds a read and a
 * write entry at once while it downgrades. An entry granted once is never granted again (its token was issued): an
 * attempt that finds its owner's granted entry (a hold since lost) ends it and queues anew.
 *
 * Fencing. As for locks, the token of a grant is ZooKeeperLockStore.tokenOf(czxid): grants are prefix-closed in
 * sequence order (ZkClaimQueue), so a grant's entry was created after every entry granted before it. Read and
 * semaphore grants reserve no spare tokens.
 *
 * Leases. A hold lasts as long as the session (SessionHolds): renew checks that each entry still exists in the current
 * session with the czxid of its grant, and a hold of an earlier connection epoch (ZkSession) is gone without a round
 * trip. A fixed lease is ended by the engine's timer through abandonHold.
 *
 * Interrupts. abandon and abandonHold run through ZkOps.cleanUp, so an interrupted waiter still deletes its entry.
 */
/** The read-write lock and semaphore steps of the ZooKeeper store; see the overview comment in the source. */
final class ZkClaims {
    private static final int MAX_OPS_PER_MULTI = 1000;

    /** An owner's entry of one mode under one name. */
    record ClaimId(String name, String owner, Mode mode) {}

    private final ZkOps ops;
    private final CuratorFramework curator;
    private final ZkSession session;
    private final ZkClaimWatches watches;
    private final Duration retryWithin;
    private final ConcurrentHashMap<ClaimId, OwnEntry> own = new ConcurrentHashMap<>();

    ZkClaims(ZkOps ops, ZkSession session, ZkClaimWatches watches, Duration retryWithin) {
        this.ops = ops;
        this.curator = ops.curator();
        this.session = session;
        this.watches = watches;
        this.retryWithin = retryWithin;
    }

    Attempt tryAcquire(Claim claim, boolean queue) {
        return ZkOps.call("tryAcquire", () -> {
            String name = claim.key().name();
            ClaimId id = new ClaimId(name, claim.owner().value(), claim.mode());
            String namePath = ops.syncPath(claim.key());
            String tag = ZkNames.ownerTag(claim.owner().value());
            boolean created = false;
            for (int tries = 0; tries < ZooKeeperLockStore.MAX_TRIES; tries++) {
                ops.ensureOpen();
                long epochAtStart = session.epoch();
                OwnEntry mine = own.get(id);
                if (tries == 0 && queue && mine != null && !mine.held()) {
                    ZkClaimWatches.Watch recheck = watches.get(namePath);
                    if (recheck != null && recheck.stillWaits(claim.owner(), claim.mode(), epochAtStart)) {
                        // the engine's re-check after the entry's first busy answer: nothing ahead has left since
                        return Attempt.busy(retryWithin);
                    }
                }
                if (mine != null && mine.held()) {
                    // granted before and since lost: its token was issued, so end it and queue anew
                    own.remove(id, mine);
                    ops.deleteGuaranteed(mine.path());
                    mine = null;
                }
                if (mine == null) {
                    if (!queue) {
                        List<String> children = ops.childNames(namePath);
                        List<ZkClaimQueue.Entry> q = ZkClaimQueue.queue(children);
                        ZkClaimQueue.checkKind(
                                name, q, children.contains(ZkClaimQueue.LATCH_NODE), claim.kind(), claim.size());
                        ZkClaimQueue.Entry appended = new ZkClaimQueue.Entry(
                                "",
                                tag,
                                Long.MAX_VALUE,
                                claim.kind(),
                                claim.mode(),
                                claim.size(),
                                claim.permits(),
                                downgrades(claim));
                        if (!ZkClaimQueue.verdict(q, appended).granted()) {
                            return Attempt.busy(retryWithin); // nothing written
                        }
                    }
                    mine = create(claim, namePath, epochAtStart);
                    created = true;
                    own.put(id, mine);
                    dropIfClosed(id, mine);
                }
                String ownNode = ZKPaths.getNodeFromPath(mine.path());
                List<String> children = ops.childNames(namePath);
                List<ZkClaimQueue.Entry> q = ZkClaimQueue.queue(children);
                ZkClaimQueue.Entry self = null;
                for (ZkClaimQueue.Entry e : q) {
                    if (e.node().equals(ownNode)) {
                        self = e;
                        break;
                    }
                }
                if (self == null) {
                    own.remove(id, mine); // gone (session expired, deleted by an operator): queue again
                    continue;
                }
                try {
                    ZkClaimQueue.checkKind(
                            name, q, children.contains(ZkClaimQueue.LATCH_NODE), claim.kind(), claim.size());
                } catch (IllegalStateException e) {
                    own.remove(id, mine);
                    ops.deleteGuaranteed(mine.path());
                    throw e;
                }
                if (mine.session() != ops.sessionId()) {
                    ops.deleteInBackground(mine.path()); // left over from a session that ended
                    own.remove(id, mine);
                    continue;
                }
                ZkClaimQueue.Verdict verdict = ZkClaimQueue.verdict(q, self);
                ZkClaimWatches.Watch w = watches.get(namePath);
                if (verdict.granted()) {
                    OwnEntry held = mine.granted(epochAtStart, false);
                    own.put(id, held);
                    if (w != null) {
                        w.forget(claim.owner(), claim.mode());
                    }
                    return Attempt.acquired(held.token());
                }
                if (!queue) {
                    own.remove(id, mine);
                    ops.deleteGuaranteed(mine.path());
                    return Attempt.busy(retryWithin);
                }
                if (w != null && !w.await(claim.owner(), claim.mode(), verdict, created, epochAtStart)) {
                    continue; // an entry ahead went between the read and the watch: read again
                }
                return Attempt.busy(retryWithin);
            }
            if (!queue) {
                OwnEntry left = own.remove(id);
                if (left != null) {
                    ops.deleteGuaranteed(left.path());
                }
            }
            return Attempt.busy(ZooKeeperLockStore.CHURN_RETRY);
        });
    }

    /** Creates the owner's entry, and the name node first if it is missing. */
    private OwnEntry create(Claim claim, String namePath, long epochAtStart) throws Exception {
        String prefix = ZKPaths.makePath(namePath, ZkClaimQueue.entryPrefix(claim, downgrades(claim)));
        byte[] ownerData = claim.owner().value().getBytes(StandardCharsets.UTF_8);
        for (int tries = 0; ; tries++) {
            Stat stat = new Stat();
            try {
                String path = curator.create()
                        .withProtection()
                        .storingStatIn(stat)
                        .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                        .forPath(prefix, ownerData);
                if (stat.getCzxid() == 0) {
                    // protected mode found our entry after a lost answer and filled in no Stat
                    Stat found = curator.checkExists().forPath(path);
                    if (found == null) {
                        continue;
                    }
                    stat = found;
                }
                return new OwnEntry(path, stat.getCzxid(), stat.getEphemeralOwner(), epochAtStart, false, false);
            } catch (KeeperException.NoNodeException e) {
                if (tries >= ZooKeeperLockStore.MAX_TRIES) {
                    throw e;
                }
                ops.ensureNameNode(namePath, claim.key().name());
            }
        }
    }

    /** Whether {@code claim} is a read of an owner that holds the write entry of the name (a downgrade). */
    private boolean downgrades(Claim claim) {
        if (claim.kind() != Claim.Kind.READ_WRITE_LOCK || claim.mode() != Mode.SHARED) {
            return false;
        }
        OwnEntry write = own.get(new ClaimId(claim.key().name(), claim.owner().value(), Mode.EXCLUSIVE));
        return write != null && write.held() && write.epoch() == session.epoch();
    }

    private void dropIfClosed(ClaimId id, OwnEntry created) throws Exception {
        if (ops.closed()) {
            own.remove(id, created);
            ops.deleteInBackground(created.path());
            ops.ensureOpen();
        }
    }

    boolean release(HeldClaim hold) {
        ClaimId id = new ClaimId(hold.key().name(), hold.owner().value(), hold.mode());
        OwnEntry mine = own.get(id);
        if (mine == null || mine.token() != hold.fencingToken()) {
            return false;
        }
        own.remove(id, mine);
        return ZkOps.call("release", () -> {
            if (mine.epoch() != session.epoch()) {
                // the connection was suspended since the grant: the hold is presumed lost, whatever the node says
                ops.deleteGuaranteed(mine.path());
                return false;
            }
            try {
                curator.delete().guaranteed().forPath(mine.path());
                return true;
            } catch (KeeperException.NoNodeException e) {
                return false;
            }
        });
    }

    void abandon(Claim claim) {
        ClaimId id = new ClaimId(claim.key().name(), claim.owner().value(), claim.mode());
        OwnEntry mine = own.remove(id);
        ZkClaimWatches.Watch w = watches.get(ops.syncPath(claim.key()));
        if (w != null) {
            w.forget(claim.owner(), claim.mode());
        }
        ZkOps.cleanUp(() -> {
            if (mine != null) {
                ops.deleteGuaranteed(mine.path());
            } else {
                // a create whose outcome is unknown: find the owner's entries of that mode by name
                deleteEntriesOf(claim.key(), claim.owner(), claim.mode(), null);
            }
        });
    }

    /** Ends exactly the entry of a lost hold, never a newer one of the same owner. */
    void abandonHold(HeldClaim hold) {
        ClaimId id = new ClaimId(hold.key().name(), hold.owner().value(), hold.mode());
        OwnEntry mine = own.get(id);
        if (mine != null && mine.token() == hold.fencingToken()) {
            own.remove(id, mine);
            ZkOps.cleanUp(() -> ops.deleteGuaranteed(mine.path()));
        } else if (mine == null) {
            ZkOps.cleanUp(() -> deleteEntriesOf(hold.key(), hold.owner(), hold.mode(), hold.fencingToken()));
        }
    }

    /** Deletes the entries of {@code owner} and {@code mode} under the name: all, or the one with {@code token}. */
    private void deleteEntriesOf(LockKey key, OwnerId owner, Mode mode, @Nullable Long token) throws Exception {
        String namePath = ops.syncPath(key);
        String tag = ZkNames.ownerTag(owner.value());
        for (ZkClaimQueue.Entry e : ZkClaimQueue.queue(ops.childNames(namePath))) {
            if (!e.ownerTag().equals(tag) || e.mode() != mode) {
                continue;
            }
            String path = ZKPaths.makePath(namePath, e.node());
            if (token != null) {
                Stat stat = curator.checkExists().forPath(path);
                if (stat == null || ZooKeeperLockStore.tokenOf(stat.getCzxid()) != token) {
                    continue;
                }
            }
            ops.deleteGuaranteed(path);
        }
    }

    /** The holds of {@code holds} that are gone; the session is the lease (see Leases in the overview). */
    Set<HeldClaim> renew(Collection<HeldClaim> holds) {
        return ZkOps.call("renew", () -> {
            Set<HeldClaim> gone = new HashSet<>();
            long epochNow = session.epoch();
            if (!curator.getZookeeperClient().isConnected()) {
                gone.addAll(holds);
                return gone;
            }
            List<HeldClaim> toCheck = new ArrayList<>();
            List<OwnEntry> checked = new ArrayList<>();
            for (HeldClaim h : holds) {
                OwnEntry e = own.get(new ClaimId(h.key().name(), h.owner().value(), h.mode()));
                if (e == null || e.epoch() != epochNow || e.token() != h.fencingToken()) {
                    gone.add(h);
                } else {
                    toCheck.add(h);
                    checked.add(e);
                }
            }
            if (toCheck.isEmpty()) {
                return gone;
            }
            ZooKeeper zk = curator.getZookeeperClient().getZooKeeper();
            long sessionId = zk.getSessionId();
            String namespace = curator.getNamespace();
            for (int from = 0; from < toCheck.size(); from += MAX_OPS_PER_MULTI) {
                int to = Math.min(toCheck.size(), from + MAX_OPS_PER_MULTI);
                List<Op> reads = new ArrayList<>(to - from);
                for (int i = from; i < to; i++) {
                    reads.add(Op.getData(
                            ZKPaths.fixForNamespace(namespace, checked.get(i).path())));
                }
                List<OpResult> results = zk.multi(reads);
                for (int i = from; i < to; i++) {
                    OpResult r = results.get(i - from);
                    OwnEntry e = checked.get(i);
                    boolean alive = r instanceof OpResult.GetDataResult data
                            && data.getStat().getCzxid() == e.czxid()
                            && data.getStat().getEphemeralOwner() == sessionId;
                    if (!alive) {
                        gone.add(toCheck.get(i));
                    }
                }
            }
            return gone;
        });
    }

    /** Whether this client has an entry under the name (it holds or waits there as a read-write lock or semaphore). */
    boolean hasEntry(String name) {
        for (ClaimId id : own.keySet()) {
            if (id.name().equals(name)) {
                return true;
            }
        }
        return false;
    }

    /** Forgets every entry; with {@code deleteThem}, deletes them in the background first. */
    void close(boolean deleteThem) {
        if (deleteThem) {
            for (OwnEntry e : List.copyOf(own.values())) {
                try {
                    ops.deleteInBackground(e.path());
                } catch (Exception ex) {
                    // the session ends them anyway
                }
            }
        }
        own.clear();
    }
}
