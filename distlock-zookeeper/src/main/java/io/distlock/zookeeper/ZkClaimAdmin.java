package io.distlock.zookeeper;

import io.distlock.LockInfo;
import io.distlock.spi.Claim;
import io.distlock.spi.LockKey;
import io.distlock.spi.Mode;
import io.distlock.spi.OwnerId;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
 * Role. The operator's view of read-write locks, semaphores and latches (inspect, list, forceRelease) and the engine's
 * question how many permits are free (available), from the tree alone.
 *
 * Holders. The holders of a name are the entries of its queue that ZkClaimQueue grants as the queue is now; the others
 * wait. Each holder's owner is its entry's data, its token comes from the entry's czxid, and its lease is reported as
 * zero (a hold lasts as long as its session). An entry deleted between the listing and the read is skipped.
 *
 * Forcing a release. Deletes the holders' entries (every holder's, or one owner's), each with the version read: the
 * next waiters are granted as after a release, and the former holders' clients find their entries gone at their next
 * renew.
 */
/** Inspect, list, force-release and available for read-write locks, semaphores and latches; see the source. */
final class ZkClaimAdmin {
    private final ZkOps ops;
    private final CuratorFramework curator;
    private final ZkLatches latches;

    ZkClaimAdmin(ZkOps ops, ZkLatches latches) {
        this.ops = ops;
        this.curator = ops.curator();
        this.latches = latches;
    }

    /** A holder's entry as read now. */
    private record Held(String path, String owner, boolean exclusive, int permits, long czxid, int version) {}

    /** The claims of a name as read now: its kind, its holders, the number of waiters. */
    private record Snapshot(Claim.Kind kind, List<Held> holders, int waiters) {
        LockInfo info(String name) {
            List<LockInfo.Holder> out = new ArrayList<>(holders.size());
            for (Held h : holders) {
                out.add(new LockInfo.Holder(
                        h.owner(), h.exclusive(), h.permits(), Duration.ZERO, ZooKeeperLockStore.tokenOf(h.czxid())));
            }
            LockInfo.Kind k = kind == Claim.Kind.SEMAPHORE ? LockInfo.Kind.SEMAPHORE : LockInfo.Kind.READ_WRITE_LOCK;
            return LockInfo.ofHolders(name, k, out, waiters);
        }
    }

    private @Nullable Snapshot snapshot(String namePath) throws Exception {
        List<ZkClaimQueue.Entry> queue = ZkClaimQueue.queue(ops.childNames(namePath));
        if (queue.isEmpty()) {
            return null;
        }
        List<Held> holders = new ArrayList<>();
        int waiters = 0;
        for (ZkClaimQueue.Entry e : queue) {
            if (!ZkClaimQueue.holds(queue, e)) {
                waiters++;
                continue;
            }
            String path = ZKPaths.makePath(namePath, e.node());
            Stat stat = new Stat();
            try {
                byte[] data = curator.getData().storingStatIn(stat).forPath(path);
                holders.add(new Held(
                        path,
                        new String(data, StandardCharsets.UTF_8),
                        e.mode() == Mode.EXCLUSIVE,
                        e.kind() == Claim.Kind.SEMAPHORE ? e.permits() : 1,
                        stat.getCzxid(),
                        stat.getVersion()));
            } catch (KeeperException.NoNodeException gone) {
                // released meanwhile
            }
        }
        return new Snapshot(queue.get(0).kind(), holders, waiters);
    }

    Optional<LockInfo> inspect(LockKey key) {
        return ZkOps.call("inspect", () -> {
            Snapshot s = snapshot(ops.syncPath(key));
            if (s != null) {
                return Optional.of(s.info(key.name()));
            }
            return latches.inspect(key);
        });
    }

    List<LockInfo> list(String prefix, int limit) {
        return ZkOps.call("list", () -> {
            TreeMap<String, String> byName = new TreeMap<>();
            for (String node : ops.childNames(ops.syncRoot())) {
                if (!ZkNames.isLockNode(node)) {
                    continue;
                }
                String path = ZKPaths.makePath(ops.syncRoot(), node);
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
            for (String name : byName.keySet()) {
                if (out.size() >= limit) {
                    break;
                }
                inspect(new LockKey(name)).ifPresent(out::add);
            }
            return out;
        });
    }

    /** Ends every hold of the name (of {@code owner} only when given). */
    Optional<LockInfo> forceRelease(LockKey key, @Nullable OwnerId owner) {
        return ZkOps.call("forceRelease", () -> {
            Snapshot s = snapshot(ops.syncPath(key));
            if (s == null) {
                return Optional.<LockInfo>empty();
            }
            boolean any = false;
            for (Held h : s.holders()) {
                if (owner != null && !h.owner().equals(owner.value())) {
                    continue;
                }
                try {
                    curator.delete().withVersion(h.version()).forPath(h.path());
                    any = true;
                } catch (KeeperException.NoNodeException | KeeperException.BadVersionException e) {
                    // released meanwhile
                }
            }
            return any ? Optional.of(s.info(key.name())) : Optional.<LockInfo>empty();
        });
    }

    /** How many of the name's permits no hold has now. */
    int available(LockKey key, Claim.Kind kind, int size) {
        return ZkOps.call("available", () -> {
            List<String> children = ops.childNames(ops.syncPath(key));
            List<ZkClaimQueue.Entry> queue = ZkClaimQueue.queue(children);
            ZkClaimQueue.checkKind(key.name(), queue, children.contains(ZkClaimQueue.LATCH_NODE), kind, size);
            long used = 0;
            for (ZkClaimQueue.Entry e : queue) {
                if (ZkClaimQueue.holds(queue, e)) {
                    if (e.mode() == Mode.EXCLUSIVE) {
                        return 0;
                    }
                    used += e.kind() == Claim.Kind.SEMAPHORE ? e.permits() : 1;
                }
            }
            return (int) Math.max(0, size - used);
        });
    }
}
