package io.distlock.bench;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * The yardstick for issue 22's targets: a lock and a read-write lock on the raw ZooKeeper handle
 * (org.apache.zookeeper.ZooKeeper, no Curator), doing only what mutual exclusion needs, so that a target this code
 * misses is out of reach for any queue lock on ZooKeeper that keeps those steps.
 *
 * A name is a persistent directory node (made once, before the timed part). To acquire, a thread creates an
 * ephemeral-sequential entry in it ("n-" for the lock, "r-" / "w-" for the read-write lock's modes) and reads the
 * children once. The entry that blocks it is, for the lock and a writer, the nearest earlier entry, for a reader the
 * nearest earlier "w-" entry; with none, it holds. Otherwise it sets a watch on that one entry (getData: one read,
 * like exists, but it leaves no watch behind when the entry is already gone) and waits for the watch, so no other
 * entry's change reaches it (no herd); then it reads the children again and decides again (the ZooKeeper
 * documentation's lock recipe). Releasing deletes the entry. Per contended acquire+release that is a create, two
 * reads of the children, the watch's read and a delete: 5 requests, 2 writes.
 *
 * The "no re-read" variant of the lock skips the second read: when the entry ahead is deleted, it holds. That is safe
 * only while no entry leaves the queue except by its holder's release (true in the benchmark: no timeouts, no
 * interrupts, no session loss); an entry ahead that left by a waiter's timeout or an expired session would let two
 * hold at once. It shows what the shortest hand-off chain costs: 4 requests, 2 writes.
 *
 * What this leaves out, against what distlock's lock offers: re-entry (a second lock() by the holder thread waits on
 * itself forever), timeouts and tryLock, interrupts (lock() waits uninterruptibly), fencing tokens, leases, any report
 * of session trouble (a SUSPENDED or expired session is not noticed; the holder goes on believing it holds), cleanup
 * of the entry after a failed create whose reply was lost (no protected mode: the entry stays until the session ends),
 * removal of empty name nodes, and retries on connection loss (an error ends the operation).
 */
/** Minimal ZooKeeper queue locks on the raw client: the reference for issue 22's targets. */
final class ZooKeeperReference {
    static final String LOCK = "reference lock (raw ZooKeeper)";
    static final String LOCK_TRUSTING = "reference lock, no re-read on wake (raw ZooKeeper)";
    static final String READ_WRITE = "reference read-write lock (raw ZooKeeper)";

    private static final byte[] EMPTY = new byte[0];
    private static final int SEQUENCE_DIGITS = 10;

    private ZooKeeperReference() {}

    /**
     * The lock over {@code clients} ZooKeeper handles: {@code lock("<i>:<name>")} is the lock {@code name} through
     * handle {@code i} (modulo {@code clients}), one per such name; {@code reread} false for the "no re-read" variant.
     */
    static LockProvider.Factory locks(String connect, String root, int clients, boolean reread) {
        return LockProvider.factory(reread ? LOCK : LOCK_TRUSTING, () -> {
            List<ZooKeeper> zks = open(connect, clients);
            Map<String, Lock> locks = new ConcurrentHashMap<>();
            String base = root + (reread ? "/ref" : "/ref-trusting");
            return RedisBench.provider(
                    name -> locks.computeIfAbsent(name, n -> {
                        int colon = n.indexOf(':');
                        int i = Integer.parseInt(n.substring(0, colon)) % clients;
                        Queue q = new Queue(zks.get(i), base + "/" + n.substring(colon + 1));
                        return new QueueLock(q, Kind.LOCK, reread);
                    }),
                    () -> closeAll(zks));
        });
    }

    /**
     * The read-write lock over one ZooKeeper handle: {@code lock("r:<name>")} is the read lock of {@code name},
     * {@code lock("w:<name>")} its write lock.
     */
    static LockProvider.Factory readWrite(String connect, String root) {
        return LockProvider.factory(READ_WRITE, () -> {
            List<ZooKeeper> zks = open(connect, 1);
            Map<String, Queue> queues = new ConcurrentHashMap<>();
            Map<String, Lock> locks = new ConcurrentHashMap<>();
            return RedisBench.provider(
                    name -> locks.computeIfAbsent(name, n -> {
                        String key = n.substring(n.indexOf(':') + 1);
                        Queue q = queues.computeIfAbsent(key, k -> new Queue(zks.get(0), root + "/ref-rw/" + k));
                        return new QueueLock(q, n.startsWith("r:") ? Kind.READ : Kind.WRITE, true);
                    }),
                    () -> closeAll(zks));
        });
    }

    private static List<ZooKeeper> open(String connect, int n) {
        List<ZooKeeper> zks = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                CountDownLatch connected = new CountDownLatch(1);
                ZooKeeper zk = new ZooKeeper(connect, 30_000, e -> {
                    if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                        connected.countDown();
                    }
                });
                zks.add(zk);
                if (!connected.await(10, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("cannot connect to ZooKeeper at " + connect);
                }
            }
            return zks;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closeAll(zks);
            throw new IllegalStateException(e);
        } catch (java.io.IOException | RuntimeException e) {
            closeAll(zks);
            throw new IllegalStateException("cannot connect to ZooKeeper at " + connect + ": " + e, e);
        }
    }

    private static void closeAll(List<ZooKeeper> zks) {
        for (ZooKeeper zk : zks) {
            try {
                zk.close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The entry prefix, and which earlier entry blocks an entry of this kind. */
    enum Kind {
        LOCK("n-"),
        READ("r-"),
        WRITE("w-");

        final String prefix;

        Kind(String prefix) {
            this.prefix = prefix;
        }
    }

    /** One name's directory node and its queue of entries. */
    static final class Queue {
        private final ZooKeeper zk;
        private final String dir;

        Queue(ZooKeeper zk, String dir) {
            this.zk = zk;
            this.dir = dir;
            makeDirs(zk, dir);
        }

        /** Creates an entry of {@code kind} and returns its path once it holds. */
        String acquire(Kind kind, boolean reread) throws KeeperException, InterruptedException {
            String path = zk.create(
                    dir + "/" + kind.prefix, EMPTY, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL_SEQUENTIAL);
            String mine = path.substring(dir.length() + 1);
            while (true) {
                String ahead = blocker(zk.getChildren(dir, false), mine, kind);
                if (ahead == null) {
                    return path;
                }
                CountDownLatch fired = new CountDownLatch(1);
                AtomicReference<Watcher.Event.@Nullable EventType> type = new AtomicReference<>();
                Watcher watcher = (WatchedEvent e) -> {
                    type.set(e.getType());
                    fired.countDown();
                };
                try {
                    // getData rather than exists: on an entry already gone it leaves no watch behind
                    var unused = zk.getData(dir + "/" + ahead, watcher, null);
                } catch (KeeperException.NoNodeException e) {
                    continue;
                }
                fired.await();
                if (!reread && type.get() == Watcher.Event.EventType.NodeDeleted) {
                    return path;
                }
            }
        }

        void release(String path) throws KeeperException, InterruptedException {
            zk.delete(path, -1);
        }

        /** The entry {@code mine} waits for, or null when it holds. */
        static @Nullable String blocker(List<String> children, String mine, Kind kind) {
            List<String> sorted = new ArrayList<>(children);
            sorted.sort(Comparator.comparing(ZooKeeperReference::sequence));
            int at = sorted.indexOf(mine);
            if (at < 0) {
                throw new IllegalStateException("the entry " + mine + " is gone (session expired?)");
            }
            for (int i = at - 1; i >= 0; i--) {
                if (kind != Kind.READ || sorted.get(i).startsWith(Kind.WRITE.prefix)) {
                    return sorted.get(i);
                }
            }
            return null;
        }
    }

    private static String sequence(String entry) {
        return entry.substring(entry.length() - SEQUENCE_DIGITS);
    }

    private static void makeDirs(ZooKeeper zk, String dir) {
        int from = 1;
        while (from > 0) {
            int slash = dir.indexOf('/', from);
            String path = slash < 0 ? dir : dir.substring(0, slash);
            try {
                zk.create(path, EMPTY, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            } catch (KeeperException.NodeExistsException e) {
                // made by another client or an earlier name
            } catch (KeeperException e) {
                throw new IllegalStateException("cannot create " + path + ": " + e, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            from = slash < 0 ? -1 : slash + 1;
        }
    }

    /** lock() and unlock() of one kind on one queue; the held entry is kept per thread. */
    static final class QueueLock extends LockAndUnlockOnly {
        private final Queue queue;
        private final Kind kind;
        private final boolean reread;
        private final ThreadLocal<@Nullable String> held = new ThreadLocal<>();

        QueueLock(Queue queue, Kind kind, boolean reread) {
            this.queue = queue;
            this.kind = kind;
            this.reread = reread;
        }

        @Override
        public void lock() {
            try {
                held.set(queue.acquire(kind, reread));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            } catch (KeeperException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public void unlock() {
            String path = held.get();
            if (path == null) {
                throw new IllegalMonitorStateException("not held by this thread");
            }
            held.remove();
            try {
                queue.release(path);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            } catch (KeeperException e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
