package io.distlock.zookeeper;

import io.distlock.spi.Subscription;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.Watcher.WatcherType;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Role. The subscriptions of the engine's waiters, one Mirror per lock node that has any. A Mirror is a persistent
 * recursive watch on the lock node: it wakes the engine whenever an entry is deleted, and mirrors the queue so that a
 * woken waiter decides without a round trip.
 *
 * The mirror. A snapshot of the children is read asynchronously, so its answer comes through the ZooKeeper handle's
 * event thread in order with the watch events; then every creation and deletion is applied in order. The mirror is the
 * queue as of the last event seen, and "my entry is first" read from it is a fact, because an entry leaves the head
 * only by being deleted. The mirror cannot tell (heads answers null) before the snapshot, after connection trouble,
 * or while it does not yet show the caller's new entry: our write's answer can overtake its events on the way to the
 * event thread, so heads waits up to MIRROR_WAIT_NANOS for them before the caller reads the queue itself.
 *
 * Concurrency. A Mirror's queue is guarded by its ReentrantLock; the event thread applies events under it and signals
 * a Condition that callers of heads wait on. A generation counter, bumped whenever the mirror is dropped, keeps a
 * snapshot asked for earlier from being installed over a newer state.
 *
 * Existence hints. The acquire step's one-round-trip create (lock node and entry in one multi) fails, costing a
 * request and a transaction, whenever the lock node exists: on a contended name, almost always. A mirror that can tell
 * says whether it exists; with none (no local waiter yet: the first attempt of an acquire comes before it subscribes,
 * and its subscription's snapshot is often not in yet at the second), the acquirer goes by whether this client last
 * saw the lock node exist (noteExists after a create that failed on it; noteGone when a create under it found it
 * missing, or this client deleted it). A hint only picks which create to send: a wrong one costs one failed create,
 * after which the other is sent, and the queue decides as before either way.
 *
 * Wake-ups. Deleting an entry wakes the subscriber; deleting the lock node does not (it goes only when empty, after
 * its entries, whose deletions woke us), and neither does the deletion of an entry a hand-off of this client made
 * (marked handed off): the receiver holds, or the engine wakes its waiters itself. Persistent watches die with a
 * session, so after a reconnect watchAgain adds every watch again, asks for a new snapshot and wakes every
 * subscriber, since changes during the disconnection may have gone unseen. On any connection trouble forgetAll drops
 * every mirror and the hand-off marks (whose events may never come: one spurious wake-up at worst).
 */
/** The waiters' watches on lock nodes and the queue mirrors they keep; see the overview comment in the source. */
final class ZkQueueMirrors {
    private static final Logger log = LoggerFactory.getLogger(ZkQueueMirrors.class);

    /** The most lock nodes {@link #noteExists} remembers; past it, all are forgotten. */
    static final int MAX_EXISTENCE_HINTS = 1024;

    /** How long a caller waits for the event of its own new entry before it reads the queue itself. */
    static final long MIRROR_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private static final Comparator<ZkNames.Entry> QUEUE_ORDER =
            Comparator.comparingLong(ZkNames.Entry::sequence).thenComparing(ZkNames.Entry::node);

    private final CuratorFramework curator;
    private final Set<Mirror> subscriptions = ConcurrentHashMap.newKeySet();
    private final ConcurrentHashMap<String, Mirror> byPath = new ConcurrentHashMap<>();
    /** Entries a hand-off of this client is deleting: their deletion event wakes no local waiter. */
    private final Set<String> handedOff = ConcurrentHashMap.newKeySet();
    /**
     * Lock nodes this client last saw exist (a one-round-trip create failed because they did), whether or not a
     * waiter watches them: see Existence hints in the overview. Bounded by {@link #MAX_EXISTENCE_HINTS}.
     */
    private final Set<String> seenToExist = ConcurrentHashMap.newKeySet();

    ZkQueueMirrors(ZkOps ops) {
        this.curator = ops.curator();
    }

    /** Watches the lock node at {@code lockPath} and mirrors its queue until the subscription is closed. */
    Subscription subscribe(String lockPath, Runnable wakeUp) {
        Mirror sub = new Mirror(lockPath, wakeUp);
        subscriptions.add(sub);
        byPath.put(sub.path, sub);
        try {
            sub.register();
        } catch (KeeperException.ConnectionLossException
                | KeeperException.SessionExpiredException
                | KeeperException.OperationTimeoutException e) {
            // registered by watchAgain after the reconnect, which also wakes it: a change made meanwhile is not
            // missed, and the engine's re-check after subscribing meets the same connection trouble and handles it
            log.debug("distlock: watch on {} deferred until the reconnect", sub.path, e);
        } catch (Exception e) {
            subscriptions.remove(sub);
            byPath.remove(sub.path, sub);
            ZkOps.run("subscribe", () -> {
                throw e;
            });
        }
        return sub;
    }

    /** The mirror of the lock node at {@code lockPath}, or null when no local waiter watches it. */
    @Nullable
    Mirror get(String lockPath) {
        return byPath.get(lockPath);
    }

    /** The lock node at {@code lockPath} was seen to exist: see Existence hints in the overview. */
    void noteExists(String lockPath) {
        if (seenToExist.size() >= MAX_EXISTENCE_HINTS) {
            seenToExist.clear(); // hints only: forgetting them costs a failed create at most
        }
        seenToExist.add(lockPath);
    }

    /** The lock node at {@code lockPath} was found missing, or this client deleted it. */
    void noteGone(String lockPath) {
        seenToExist.remove(lockPath);
    }

    /**
     * Whether the lock node at {@code lockPath} is believed to exist: its mirror knows it does, or, with no mirror
     * that can tell, this client last saw it exist. A hint, not a fact: see Existence hints in the overview.
     */
    boolean believedToExist(String lockPath, @Nullable Mirror sub) {
        if (sub != null) {
            Boolean exists = sub.existence();
            if (exists != null) {
                return exists;
            }
        }
        return seenToExist.contains(lockPath);
    }

    /** Whether a local waiter watches the lock node at {@code lockPath}. */
    boolean watches(String lockPath) {
        return byPath.containsKey(lockPath);
    }

    /** The deletion of the entry at {@code entryPath}, which a hand-off makes, is to wake no local waiter. */
    void markHandedOff(String entryPath) {
        handedOff.add(entryPath);
    }

    /** Takes back {@link #markHandedOff}: the hand-off did not delete the entry. */
    void unmarkHandedOff(String entryPath) {
        handedOff.remove(entryPath);
    }

    /** Connection trouble: events may be lost from here on, so every mirror and hand-off mark is dropped. */
    void forgetAll() {
        handedOff.clear(); // their events may never come; one spurious wake-up at worst
        subscriptions.forEach(Mirror::invalidate);
    }

    /** After a reconnect: adds every watch again, with a new snapshot, and wakes every subscriber. */
    void watchAgain() {
        for (Mirror sub : List.copyOf(subscriptions)) {
            try {
                // persistent watches do not survive a new session (adding one twice is harmless), and events may
                // have been missed while disconnected: watch again and read a new snapshot
                sub.register();
            } catch (Exception e) {
                log.warn("distlock: could not watch {} again after a reconnect", sub.path, e);
            }
            sub.wake(); // changes while disconnected may have gone unseen
        }
    }

    void closeAll() {
        for (Mirror sub : List.copyOf(subscriptions)) {
            sub.close();
        }
    }

    /** One persistent recursive watch on a lock node and the mirror of its queue; see the overview. */
    final class Mirror implements Subscription, Watcher {
        final String path;
        private final Runnable wakeUp;
        private volatile boolean open = true;
        private final ReentrantLock mutex = new ReentrantLock();
        private final Condition changed = mutex.newCondition();
        /** The queue by sequence, or null while unknown; guarded by mutex. */
        private @Nullable TreeSet<ZkNames.Entry> queue;
        /** Whether the lock node exists, as of the mirror (meaningless while queue is null); guarded by mutex. */
        private boolean exists;
        /** Bumped whenever the mirror is dropped, so a snapshot asked for earlier is not installed; guarded by mutex. */
        private long generation;

        Mirror(String path, Runnable wakeUp) {
            this.path = path;
            this.wakeUp = wakeUp;
        }

        /** Adds the watch, then asks for a snapshot; the registration is in force when this returns. */
        void register() throws Exception {
            if (!open) {
                return;
            }
            curator.watchers()
                    .add()
                    .withMode(AddWatchMode.PERSISTENT_RECURSIVE)
                    .usingWatcher(this)
                    .forPath(path);
            requestSnapshot();
        }

        private void requestSnapshot() throws Exception {
            long asked;
            mutex.lock();
            try {
                queue = null;
                asked = ++generation;
            } finally {
                mutex.unlock();
            }
            // an asynchronous read is answered on the event thread, in order with the watch events
            curator.getZookeeperClient()
                    .getZooKeeper()
                    .getChildren(
                            ZKPaths.fixForNamespace(curator.getNamespace(), path),
                            false,
                            (rc, p, ctx, children) -> installSnapshot(asked, rc, children),
                            null);
        }

        private void installSnapshot(long asked, int rc, @Nullable List<String> children) {
            mutex.lock();
            try {
                if (asked != generation) {
                    return;
                }
                if (rc == KeeperException.Code.OK.intValue() && children != null) {
                    TreeSet<ZkNames.Entry> q = new TreeSet<>(QUEUE_ORDER);
                    for (String child : children) {
                        ZkNames.Entry e = ZkNames.entry(child);
                        if (e != null) {
                            q.add(e);
                        }
                    }
                    queue = q;
                    exists = true;
                } else if (rc == KeeperException.Code.NONODE.intValue()) {
                    queue = new TreeSet<>(QUEUE_ORDER);
                    exists = false;
                }
                changed.signalAll();
            } finally {
                mutex.unlock();
            }
            wake();
        }

        /** Forgets the mirror: events may be lost from here on. */
        void invalidate() {
            mutex.lock();
            try {
                queue = null;
                generation++;
            } finally {
                mutex.unlock();
            }
        }

        @Override
        public void process(WatchedEvent event) {
            Event.EventType type = event.getType();
            if (type == Event.EventType.None) {
                if (event.getState() != Event.KeeperState.SyncConnected) {
                    invalidate();
                }
                return; // the session watcher asks for a new snapshot after the reconnect
            }
            String eventPath = event.getPath();
            if (eventPath == null || !(type == Event.EventType.NodeCreated || type == Event.EventType.NodeDeleted)) {
                return;
            }
            boolean deleted = type == Event.EventType.NodeDeleted;
            // the lock node goes only when empty, after its entries, whose deletions woke us; and the entry a hand-off
            // deleted wakes nobody here: the receiver holds, or the engine wakes its waiters itself
            boolean wakes = deleted && !eventPath.equals(path) && !handedOff.remove(eventPath);
            mutex.lock();
            try {
                TreeSet<ZkNames.Entry> q = queue;
                if (q != null) {
                    if (eventPath.equals(path)) {
                        exists = !deleted;
                        if (deleted) {
                            q.clear();
                        }
                    } else if (ZKPaths.getPathAndNode(eventPath).getPath().equals(path)) {
                        exists = true;
                        ZkNames.Entry e = ZkNames.entry(ZKPaths.getNodeFromPath(eventPath));
                        if (e != null) {
                            if (deleted) {
                                q.remove(e);
                            } else {
                                q.add(e);
                            }
                        }
                    }
                    changed.signalAll();
                }
            } finally {
                mutex.unlock();
            }
            if (wakes) {
                wake();
            }
        }

        /**
         * Whether {@code node} heads the queue (TRUE), waits behind another owner's entry (FALSE), or the mirror
         * cannot tell (null: unknown, {@code node} not seen yet or {@code gone}, an entry this client deleted, still
         * seen within {@code waitNanos}, or a duplicate entry of the owner ahead of it).
         */
        @Nullable
        Boolean heads(String node, @Nullable String gone, String tag, long waitNanos) throws InterruptedException {
            ZkNames.Entry goneEntry = gone == null ? null : ZkNames.entry(gone);
            mutex.lock();
            try {
                long left = waitNanos;
                for (; ; ) {
                    TreeSet<ZkNames.Entry> q = queue;
                    if (q == null) {
                        return null;
                    }
                    if (goneEntry == null || !q.contains(goneEntry)) {
                        for (ZkNames.Entry e : q) {
                            if (e.node().equals(node)) {
                                return e.equals(q.first());
                            }
                            if (e.ownerTag().equals(tag)) {
                                return null; // an earlier entry of ours: let the round-trip path sort it out
                            }
                        }
                    }
                    if (left <= 0) {
                        return null;
                    }
                    // our write's answer can overtake its events on the way to the event thread
                    left = changed.awaitNanos(left);
                }
            } finally {
                mutex.unlock();
            }
        }

        /** Whether the mirror knows of an entry other than {@code node}; false when it cannot tell. */
        boolean knownOthers(String node) {
            mutex.lock();
            try {
                TreeSet<ZkNames.Entry> q = queue;
                if (q == null) {
                    return false;
                }
                for (ZkNames.Entry e : q) {
                    if (!e.node().equals(node)) {
                        return true;
                    }
                }
                return false;
            } finally {
                mutex.unlock();
            }
        }

        /** Whether the lock node exists as of the mirror, or null while the mirror cannot tell. */
        @Nullable
        Boolean existence() {
            mutex.lock();
            try {
                return queue == null ? null : exists;
            } finally {
                mutex.unlock();
            }
        }

        void wake() {
            if (open) {
                try {
                    wakeUp.run();
                } catch (RuntimeException e) {
                    log.warn("distlock: wake-up for {} failed", path, e);
                }
            }
        }

        @Override
        public void close() {
            if (!open) {
                return;
            }
            open = false;
            invalidate();
            subscriptions.remove(this);
            byPath.remove(path, this);
            try {
                curator.watchers()
                        .remove(this)
                        .ofType(WatcherType.Any)
                        .quietly()
                        .inBackground()
                        .forPath(path);
            } catch (Exception e) {
                log.debug("distlock: could not remove the watch on {}", path, e);
            }
        }
    }
}
