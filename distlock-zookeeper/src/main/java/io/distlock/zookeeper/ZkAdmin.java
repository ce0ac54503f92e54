package io.distlock.zookeeper;

import io.distlock.LockInfo;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * Role. The operator's view of the locks (ClaimAdmin: inspect, list, forceRelease of the holder or of one owner's
 * hold) and the engine's question whether a lock is free (available), for any owner, from the tree alone (this
 * client's own entries play no part).
 *
 * The holder. A lock's holder is the first entry of its lock node's queue: its data is the owner id, and the token of
 * its grant comes from its czxid (ZooKeeperLockStore.tokenOf); the other entries are the waiters. A hold lasts as long
 * as its session, so the remaining lease is reported as zero. When the first entry vanishes between the listing and
 * the read, the queue is read again, up to MAX_TRIES times.
 *
 * Listing. The children of the locks path are the lock nodes; a readable node name gives the lock name, a hashed one
 * (a long name) is resolved by reading the node's data. Names are sorted, filtered by prefix, and only locks that are
 * held are listed, up to the limit.
 *
 * Forcing a release. Deletes the holder's entry with the version read, so an entry that changed meanwhile is not
 * deleted by mistake: the next waiter is then granted as after a release, and the former holder's client finds its
 * entry gone at its next renew. The release of one owner's hold does the same when the holder's entry is that
 * owner's (its data is the owner id), and changes nothing otherwise: an entry that only waits is no hold.
 *
 * Available. A lock is free (1) when its lock node has no entry, and held (0) otherwise: the first entry holds.
 */
/** Inspect, list and force-release; see the overview comment in the source. */
final class ZkAdmin {
    private final ZkOps ops;
    private final CuratorFramework curator;

    ZkAdmin(ZkOps ops) {
        this.ops = ops;
        this.curator = ops.curator();
    }

    Optional<LockInfo> inspect(LockKey key) {
        return ZkOps.call("inspect", () -> Optional.ofNullable(head(key.name(), ops.lockPath(key)))
                .map(Head::info));
    }

    List<LockInfo> list(String prefix, int limit) {
        return ZkOps.call("list", () -> {
            String locksPath = ops.locksPath();
            List<String> nodes;
            try {
                nodes = curator.getChildren().forPath(locksPath);
            } catch (KeeperException.NoNodeException e) {
                return List.of();
            }
            TreeMap<String, String> byName = new TreeMap<>();
            for (String node : nodes) {
                if (!ZkNames.isLockNode(node)) {
                    continue;
                }
                String path = ZKPaths.makePath(locksPath, node);
                String name = ZkNames.lockName(node);
                if (name == null) {
                    try {
                        name = new String(curator.getData().forPath(path), StandardCharsets.UTF_8);
                    } catch (KeeperException.NoNodeException e) {
                        continue;
                    }
                }
                if (name.startsWith(prefix)) {
                    byName.put(name, path);
                }
            }
            List<LockInfo> out = new ArrayList<>();
            for (Map.Entry<String, String> e : byName.entrySet()) {
                if (out.size() >= limit) {
                    break;
                }
                Head head = head(e.getKey(), e.getValue());
                if (head != null) {
                    out.add(head.info());
                }
            }
            return out;
        });
    }

    /** Ends the hold of the name, whoever owns it. */
    Optional<LockInfo> forceRelease(LockKey key) {
        return forceRelease(key, null);
    }

    /** Ends the hold of the name if {@code owner} holds it (any owner when null). */
    Optional<LockInfo> forceRelease(LockKey key, @Nullable OwnerId owner) {
        return ZkOps.call("forceRelease", () -> {
            String lockPath = ops.lockPath(key);
            for (int tries = 0; tries < ZooKeeperLockStore.MAX_TRIES; tries++) {
                Head head = head(key.name(), lockPath);
                if (head == null || (owner != null && !head.owner().equals(owner.value()))) {
                    return Optional.<LockInfo>empty();
                }
                try {
                    curator.delete().withVersion(head.version()).forPath(head.path());
                    return Optional.of(head.info());
                } catch (KeeperException.NoNodeException | KeeperException.BadVersionException e) {
                    // released or re-queued meanwhile: look again
                }
            }
            throw new IllegalStateException(
                    "lock node " + lockPath + " kept changing under " + ZooKeeperLockStore.MAX_TRIES + " tries");
        });
    }

    /** 1 when nobody holds the lock, 0 when someone does. */
    int available(LockKey key) {
        return ZkOps.call("available", () -> ops.children(ops.lockPath(key)).isEmpty() ? 1 : 0);
    }

    private record Head(String name, String path, String owner, long czxid, int version, int waiters) {
        LockInfo info() {
            return new LockInfo(name, owner, Duration.ZERO, ZooKeeperLockStore.tokenOf(czxid), waiters);
        }
    }

    /** The holder's entry of a lock, or null if nobody holds it. */
    private @Nullable Head head(String name, String lockPath) throws Exception {
        for (int tries = 0; tries < ZooKeeperLockStore.MAX_TRIES; tries++) {
            List<ZkNames.Entry> queue = ops.children(lockPath);
            if (queue.isEmpty()) {
                return null;
            }
            String path = ZKPaths.makePath(lockPath, queue.get(0).node());
            Stat stat = new Stat();
            try {
                byte[] data = curator.getData().storingStatIn(stat).forPath(path);
                return new Head(
                        name,
                        path,
                        new String(data, StandardCharsets.UTF_8),
                        stat.getCzxid(),
                        stat.getVersion(),
                        queue.size() - 1);
            } catch (KeeperException.NoNodeException e) {
                // released meanwhile: look again
            }
        }
        throw new IllegalStateException(
                "lock node " + lockPath + " kept changing under " + ZooKeeperLockStore.MAX_TRIES + " tries");
    }
}
