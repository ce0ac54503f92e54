package io.distlock.zookeeper;

import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Role. What this client knows of its own queue entries: one OwnEntry per owner and lock name that holds or waits
 * here, keyed by EntryId. Acquire, release, hand-off and renew read and change it; the server's tree stays the truth,
 * and every part checks a remembered entry against it (session, czxid, place in the queue) before it relies on it.
 *
 * Uncertain entries. An abandon with no entry known here, whose search for the owner's entries failed, leaves the
 * owner's EntryId in the uncertain set. After the next reconnect the session watcher has the owner's entries
 * deleted (retryUncertain): an entry whose create answer was lost would otherwise block the queue until its session
 * ends.
 *
 * Finding entries by owner. An owner's entries are found in a getChildren answer by the owner tag in their names
 * (ZkNames.ownerTag), so entries whose create answer was lost, and duplicates of a retried create, are found too.
 * deleteEntriesOf deletes every such entry, or only the one whose grant would carry a given token.
 *
 * Closing. An entry created while the store closes is not in close's snapshot of the table: dropIfClosed, called
 * after each create, deletes it and fails the call. On close, the entries of a Curator client the store does not own
 * are deleted in the background, since that session outlives the store and its ephemeral entries would too.
 */
/** This client's own queue entries; see the overview comment in the source. */
final class OwnEntries {
    private static final Logger log = LoggerFactory.getLogger(OwnEntries.class);

    private final ZkOps ops;
    private final ConcurrentHashMap<EntryId, OwnEntry> entries = new ConcurrentHashMap<>();
    private final Set<EntryId> uncertain = ConcurrentHashMap.newKeySet();

    OwnEntries(ZkOps ops) {
        this.ops = ops;
    }

    @Nullable
    OwnEntry get(EntryId id) {
        return entries.get(id);
    }

    void put(EntryId id, OwnEntry entry) {
        entries.put(id, entry);
    }

    @Nullable
    OwnEntry remove(EntryId id) {
        return entries.remove(id);
    }

    /** Removes {@code entry} if it is still the one kept for {@code id}. */
    void remove(EntryId id, OwnEntry entry) {
        entries.remove(id, entry);
    }

    /** Remembers to search for and delete the entries of {@code id} after the next reconnect. */
    void markUncertain(EntryId id) {
        uncertain.add(id);
    }

    /** An entry created while close() ran is not in close()'s list: delete it here. */
    void dropIfClosed(EntryId id, OwnEntry created) throws Exception {
        if (ops.closed()) {
            entries.remove(id, created);
            ops.curator().delete().guaranteed().inBackground().forPath(created.path());
            ops.ensureOpen();
        }
    }

    /**
     * Deletes the entries of {@code owner} under the lock, found by owner tag: every one, or with {@code token} only
     * the one whose grant would carry that token.
     */
    void deleteEntriesOf(LockKey key, OwnerId owner, @Nullable Long token) throws Exception {
        String lockPath = ops.lockPath(key);
        String tag = ZkNames.ownerTag(owner.value());
        for (ZkNames.Entry e : ops.children(lockPath)) {
            if (e.ownerTag().equals(tag)) {
                String path = ZKPaths.makePath(lockPath, e.node());
                if (token != null) {
                    Stat stat = ops.curator().checkExists().forPath(path);
                    if (stat == null || ZooKeeperLockStore.tokenOf(stat.getCzxid()) != token) {
                        continue;
                    }
                }
                ops.deleteGuaranteed(path);
            }
        }
    }

    /** Deletes the entries of the owners marked uncertain; those that fail again stay marked. */
    void retryUncertain() {
        for (EntryId id : List.copyOf(uncertain)) {
            try {
                deleteEntriesOf(new LockKey(id.name()), new OwnerId(id.owner()), null);
                uncertain.remove(id);
            } catch (Exception e) {
                log.warn("distlock: could not clean up after '{}' for {}", id.name(), OwnerId.redact(id.owner()), e);
            }
        }
    }

    /**
     * Forgets every entry; with {@code deleteThem}, deletes them in the background first (a session that outlives the
     * store).
     */
    void close(boolean deleteThem) {
        if (deleteThem) {
            Collection<OwnEntry> left = List.copyOf(entries.values());
            for (OwnEntry e : left) {
                try {
                    ops.curator().delete().guaranteed().inBackground().forPath(e.path());
                } catch (Exception ex) {
                    log.debug("distlock: could not delete {} on close", OwnerId.redact(e.path()), ex);
                }
            }
        }
        entries.clear();
    }
}
