package io.distlock.zookeeper;

import io.distlock.spi.HeldClaim;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import java.util.List;
import org.apache.zookeeper.KeeperException;

/*
 * Overview
 *
 * Role. The steps that end an owner's entry: release (of a hold), abandon (of a wait) and abandonHold (of a hold the
 * engine found lost).
 *
 * Release. Deletes the entry. When the grant found the entry alone and no local waiter watches the name, the same
 * multi deletes the lock node, so the next uncontended acquire is again one round trip; if someone queued meanwhile,
 * the multi fails as a whole and the entry alone is deleted. With local waiters the lock node stays: they are about
 * to use it, and deleting it would make them race to create it anew. A hold of an earlier connection epoch is
 * presumed lost (ZkSession): its entry is deleted and release answers false, whatever the node says.
 *
 * Abandon. Deletes the entry in Curator's guaranteed mode (retried in the background after a connection loss while
 * the session lives; an ephemeral entry dies with its session anyway). With no entry known here (a create whose
 * outcome is unknown), the owner's entries are searched for by owner tag, at once and, if that fails, again after the
 * next reconnect (OwnEntries.markUncertain).
 *
 * Lost holds. abandonHold ends exactly the entry whose grant carries the hold's token. The owner the hold is kept
 * under may be acquiring again already (after successions it is another thread of this client, and it may wait): its
 * attempt deletes the old entry itself (an entry is granted once) and makes a new one, which abandonHold must not
 * touch.
 *
 * Interrupts. An interrupted waiter still has to clean up: abandon and abandonHold run through ZkOps.cleanUp.
 */
/** The steps that end an owner's entry; see the overview comment in the source. */
final class ZkReleaser {
    private final ZkOps ops;
    private final OwnEntries entries;
    private final ZkSession session;
    private final ZkQueueMirrors mirrors;

    ZkReleaser(ZkOps ops, OwnEntries entries, ZkSession session, ZkQueueMirrors mirrors) {
        this.ops = ops;
        this.entries = entries;
        this.session = session;
        this.mirrors = mirrors;
    }

    boolean release(LockKey key, OwnerId owner) {
        EntryId id = new EntryId(key.name(), owner.value());
        OwnEntry mine = entries.remove(id);
        if (mine == null) {
            return false;
        }
        return ZkOps.call("release", () -> {
            if (mine.epoch() != session.epoch()) {
                // the connection was suspended since the grant: the hold is presumed lost, whatever the node says
                ops.deleteGuaranteed(mine.path());
                return false;
            }
            String lockPath = ops.lockPath(key);
            if (mine.alone() && !mirrors.watches(lockPath)) {
                try {
                    var unused = ops.transact(List.of(ZkOps.TxOp.delete(mine.path()), ZkOps.TxOp.delete(lockPath)));
                    mirrors.noteGone(lockPath);
                    return true;
                } catch (KeeperException.NotEmptyException e) {
                    // someone queued meanwhile: delete our entry alone
                } catch (KeeperException.NoNodeException e) {
                    return false; // our entry is gone (the lock node cannot be while our entry is there)
                } catch (KeeperException.ConnectionLossException | KeeperException.OperationTimeoutException e) {
                    // the direct multi is tried once: its outcome is unknown, and the connection trouble ends the
                    // hold anyway (presumed lost, as after SUSPENDED). Make sure the entry goes; the empty lock node
                    // is a container, which the server reaps.
                    ops.deleteGuaranteed(mine.path());
                    return false;
                }
            }
            try {
                ops.curator().delete().guaranteed().forPath(mine.path());
                return true;
            } catch (KeeperException.NoNodeException e) {
                return false;
            }
        });
    }

    void abandon(LockKey key, OwnerId owner) {
        EntryId id = new EntryId(key.name(), owner.value());
        OwnEntry mine = entries.remove(id);
        try {
            ZkOps.cleanUp(() -> {
                if (mine != null) {
                    ops.deleteGuaranteed(mine.path());
                } else {
                    entries.deleteEntriesOf(key, owner, null);
                }
            });
        } catch (RuntimeException e) {
            if (mine == null) {
                entries.markUncertain(id); // look again after the next reconnect
            }
            throw e;
        }
    }

    /** Ends exactly the entry of a lost hold; see Lost holds in the overview. */
    void abandonHold(HeldClaim hold) {
        EntryId id = new EntryId(hold.key().name(), hold.owner().value());
        OwnEntry mine = entries.get(id);
        if (mine != null && mine.token() == hold.fencingToken()) {
            entries.remove(id, mine);
            ZkOps.cleanUp(() -> ops.deleteGuaranteed(mine.path()));
        } else if (mine == null) {
            // not known here (any more): delete the owner's entry with that token if one is still there
            ZkOps.cleanUp(() -> entries.deleteEntriesOf(hold.key(), hold.owner(), hold.fencingToken()));
        }
        // else: the owner has a newer entry, made by an attempt that deleted this one first
    }
}
