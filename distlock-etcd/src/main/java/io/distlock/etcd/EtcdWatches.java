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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
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
 *   The engine keeps at most one subscription per name per client; each is one etcd watch on the name's prefix. It is
 *   created on the server's current revision, and only once etcd says it is created is the prefix read: every change
 *   after the watch's start reaches it, so a release between a waiter's failed attempt and its subscription is not
 *   missed, and the mirror starts from the read, skipping the events the read already saw (mod revision at most the
 *   read's). A watch created on a revision the server has already passed would be an unsynced watcher, which etcd
 *   serves from a loop that runs about every 100 ms, so every wake-up of a fresh subscription would wait for it; a
 *   watch on the current revision is served as each write is applied. Delete events (release, expiry, forced
 *   release, abandon) wake the waiters; puts do not.
 *
 * The queue mirror
 *   The same events keep a mirror of the name's queue: the create revisions of the keys under the prefix. A queued
 *   waiter that finds an older key in the mirror (showsOlderThan) knows it is not the head without a round trip, and
 *   the delete of that key will wake it, since a delete is applied to the mirror before the wake-up runs. A waiter's
 *   own key whose put event has not arrived yet (its revision is newer than every event the mirror has seen) counts as
 *   there: a wake-up by an earlier delete that comes while the enqueue is on its way costs no round trip either.
 *
 * What a waiter depends on
 *   A waiting read-write lock or semaphore claim records the keys ahead of it that block it, with their permits
 *   (dependsOn). Until their deletes leave few enough of those permits, the mirror answers that it is still blocked
 *   (showsBlocked) and a wake-up costs that waiter no round trip: a release wakes a client's waiters, but only those
 *   that the released key was holding back ask etcd. Keys only join a queue at its end, so the set a waiter depends on
 *   can only shrink; a grant is always confirmed by etcd.
 *
 * Idle watches
 *   The engine drops a name's subscription when nobody of the client waits or holds; a client that comes back to the
 *   name at once (a lock taken again and again across clients) would pay the watch's creation and the queue read every
 *   time. A closed subscription's watch therefore stays open, idle, for LINGER (at most MAX_IDLE of them): its events
 *   keep the mirror current and wake nobody. A subscription to the name within that time takes it over with no round
 *   trip; otherwise it is closed. Handing it over and applying an event are under the watch's lock, so an event is
 *   either in the mirror before the new subscriber looks, or wakes the new subscriber.
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
    private final ConcurrentHashMap<String, QueueWatch> idle = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /** How long a closed subscription's watch stays open for the next subscription to the name. */
    static final long LINGER_MILLIS = 2_000;
    /** At most this many idle watches per client; a subscription closed beyond them closes its watch. */
    static final int MAX_IDLE = 256;

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

    /** Watches the name's queue from now on; blocks for one read, unless an idle watch of the name is taken over. */
    Subscription subscribe(LockKey key, Runnable wakeUp) {
        QueueWatch lingering = idle.remove(key.name());
        if (lingering != null) {
            Subscription taken = lingering.takeOver(wakeUp, false);
            if (taken != null) {
                return taken;
            }
            lingering.close();
        }
        QueueWatch sub = new QueueWatch(key.name(), bytes(keys.namePrefix(key.name())));
        subscriptions.add(sub);
        Subscription use = sub.takeOver(wakeUp, true);
        try {
            sub.start();
        } catch (RuntimeException e) {
            sub.close();
            throw e;
        }
        return java.util.Objects.requireNonNull(use);
    }

    /** How many watches this client keeps open, idle ones included. */
    int openWatches() {
        return subscriptions.size();
    }

    /**
     * Whether a healthy watch of the name shows the key with create revision {@code revision} and an older one: the
     * owner of that key is not the head, and will be woken when the older key goes.
     */
    boolean showsOlderThan(String name, long revision) {
        QueueWatch mirror = mirrors.get(name);
        return mirror != null && mirror.hasOlderThan(revision);
    }

    /**
     * Whether a healthy watch of the name shows the key with create revision {@code revision} as the oldest of the
     * queue: the watch has seen that key's put and the delete of every older key, so the key's owner is the head.
     */
    boolean showsHead(String name, long revision) {
        QueueWatch mirror = mirrors.get(name);
        return mirror != null && mirror.isHead(revision);
    }

    /**
     * Records that the waiter whose key has create revision {@code revision} waits behind {@code blockers} (revision to
     * permits) until at most {@code budget} of their permits remain; a no-op without a healthy watch of the name.
     */
    void dependsOn(String name, long revision, Map<Long, Integer> blockers, long budget) {
        QueueWatch mirror = mirrors.get(name);
        if (mirror != null) {
            mirror.dependsOn(revision, blockers, budget);
        }
    }

    /**
     * Whether a healthy watch of the name shows that the waiter with key revision {@code revision} still waits behind
     * the keys it depends on ({@link #dependsOn}): they are all older than its key, so their deletes wake it.
     */
    boolean showsBlocked(String name, long revision) {
        QueueWatch mirror = mirrors.get(name);
        return mirror != null && mirror.blocked(revision);
    }

    void close() {
        closed = true;
        scheduler.shutdownNow();
        for (QueueWatch s : List.copyOf(subscriptions)) {
            s.close();
        }
    }

    /** The keys a waiter waits behind, with their permits, and how many of those permits may remain for a grant. */
    private record Dependency(Map<Long, Integer> blockers, long budget) {}

    private static final Runnable NOBODY = () -> {};

    /** One name's watch and its mirror of the queue, used by one subscription at a time, or idle. */
    private final class QueueWatch {
        private final String name;
        private final ByteSequence prefix;
        private Runnable wakeUp = NOBODY; // the current subscriber's; NOBODY while idle
        private @Nullable Subscription user; // the current subscription; null while idle
        private long idleSince; // counts the times it went idle: a close scheduled for an earlier idle time is void
        private final ReentrantLock lock = new ReentrantLock();
        private final TreeMap<Long, ByteSequence> byRevision = new TreeMap<>();
        private final HashMap<ByteSequence, Long> byKey = new HashMap<>();
        private final HashMap<Long, Dependency> dependencies = new HashMap<>(); // by the waiter's key revision
        private final List<WatchEvent> pending = new ArrayList<>(); // events that came before the read's answer
        private long snapshotRevision = -1; // the revision of the read the mirror starts from; -1 until it answers
        private long seenThrough = -1; // the newest revision the mirror has: the read's, or a later event's
        private CompletableFuture<Void> created = new CompletableFuture<>();
        private boolean healthy;
        private long generation; // the watcher whose callbacks count; older ones were closed by us
        private Watch.@Nullable Watcher watcher;
        private boolean closedSub;

        QueueWatch(String name, ByteSequence prefix) {
            this.name = name;
            this.prefix = prefix;
        }

        /**
         * Makes {@code wakeUp}'s subscriber the user of this watch: a {@code fresh} one about to start, or an idle one
         * that is healthy (its mirror current). Null if it cannot be.
         */
        @Nullable
        Subscription takeOver(Runnable wakeUp, boolean fresh) {
            lock.lock();
            try {
                if (closedSub || closed || user != null || !(fresh || healthy)) {
                    return null;
                }
                Subscription use = new Subscription() {
                    @Override
                    public void close() {
                        release(this);
                    }
                };
                this.user = use;
                this.wakeUp = wakeUp;
                return use;
            } finally {
                lock.unlock();
            }
        }

        /** Ends {@code use}: the watch goes idle for LINGER_MILLIS, or closes. A second close is a no-op. */
        private void release(Subscription use) {
            long idleTime;
            lock.lock();
            try {
                if (user != use) {
                    return;
                }
                user = null;
                wakeUp = NOBODY;
                idleTime = ++idleSince;
            } finally {
                lock.unlock();
            }
            if (closed || !healthy() || idle.size() >= MAX_IDLE || idle.putIfAbsent(name, this) != null) {
                close();
                return;
            }
            try {
                scheduler.schedule(() -> expire(idleTime), LINGER_MILLIS, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException e) {
                idle.remove(name, this);
                close(); // the client is closing
            }
        }

        private boolean healthy() {
            lock.lock();
            try {
                return healthy;
            } finally {
                lock.unlock();
            }
        }

        /** Closes the watch if it is still idle since {@code idleTime}. */
        private void expire(long idleTime) {
            lock.lock();
            try {
                if (user != null || idleSince != idleTime) {
                    return;
                }
            } finally {
                lock.unlock();
            }
            if (idle.remove(name, this)) {
                close();
            }
        }

        /** The current subscriber's wake-up, read under the lock. */
        private Runnable wakeUp() {
            lock.lock();
            try {
                return wakeUp;
            } finally {
                lock.unlock();
            }
        }

        /**
         * Watches the queue from the server's current revision, waits until etcd has created the watch, then reads the
         * queue. Blocks for two round trips.
         */
        void start() {
            long g;
            CompletableFuture<Void> created = new CompletableFuture<>();
            lock.lock();
            try {
                if (closedSub || closed) {
                    return;
                }
                g = ++generation;
                snapshotRevision = -1; // events before the read are kept in pending
                pending.clear();
                this.created = created;
                WatchOption option = WatchOption.builder()
                        .isPrefix(true)
                        .withCreateNotify(true)
                        .build();
                watcher = watch.watch(
                        prefix, option, Watch.listener(r -> onNext(g, r), t -> onError(g, t), () -> onDone(g)));
            } finally {
                lock.unlock();
            }
            var unused = requests.await(created, "subscribe");
            GetResponse snapshot = requests.await(requests.kv().get(prefix, QUEUE), "subscribe");
            boolean deleted = false;
            Runnable wake;
            lock.lock();
            try {
                if (closedSub || closed || g != generation) {
                    return;
                }
                byRevision.clear();
                byKey.clear();
                dependencies.clear();
                for (KeyValue kvp : snapshot.getKvs()) {
                    byRevision.put(kvp.getCreateRevision(), kvp.getKey());
                    byKey.put(kvp.getKey(), kvp.getCreateRevision());
                }
                snapshotRevision = snapshot.getHeader().getRevision();
                seenThrough = snapshotRevision;
                for (WatchEvent event : pending) {
                    deleted |= apply(event);
                }
                pending.clear();
                healthy = true;
                mirrors.put(name, this);
                wake = wakeUp;
            } finally {
                lock.unlock();
            }
            if (deleted) {
                wake.run();
            }
        }

        boolean hasOlderThan(long revision) {
            lock.lock();
            try {
                // the key is in the mirror, or is newer than anything the mirror has seen yet (its put event is on
                // its way: events come in revision order, so one that is not there once the mirror has passed its
                // revision was deleted)
                return healthy
                        && (byRevision.containsKey(revision) || revision > seenThrough)
                        && !byRevision.isEmpty()
                        && byRevision.firstKey() < revision;
            } finally {
                lock.unlock();
            }
        }

        boolean isHead(long revision) {
            lock.lock();
            try {
                return healthy && !byRevision.isEmpty() && byRevision.firstKey() == revision;
            } finally {
                lock.unlock();
            }
        }

        void dependsOn(long revision, Map<Long, Integer> blockers, long budget) {
            lock.lock();
            try {
                if (healthy && byRevision.containsKey(revision)) {
                    dependencies.put(revision, new Dependency(Map.copyOf(blockers), budget));
                }
            } finally {
                lock.unlock();
            }
        }

        boolean blocked(long revision) {
            lock.lock();
            try {
                Dependency d = dependencies.get(revision);
                if (!healthy || d == null || !byRevision.containsKey(revision)) {
                    return false;
                }
                long left = 0;
                for (Map.Entry<Long, Integer> b : d.blockers.entrySet()) {
                    if (byRevision.containsKey(b.getKey())) {
                        left += b.getValue();
                    }
                }
                return left > d.budget;
            } finally {
                lock.unlock();
            }
        }

        private void onNext(long g, WatchResponse response) {
            boolean deleted = false;
            Runnable wake;
            lock.lock();
            try {
                if (g != generation) {
                    return;
                }
                if (response.isCreatedNotify()) {
                    created.complete(null);
                }
                for (WatchEvent event : response.getEvents()) {
                    if (snapshotRevision < 0) {
                        pending.add(event); // the read has not answered yet: applied after it
                        deleted |= event.getEventType() == WatchEvent.EventType.DELETE;
                    } else {
                        deleted |= apply(event);
                    }
                }
                wake = wakeUp; // with the events applied: a subscriber taking over later sees them in the mirror
            } finally {
                lock.unlock();
            }
            if (deleted) {
                wake.run();
            }
        }

        /** Applies one event to the mirror unless the read already saw it; whether it was a delete. Under the lock. */
        private boolean apply(WatchEvent event) {
            KeyValue kvp = event.getKeyValue();
            if (kvp.getModRevision() <= snapshotRevision) {
                return false;
            }
            seenThrough = Math.max(seenThrough, kvp.getModRevision());
            if (event.getEventType() == WatchEvent.EventType.DELETE) {
                Long rev = byKey.remove(kvp.getKey());
                if (rev != null) {
                    byRevision.remove(rev);
                    dependencies.remove(rev);
                }
                return true;
            }
            if (event.getEventType() == WatchEvent.EventType.PUT) {
                byRevision.put(kvp.getCreateRevision(), kvp.getKey());
                byKey.put(kvp.getKey(), kvp.getCreateRevision());
            }
            return false;
        }

        private void onError(long g, Throwable t) {
            log.debug("distlock: etcd watch on {} failed", prefix, t);
            if (!stopTrusting(g)) {
                return;
            }
            wakeUp().run(); // a release may have gone unseen: let the waiters re-check
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
                // a start still waiting for the watch to be created fails now instead of at its request timeout
                created.completeExceptionally(new EtcdRequests.RequestFailedException(
                        "etcd: the watch on " + name + " ended before it was created", null));
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
                wakeUp().run(); // anything may have changed while the watch was down
            } catch (RuntimeException e) {
                log.debug("distlock: restarting the etcd watch on {} failed", prefix, e);
                restartLater();
            }
        }

        /** Closes the watch for good. */
        void close() {
            Watch.Watcher w;
            lock.lock();
            try {
                closedSub = true;
                healthy = false;
                user = null;
                wakeUp = NOBODY;
                w = watcher;
                watcher = null;
            } finally {
                lock.unlock();
            }
            subscriptions.remove(this);
            mirrors.remove(name, this);
            idle.remove(name, this);
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
