package io.distlock.zookeeper;

import io.distlock.spi.Mode;
import io.distlock.spi.OwnerId;
import io.distlock.spi.Subscription;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Predicate;
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
 * deletion reaches only the clients that wait on that entry. It is the engine's WakesOwners subscription: a wake-up
 * names the owners it is for, so inside the client too a deletion wakes only the waiters it may let pass.
 *
 * Waits. A waiting attempt hands its verdict to await after it read the queue: the owner's Wait records the blockers
 * with their weights and the shortfall (replacing the owner's earlier Wait), and each blocker not watched yet gets an
 * exists watch, sent pipelined (asynchronous calls, then one wait for all answers). A blocker already watched gets no
 * second exists: its watch was set after an earlier read and has not fired (firing takes the entry out of watched
 * under the same lock), so its deletion is still to be heard.
 *
 * Re-check. The engine tries once more right after an entry's first busy answer. When that answer registered a Wait
 * here (the subscription was there before it), the Wait is still in waits and the connection epoch is the same,
 * nothing that could let the owner pass has happened since: a deletion that ends a Wait, any other event on its
 * blockers and any connection trouble all take it out of waits before they wake anyone. So stillWaits answers that
 * re-check, once per Wait, and the attempt reads nothing; a later attempt (after a wake-up, or the busy answer's
 * retry time) reads the queue.
 *
 * Deletions. A deleted blocker is taken out of every Wait on it, each Wait's shortfall falls by its weight, and the
 * owners whose shortfall reaches 0 are woken (and their Waits dropped: the woken attempt reads the queue and waits
 * anew). An exists answer of "no node" is a deletion too (the entry was in the queue when each Wait on it read it), so
 * a Wait that counted on another attempt's watch of it still hears of it; the attempt whose exists found it gone reads
 * the queue again (await returns false). So a deletion after a read cannot be missed: every Wait holds each of its
 * blockers either under a watch still to fire or until an answer says it is gone. Any other event on a watched entry
 * (it ends the one-shot watch), and an exists that failed or got no answer, wakes every owner waiting on that entry.
 *
 * Connection. Connection events reach every watcher: on any state but SyncConnected the watches and Waits are
 * forgotten (ZooKeeper sets the watches again after a reconnect of the same session, but not after a new one), and
 * every owner is woken when connected again, since a change made meanwhile may have gone unseen.
 *
 * Concurrency. A Watch's watched entries and Waits are guarded by its lock, held only for map updates: never across a
 * request or a wake-up, which runs on the ZooKeeper event thread (or the caller's, for a gone entry) after the lock is
 * released.
 */
/** The waiters' watches on read-write lock and semaphore entries; see the overview comment in the source. */
final class ZkClaimWatches {
    private static final Logger log = LoggerFactory.getLogger(ZkClaimWatches.class);
    private static final long REGISTER_TIMEOUT_MILLIS = 30_000;
    private static final Predicate<OwnerId> EVERY_OWNER = owner -> true;

    private final CuratorFramework curator;
    private final ConcurrentHashMap<String, Watch> byPath = new ConcurrentHashMap<>();

    ZkClaimWatches(ZkOps ops) {
        this.curator = ops.curator();
    }

    /** Subscribes to the name node at {@code namePath}; attempts then register what they wait for here. */
    Subscription subscribe(String namePath, Consumer<Predicate<OwnerId>> wakeUp) {
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

    /** One owner's wait in one mode: the blockers it waits on, with their weights, and what it still lacks. */
    private static final class Wait {
        final WaitKey key;
        final Map<String, Integer> weights;
        long shortfall;
        /** The connection epoch (ZkSession) of the attempt that registered the wait. */
        final long epoch;
        /** Registered by the entry's first attempt, and the re-check after it has not come yet (stillWaits). */
        boolean recheckDue;

        Wait(WaitKey key, Map<String, Integer> weights, long shortfall, long epoch, boolean recheckDue) {
            this.key = key;
            this.weights = weights;
            this.shortfall = shortfall;
            this.epoch = epoch;
            this.recheckDue = recheckDue;
        }
    }

    private record WaitKey(OwnerId owner, Mode mode) {}

    /** The watches of one name node for this client's waiters. */
    final class Watch implements Subscription, Watcher {
        final String path;
        private final Consumer<Predicate<OwnerId>> wakeUp;
        private final ReentrantLock lock = new ReentrantLock();
        /** Entry paths under an exists watch of this Watcher that has not fired. */
        private final Set<String> watched = new HashSet<>();

        private final Map<WaitKey, Wait> waits = new HashMap<>();
        private final Map<String, Set<Wait>> waitsOn = new HashMap<>();
        private volatile boolean open = true;

        Watch(String path, Consumer<Predicate<OwnerId>> wakeUp) {
            this.path = path;
            this.wakeUp = wakeUp;
        }

        /**
         * Records that {@code owner}'s {@code mode} entry waits as {@code verdict} says, and watches its blockers;
         * false if one of them is gone already (read the queue again). {@code firstAttempt}: the attempt created the
         * entry, so the engine's re-check comes next ({@link #stillWaits}); {@code epoch} is the connection epoch the
         * attempt started in.
         */
        boolean await(OwnerId owner, Mode mode, ZkClaimQueue.Verdict verdict, boolean firstAttempt, long epoch)
                throws Exception {
            WaitKey key = new WaitKey(owner, mode);
            Map<String, Integer> weights = new HashMap<>();
            for (ZkClaimQueue.Entry e : verdict.blockers()) {
                weights.merge(ZKPaths.makePath(path, e.node()), e.permits(), Integer::sum);
            }
            Wait wait = new Wait(key, weights, verdict.shortfall(), epoch, firstAttempt);
            List<String> fresh = new ArrayList<>(weights.size());
            lock.lock();
            try {
                drop(waits.remove(key));
                waits.put(key, wait);
                for (String p : weights.keySet()) {
                    waitsOn.computeIfAbsent(p, k -> new HashSet<>()).add(wait);
                    if (watched.add(p)) {
                        fresh.add(p);
                    }
                }
            } finally {
                lock.unlock();
            }
            if (fresh.isEmpty()) {
                return true;
            }
            ZooKeeper zk = curator.getZookeeperClient().getZooKeeper();
            String namespace = curator.getNamespace();
            CountDownLatch answered = new CountDownLatch(fresh.size());
            Set<String> gone = ConcurrentHashMap.newKeySet();
            Set<String> failed = ConcurrentHashMap.newKeySet();
            AtomicReference<KeeperException> failure = new AtomicReference<>();
            for (String p : fresh) {
                zk.exists(
                        ZKPaths.fixForNamespace(namespace, p),
                        this,
                        (rc, fullPath, ctx, stat) -> {
                            if (rc == KeeperException.Code.NONODE.intValue()) {
                                gone.add(p);
                            } else if (rc != KeeperException.Code.OK.intValue()) {
                                failed.add(p);
                                failure.set(KeeperException.create(KeeperException.Code.get(rc), p));
                            }
                            answered.countDown();
                        },
                        null);
            }
            if (!answered.await(REGISTER_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)) {
                forget(owner, mode);
                for (String p : fresh) {
                    unwatched(p);
                }
                throw new KeeperException.OperationTimeoutException();
            }
            if (!gone.isEmpty() || !failed.isEmpty()) {
                forget(owner, mode); // this attempt reads the queue again (or fails) and waits anew
            }
            for (String p : gone) {
                deleted(p);
            }
            for (String p : failed) {
                unwatched(p);
            }
            KeeperException e = failure.get();
            if (e != null) {
                throw e;
            }
            return gone.isEmpty();
        }

        /**
         * Whether the re-check that follows an entry's first busy answer may answer busy again without reading: true,
         * once, while the wait that answer registered is whole (no deletion has ended it, no other event or failure
         * has dropped it, and the connection, still in {@code epoch}, has had no trouble since). The wait was
         * registered on this subscription, which was there before it, so a deletion that lets the owner pass from
         * here on wakes it; one that came before would have ended the wait.
         */
        boolean stillWaits(OwnerId owner, Mode mode, long epoch) {
            lock.lock();
            try {
                Wait wait = waits.get(new WaitKey(owner, mode));
                if (wait == null || !wait.recheckDue) {
                    return false;
                }
                wait.recheckDue = false;
                return wait.epoch == epoch && wait.shortfall > 0;
            } finally {
                lock.unlock();
            }
        }

        /** The owner's {@code mode} entry no longer waits here (granted, or given up). */
        void forget(OwnerId owner, Mode mode) {
            lock.lock();
            try {
                drop(waits.remove(new WaitKey(owner, mode)));
            } finally {
                lock.unlock();
            }
        }

        /** Takes {@code wait} off its blockers; the caller holds the lock and has removed it from waits. */
        private void drop(@Nullable Wait wait) {
            if (wait == null) {
                return;
            }
            for (String p : wait.weights.keySet()) {
                Set<Wait> on = waitsOn.get(p);
                if (on != null && on.remove(wait) && on.isEmpty()) {
                    waitsOn.remove(p);
                }
            }
        }

        /** The entry at {@code p} is gone: wakes the owners whose shortfall that ends. */
        private void deleted(String p) {
            Set<OwnerId> pass = new HashSet<>();
            lock.lock();
            try {
                watched.remove(p);
                Set<Wait> on = waitsOn.remove(p);
                if (on == null) {
                    return;
                }
                for (Wait wait : on) {
                    Integer weight = wait.weights.remove(p);
                    wait.shortfall -= weight == null ? 0 : weight;
                    if (wait.shortfall <= 0 && waits.get(wait.key) == wait) {
                        waits.remove(wait.key);
                        drop(wait);
                        pass.add(wait.key.owner());
                    }
                }
            } finally {
                lock.unlock();
            }
            if (!pass.isEmpty()) {
                wake(pass::contains);
            }
        }

        /**
         * No watch on {@code p} is left to fire (something other than a deletion ended it, or it could not be set):
         * wakes every owner waiting on it, whose attempts read the queue again.
         */
        private void unwatched(String p) {
            Set<OwnerId> woken = new HashSet<>();
            lock.lock();
            try {
                watched.remove(p);
                Set<Wait> on = waitsOn.remove(p);
                if (on == null) {
                    return;
                }
                for (Wait wait : List.copyOf(on)) {
                    if (waits.remove(wait.key, wait)) {
                        drop(wait);
                    }
                    woken.add(wait.key.owner());
                }
            } finally {
                lock.unlock();
            }
            wake(woken::contains);
        }

        @Override
        public void process(WatchedEvent event) {
            if (event.getType() == Event.EventType.None) {
                if (event.getState() == Event.KeeperState.SyncConnected) {
                    wake(EVERY_OWNER); // changes while disconnected may have gone unseen
                } else {
                    lock.lock();
                    try {
                        watched.clear(); // a new session has none of them; the next attempts register again
                        waits.clear();
                        waitsOn.clear();
                    } finally {
                        lock.unlock();
                    }
                }
                return;
            }
            String p = event.getPath();
            if (p == null) {
                return;
            }
            String own = ZKPaths.makePath(path, ZKPaths.getNodeFromPath(p)); // the path without the namespace
            if (event.getType() == Event.EventType.NodeDeleted) {
                deleted(own);
            } else {
                unwatched(own);
            }
        }

        private void wake(Predicate<OwnerId> owners) {
            if (open) {
                try {
                    wakeUp.accept(owners);
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
            List<String> paths;
            lock.lock();
            try {
                paths = List.copyOf(watched);
                watched.clear();
                waits.clear();
                waitsOn.clear();
            } finally {
                lock.unlock();
            }
            for (String p : paths) {
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
        }
    }
}
