package io.distlock.zookeeper;

import io.distlock.spi.Subscription;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Role. The subscriptions of the engine's waiters on read-write lock and semaphore names: one Watch per name node and
 * client, shared by the client's waiters of that name. A Watch holds one-shot exists watches on the entries its
 * waiters wait for (ZkClaimQueue's verdict names them), never on the children list, so a new entry wakes nobody and a
 * deletion wakes only the clients that wait on that entry.
 *
 * Registration. A waiting attempt hands its entries to watchAll after it read the queue; each entry not watched yet
 * gets an exists watch, sent pipelined (asynchronous calls, then one wait for all answers). An entry already gone
 * answers null: the queue changed after the read, and the attempt reads it again (watchAll returns false). So a
 * deletion after the read cannot be missed: it either fires a watch or is seen by the re-read.
 *
 * Events. A deletion (or any other event on a watched entry, which ends the one-shot watch) forgets the entry and wakes
 * the subscriber; the engine's waiters try again, and their attempts register what they wait for next. Connection
 * events reach every watcher: the watches are forgotten on any state but SyncConnected (ZooKeeper sets them again
 * after a reconnect of the same session, but not after a new one), and the subscriber is woken when connected again,
 * since a change made meanwhile may have gone unseen.
 */
/** The waiters' watches on read-write lock and semaphore entries; see the overview comment in the source. */
final class ZkClaimWatches {
    private static final Logger log = LoggerFactory.getLogger(ZkClaimWatches.class);
    private static final long REGISTER_TIMEOUT_MILLIS = 30_000;

    private final CuratorFramework curator;
    private final ConcurrentHashMap<String, Watch> byPath = new ConcurrentHashMap<>();

    ZkClaimWatches(ZkOps ops) {
        this.curator = ops.curator();
    }

    /** Subscribes to the name node at {@code namePath}; attempts then register what they wait for here. */
    Subscription subscribe(String namePath, Runnable wakeUp) {
        Watch w = new Watch(namePath, wakeUp);
        byPath.put(namePath, w);
        return w;
    }

    /** The subscription on the name node at {@code namePath}, or null when no local waiter has one. */
    @Nullable
    Watch get(String namePath) {
        return byPath.get(namePath);
    }

    void closeAll() {
        for (Watch w : List.copyOf(byPath.values())) {
            w.close();
        }
    }

    /** The watches of one name node for this client's waiters. */
    final class Watch implements Subscription, Watcher {
        final String path;
        private final Runnable wakeUp;
        private final Set<String> watched = ConcurrentHashMap.newKeySet();
        private volatile boolean open = true;

        Watch(String path, Runnable wakeUp) {
            this.path = path;
            this.wakeUp = wakeUp;
        }

        /**
         * Watches the entries {@code nodes} of the name node; false if one of them is gone already (read the queue
         * again).
         */
        boolean watchAll(List<String> nodes) throws Exception {
            List<String> fresh = new ArrayList<>(nodes.size());
            for (String node : nodes) {
                String p = ZKPaths.makePath(path, node);
                if (watched.add(p)) {
                    fresh.add(p);
                }
            }
            if (fresh.isEmpty()) {
                return true;
            }
            ZooKeeper zk = curator.getZookeeperClient().getZooKeeper();
            String namespace = curator.getNamespace();
            CountDownLatch answered = new CountDownLatch(fresh.size());
            AtomicBoolean allThere = new AtomicBoolean(true);
            AtomicReference<KeeperException> failure = new AtomicReference<>();
            for (String p : fresh) {
                zk.exists(
                        ZKPaths.fixForNamespace(namespace, p),
                        this,
                        (rc, fullPath, ctx, stat) -> {
                            if (rc == KeeperException.Code.NONODE.intValue()) {
                                watched.remove(p);
                                allThere.set(false);
                            } else if (rc != KeeperException.Code.OK.intValue()) {
                                watched.remove(p);
                                failure.set(KeeperException.create(KeeperException.Code.get(rc), p));
                            }
                            answered.countDown();
                        },
                        null);
            }
            if (!answered.await(REGISTER_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)) {
                watched.removeAll(fresh);
                throw new KeeperException.OperationTimeoutException();
            }
            KeeperException e = failure.get();
            if (e != null) {
                throw e;
            }
            return allThere.get();
        }

        @Override
        public void process(WatchedEvent event) {
            if (event.getType() == Event.EventType.None) {
                if (event.getState() == Event.KeeperState.SyncConnected) {
                    wake(); // changes while disconnected may have gone unseen
                } else {
                    watched.clear(); // a new session has none of them; the next attempts register again
                }
                return;
            }
            String p = event.getPath();
            if (p != null && watched.remove(p)) {
                wake();
            }
        }

        private void wake() {
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
            byPath.remove(path, this);
            for (String p : List.copyOf(watched)) {
                try {
                    curator.watchers()
                            .remove(this)
                            .ofType(WatcherType.Any)
                            .quietly()
                            .inBackground()
                            .forPath(p);
                } catch (Exception e) {
                    log.debug("distlock: could not remove the watch on {}", p, e);
                }
            }
            watched.clear();
        }
    }
}
