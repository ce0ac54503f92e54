package io.distlock.etcd;

import static io.distlock.etcd.EtcdRequests.bytes;

import io.distlock.spi.LockKey;
import io.distlock.spi.Subscription;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import java.util.HashMap;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * One watch per name
 *   The engine keeps at most one subscription per name per client; each is one etcd watch on the name's prefix. It
 *   starts just after a read of the prefix, from the revision after that read, so every change after the read is
 *   replayed however late the stream is set up: a release between a waiter's failed attempt and its subscription is
 *   not missed. Delete events (release, expiry, forced release, abandon) wake the waiters; puts do not.
 *
 * The queue mirror
 *   The same events keep a mirror of the name's queue: the create revisions of the keys under the prefix. A queued
 *   waiter that finds an older key in the mirror (showsOlderThan) knows it is not the head without a round trip, and
 *   the delete of that key will wake it, since a delete is applied to the mirror before the wake-up runs.
 *
 * Broken watches
 *   A watch that jetcd reports failed or closed stops being trusted at once (the mirror answers nothing), wakes the
 *   waiters so they re-check in etcd, and is restarted half a second later from a fresh read. Callbacks of a watcher
 *   replaced by a restart are told apart by a generation number and ignored.
 */
/** The etcd watches of one client: wake-ups for waiters and a mirror of each watched name's queue. */
final class EtcdWatches {
    private static final Logger log = LoggerFactory.getLogger(EtcdWatches.class);
    private static final GetOption QUEUE =
            GetOption.builder().isPrefix(true).withKeysOnly(true).build();

    private final EtcdRequests requests;
    private final Watch watch;
    private final EtcdKeys keys;
    private final ScheduledThreadPoolExecutor scheduler; // restarts broken watches
    private final Set<QueueWatch> subscriptions = ConcurrentHashMap.newKeySet();
    private final ConcurrentHashMap<String, QueueWatch> mirrors = new ConcurrentHashMap<>();
    private volatile boolean closed;

    EtcdWatches(EtcdRequests requests, Watch watch, EtcdKeys keys) {
        this.requests = requests;
        this.watch = watch;
        this.keys = keys;
        this.scheduler = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "distlock-etcd-watch");
            t.setDaemon(true);
            return t;
        });
        scheduler.setRemoveOnCancelPolicy(true);
    }

    /** Watches the name's queue from now on; blocks for one read. */
    Subscription subscribe(LockKey key, Runnable wakeUp) {
        QueueWatch sub = new QueueWatch(key.name(), bytes(keys.namePrefix(key.name())), wakeUp);
        subscriptions.add(sub);
        try {
            sub.start();
        } catch (RuntimeException e) {
            sub.close();
            throw e;
        }
        return sub;
    }

    /**
     * Whether a healthy watch of the name shows the key with create revision {@code revision} and an older one: the
     * owner of that key is not the head, and will be woken when the older key goes.
     */
    boolean showsOlderThan(String name, long revision) {
        QueueWatch mirror = mirrors.get(name);
        return mirror != null && mirror.hasOlderThan(revision);
    }

    void close() {
        closed = true;
        scheduler.shutdownNow();
        for (QueueWatch s : List.copyOf(subscriptions)) {
            s.close();
        }
    }

    /** One name's watch and its mirror of the queue. */
    private final class QueueWatch implements Subscription {
        private final String name;
        private final ByteSequence prefix;
        private final Runnable wakeUp;
        private final ReentrantLock lock = new ReentrantLock();
        private final TreeMap<Long, ByteSequence> byRevision = new TreeMap<>();
        private final HashMap<ByteSequence, Long> byKey = new HashMap<>();
        private boolean healthy;
        private long generation; // the watcher whose callbacks count; older ones were closed by us
        private Watch.@Nullable Watcher watcher;
        private boolean closedSub;

        QueueWatch(String name, ByteSequence prefix, Runnable wakeUp) {
            this.name = name;
            this.prefix = prefix;
            this.wakeUp = wakeUp;
        }

        /** Reads the queue, then watches it from just after that read. Blocks for one round trip. */
        void start() {
            GetResponse snapshot = requests.await(requests.kv().get(prefix, QUEUE), "subscribe");
            lock.lock();
            try {
                if (closedSub || closed) {
                    return;
                }
                byRevision.clear();
                byKey.clear();
                for (KeyValue kvp : snapshot.getKvs()) {
                    byRevision.put(kvp.getCreateRevision(), kvp.getKey());
                    byKey.put(kvp.getKey(), kvp.getCreateRevision());
                }
                WatchOption option = WatchOption.builder()
                        .isPrefix(true)
                        .withRevision(snapshot.getHeader().getRevision() + 1)
                        .build();
                long g = ++generation;
                watcher = watch.watch(
                        prefix, option, Watch.listener(r -> onNext(g, r), t -> onError(g, t), () -> onDone(g)));
                healthy = true;
                mirrors.put(name, this);
            } finally {
                lock.unlock();
            }
        }

        boolean hasOlderThan(long revision) {
            lock.lock();
            try {
                return healthy && byRevision.containsKey(revision) && byRevision.firstKey() < revision;
            } finally {
                lock.unlock();
            }
        }

        private void onNext(long g, WatchResponse response) {
            boolean deleted = false;
            lock.lock();
            try {
                if (g != generation) {
                    return;
                }
                for (WatchEvent event : response.getEvents()) {
                    KeyValue kvp = event.getKeyValue();
                    if (event.getEventType() == WatchEvent.EventType.DELETE) {
                        Long rev = byKey.remove(kvp.getKey());
                        if (rev != null) {
                            byRevision.remove(rev);
                        }
                        deleted = true;
                    } else if (event.getEventType() == WatchEvent.EventType.PUT) {
                        byRevision.put(kvp.getCreateRevision(), kvp.getKey());
                        byKey.put(kvp.getKey(), kvp.getCreateRevision());
                    }
                }
            } finally {
                lock.unlock();
            }
            if (deleted) {
                wakeUp.run();
            }
        }

        private void onError(long g, Throwable t) {
            log.debug("distlock: etcd watch on {} failed", prefix, t);
            if (!stopTrusting(g)) {
                return;
            }
            wakeUp.run(); // a release may have gone unseen: let the waiters re-check
            restartLater(); // from a fresh read, so the mirror is whole again
        }

        private void onDone(long g) {
            if (stopTrusting(g)) {
                restartLater();
            }
        }

        /** Marks the mirror untrusted if {@code g} is the current watcher; whether it was. */
        private boolean stopTrusting(long g) {
            lock.lock();
            try {
                if (g != generation) {
                    return false;
                }
                healthy = false;
                return true;
            } finally {
                lock.unlock();
            }
        }

        private void restartLater() {
            if (closedSub || closed) {
                return;
            }
            try {
                scheduler.schedule(this::restart, 500, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException e) {
                // closing
            }
        }

        private void restart() {
            Watch.Watcher old;
            lock.lock();
            try {
                generation++; // the old watcher's callbacks, including its close, no longer count
                old = watcher;
                watcher = null;
            } finally {
                lock.unlock();
            }
            if (old != null) {
                old.close();
            }
            try {
                start();
                wakeUp.run(); // anything may have changed while the watch was down
            } catch (RuntimeException e) {
                log.debug("distlock: restarting the etcd watch on {} failed", prefix, e);
                restartLater();
            }
        }

        @Override
        public void close() {
            Watch.Watcher w;
            lock.lock();
            try {
                closedSub = true;
                healthy = false;
                w = watcher;
                watcher = null;
            } finally {
                lock.unlock();
            }
            subscriptions.remove(this);
            mirrors.remove(name, this);
            if (w != null) {
                try {
                    w.close();
                } catch (RuntimeException e) {
                    log.debug("distlock: closing an etcd watch failed", e);
                }
            }
        }
    }
}
