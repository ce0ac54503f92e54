package io.distlock.zookeeper;

import io.distlock.DistributedLockException;
import io.distlock.LockInfo;
import io.distlock.spi.Attempt;
import io.distlock.spi.HandOff;
import io.distlock.spi.HandsOff;
import io.distlock.spi.HeldLock;
import io.distlock.spi.Lease;
import io.distlock.spi.LockKey;
import io.distlock.spi.LockStore;
import io.distlock.spi.OwnerId;
import io.distlock.spi.QueueOrdered;
import io.distlock.spi.ReportsLoss;
import io.distlock.spi.SessionHolds;
import io.distlock.spi.Subscription;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.framework.api.CuratorEventType;
import org.apache.curator.framework.api.CuratorListener;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.utils.DefaultZookeeperFactory;
import org.apache.curator.utils.ZKPaths;
import org.apache.curator.utils.ZookeeperFactory;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.CreateOptions;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.Watcher.WatcherType;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Layout. Every lock name has a lock node <root>/locks/<ZkNames.lockNode(name)>, a CONTAINER node (the server reaps it
 * once it is empty) whose data is the full lock name. Its children are the queue: one EPHEMERAL_SEQUENTIAL entry per
 * owner that holds or waits, named after the owner (ZkNames.entryPrefix) so that an owner finds its own entry in a
 * getChildren answer, with the owner id as data. The entry with the lowest sequence holds the lock; the others wait in
 * sequence order, so the store's queue is fair by construction and the store is QueueOrdered (a non-fair
 * lock's local waiters line up in the engine behind the first one, which alone queues here; see Hand-off).
 *
 * Fencing. The token of a grant is the czxid of the owner's entry: the zxid of the transaction that created it. Zxids
 * are totally ordered across the ensemble and survive restarts that keep data; entries of one lock node are granted in
 * creation order, and a lock node is deleted only when empty, so every grant's czxid is greater than every earlier
 * grant's of that name. The sequence suffix is not used: it restarts when the container is reaped. The token is
 * that czxid times SPARE + 1 (tokenOf): the SPARE tokens after it are reserved for the client's local successions (a
 * thread of the client takes the hold over from another, without a round trip, while the entry stays; see the engine),
 * and every later entry's token is still greater than all of them, since its czxid is at least one more.
 *
 * Acquire. A free name with no lock node costs one round trip: a ZooKeeper multi that creates the lock node and the
 * entry together; if the lock node did not exist, the new entry is alone and holds the lock. The container's Stat in
 * the multi's answer carries the czxid, which the entry shares (raw ZooKeeper multi: Curator's transaction API drops
 * that Stat, so with a Curator client given by the user, whose ACL provider we cannot read, the entry's Stat costs one
 * more read). Otherwise the entry is created in Curator's protected mode (a create whose answer was lost is found
 * again by its GUID, not repeated), and the queue decides: held if the owner's entry is first. A non-queueing attempt
 * first reads the children and writes nothing if another owner is there; if it wrote an entry and is not first, it
 * deletes it again. Duplicate entries of one owner (a retried multi whose first try went through) are found by the
 * owner tag and the later ones deleted.
 *
 * Reading the queue. While the engine has waiters for a name, the store holds a persistent recursive watch on its
 * lock node and mirrors the queue from it: a snapshot read asynchronously (so its answer comes through the event
 * thread in order with the watch events), then every creation and deletion applied in order. The mirror is the
 * queue as of the last event seen; "my entry is first" read from it is a fact, because an entry leaves the head only
 * by being deleted. So a woken waiter decides without a round trip, and only falls back to getChildren when the
 * mirror is unknown (before the snapshot, after a disconnection) or does not yet show its own new entry.
 *
 * Release deletes the entry; when the grant found the entry alone and no local waiter watches the name, it deletes
 * the lock node in the same multi, so the next uncontended acquire is again one round trip (if someone queued
 * meanwhile, the multi fails as a whole and the entry alone is deleted). Abandon deletes the entry, in Curator's
 * guaranteed mode (retried in the background after a connection loss while the session lives; an ephemeral entry
 * dies with its session anyway). An entry whose create failed with an unknown outcome is searched for by owner tag,
 * at once and again after the next reconnect.
 *
 * Hand-off (HandsOff). When a local holder releases and another owner of this client waits, the engine hands
 * the lock over instead of releasing it. If the receiver has no entry yet, one ZooKeeper multi deletes the giver's
 * entry, deletes the lock node and makes it again with a new entry of the receiver (protected: its name carries a
 * GUID, so a transaction whose answer was lost is found again). Deleting the lock node fails, and the multi with it,
 * when any other entry is there: so when it succeeds the receiver's entry is alone and holds the lock, with the
 * transaction's zxid as its czxid and token, in one round trip and one write. Otherwise a second multi deletes the
 * giver's entry and queues the receiver's; the mirror (or a getChildren) tells whether it is first (granted) or
 * waits behind other owners (queued). If the receiver is queued already, deleting the giver's entry is the hand-off,
 * and its entry holds if it is now first. Tokens stay derived from czxids, so grants still follow creation order. The deletions a
 * hand-off makes wake no local waiter (the receiver holds, or the engine wakes the waiters itself).
 *
 * Session. Holds last as long as the session. The store counts connection trouble in an epoch, bumped on every
 * Disconnected or Expired event (see Hearing of trouble); a hold remembers the epoch it was granted in, and renew
 * reports it gone once the epoch changed (Curator's advice: after SUSPENDED a lock must be presumed lost) without a
 * round trip, and without asking Curator for the handle, which Curator holds back while it resets the session.
 * Otherwise renew reads all entries in one read-only multi and checks that each still exists with the same czxid and
 * the current session as its ephemeral owner. The engine calls renew every third of its watchdog lease, so the builder
 * keeps that lease at a third of the session timeout: a lost session is told within a ninth of the session timeout
 * after the client saw it, or at once after a connection event (below).
 *
 * Hearing of trouble. The store counts trouble on the ZooKeeper handle's event thread, as the event is delivered, and
 * has the engine check its holds at once: through the handle's own watcher when this library built the Curator client
 * (HandleFactory), else through Curator's event listener. Curator's connection states come later, from Curator's own
 * thread, which any slow listener holds up; a holder cut off at two thirds of the session timeout could then be told
 * only after the server expired its session and granted the lock to a waiter. On Expired, Curator closes the handle
 * before it passes the event on, and that close ends the session on the server at once if the connection is still up
 * (an expiry reported by the client itself, as by ZooKeeper's injectSessionExpiration, which Curator uses too): the
 * server may then grant the lock before any Curator listener runs, and only the handle's own watcher hears of the
 * expiry first. SUSPENDED and LOST still count if the connection is down as they come; once it is back they must not
 * end the holds granted since, so they only have every hold checked (a LOST may still be news: Curator's reset of a
 * connected client closes the session with no Disconnected or Expired event), and the check's read ends just the holds
 * of an earlier session. A namespaced Curator client (usingNamespace) has no event listener to offer: the store then
 * hears trouble through Curator's connection states alone, and counts every one of them.
 *
 * Wake-ups. The watch of a subscribed lock node wakes the engine whenever an entry is deleted. Persistent watches
 * die with a session, so they are added again after RECONNECTED, with a new snapshot, and every subscriber is woken
 * then, since changes during the disconnection may have gone unseen. Busy answers ask for a retry within the session
 * timeout at the latest, which bounds the cost of any lost event.
 */
/** A {@link LockStore} over ZooKeeper through Curator; see the overview comment in the source. */
final class ZooKeeperLockStore implements LockStore, QueueOrdered, SessionHolds, HandsOff, ReportsLoss {
    private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockStore.class);
    static final int MAX_TRIES = 32;
    /** Tokens reserved with every grant for local successions (see Fencing); a power of two less one. */
    static final int SPARE = 15;

    private static final int MAX_OPS_PER_MULTI = 1000;
    /** How long tryAcquire waits for the event of its own new entry before it reads the queue itself. */
    private static final long MIRROR_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private final CuratorFramework curator;
    private final boolean ownsCurator;
    private final @Nullable ACLProvider rawAcls;
    private final String locksPath;
    private final Duration retryWithin;
    private final ConcurrentHashMap<EntryId, Entry> entries = new ConcurrentHashMap<>();
    private final Set<EntryId> uncertain = ConcurrentHashMap.newKeySet();
    private final Set<Sub> subscriptions = ConcurrentHashMap.newKeySet();
    private final ConcurrentHashMap<String, Sub> subscriptionsByPath = new ConcurrentHashMap<>();
    /** Entries a hand-off of this client is deleting: their deletion event wakes no local waiter. */
    private final Set<String> handedOff = ConcurrentHashMap.newKeySet();

    private final AtomicLong epoch = new AtomicLong();
    /** Curator's protected-mode prefix; a hand-off's entry carries one of its own making. */
    private static final String PROTECTED_MARK = "_c_";
    /** How soon to try again after the lock node kept changing under one attempt. */
    static final Duration CHURN_RETRY = Duration.ofMillis(10);

    /** Tests only: runs before each create an attempt makes, to change the tree at exactly that point. */
    @FunctionalInterface
    interface CreateHook {
        /**
         * @param withLockNode whether the create makes the lock node too (the one-round-trip path)
         */
        void beforeCreate(String lockPath, boolean withLockNode) throws Exception;
    }

    private volatile CreateHook createHook = (lockPath, withLockNode) -> {};

    private final ConnectionStateListener stateListener = this::stateChanged;
    /** Hears the handle's connection events, unless a HandleFactory hands them over first. */
    private final CuratorListener eventListener = (client, event) -> {
        if (event.getType() == CuratorEventType.WATCHED) {
            connectionEvent(event.getWatchedEvent());
        }
    };

    /** Whether the store listens to Curator's event listener (a Curator client handed in, not namespaced). */
    private final boolean hearsThroughCurator;
    /**
     * Whether the handle's connection events reach the store (connectionEvent); if not, Curator's connection states are
     * all it hears.
     */
    private final boolean hearsEvents;
    /** The engine's "check your holds now", run on connection trouble so listeners hear of a loss at once. */
    private volatile Runnable checkNow = () -> {};

    private final ExecutorService background;
    private volatile boolean closed;

    /** An owner's queue entry under one lock name. */
    private record EntryId(String name, String owner) {
        // written out: looked up on every acquire and release, and the generated record methods cost several times
        // as much on JDK 17 (they showed as 6 % of the store's CPU in a profile)

        @Override
        public boolean equals(Object o) {
            return this == o || (o instanceof EntryId other && name.equals(other.name) && owner.equals(other.owner));
        }

        @Override
        public int hashCode() {
            return 31 * name.hashCode() + owner.hashCode();
        }
    }

    /**
     * The entry this client created for an owner.
     *
     * @param alone the entry was the lock node's only child when granted, so release may delete the lock node too
     * @param held the entry was granted: it is never granted again (its token, and the successions' after it, were
     *     issued), so an attempt of its owner that finds it ends it and queues anew
     */
    private record Entry(String path, long czxid, long session, long epoch, boolean alone, boolean held) {
        Entry granted(long atEpoch, boolean isAlone) {
            return new Entry(path, czxid, session, atEpoch, isAlone, true);
        }

        /** The fencing token of a grant of this entry. */
        long token() {
            return tokenOf(czxid);
        }
    }

    /**
     * The fencing token of a grant of the entry created at {@code czxid}: {@code czxid * (SPARE + 1)}, so the SPARE
     * tokens after it, which the client may give to its own threads that take the hold over (successions), stay below
     * the token of any entry created later.
     */
    static long tokenOf(long czxid) {
        // a zxid is epoch << 32 | counter: this overflows only after 2^27 leader elections
        return Math.multiplyExact(czxid, SPARE + 1);
    }

    /**
     * @param rawAcls the ACLs the Curator client applies, when known (a client this library built); enables the
     *     one-round-trip acquire, which talks to ZooKeeper directly
     * @param handles the factory that made the Curator client's ZooKeeper handles, if this library built it: the
     *     store then hears connection events before Curator does
     */
    ZooKeeperLockStore(
            CuratorFramework curator,
            boolean ownsCurator,
            @Nullable ACLProvider rawAcls,
            String rootPath,
            Duration retryWithin,
            @Nullable HandleFactory handles) {
        this.curator = Objects.requireNonNull(curator, "curator");
        this.rawAcls = rawAcls;
        this.ownsCurator = ownsCurator;
        this.locksPath = ZKPaths.makePath(rootPath, "locks");
        this.retryWithin = retryWithin;
        this.background = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "distlock-zookeeper-background");
            t.setDaemon(true);
            return t;
        });
        curator.getConnectionStateListenable().addListener(stateListener);
        boolean throughCurator = false;
        if (handles != null) {
            handles.store = this;
        } else {
            try {
                curator.getCuratorListenable().addListener(eventListener);
                throughCurator = true;
            } catch (UnsupportedOperationException e) {
                // a namespaced facade (usingNamespace) offers no event listener: Curator's connection states only
                log.debug("distlock: {} has no event listener; connection trouble heard through its states", curator);
            }
        }
        this.hearsThroughCurator = throughCurator;
        this.hearsEvents = handles != null || throughCurator;
    }

    /** Creates the root path if needed. */
    void start() {
        run("create root " + locksPath, this::ensureLocksPath);
    }

    private void ensureLocksPath() throws Exception {
        try {
            var unused = curator.create().creatingParentsIfNeeded().forPath(locksPath);
        } catch (KeeperException.NodeExistsException e) {
            // someone else made it
        }
    }

    // ---------------------------------------------------------------- LockStore

    @Override
    public Attempt tryAcquire(LockKey key, OwnerId owner, Lease leaseSpec, boolean queue) {
        Duration lease = leaseSpec.length();
        return call("tryAcquire", () -> {
            EntryId id = new EntryId(key.name(), owner.value());
            String lockPath = lockPath(key);
            String tag = ZkNames.ownerTag(owner.value());
            boolean lockNodeMissing = false;
            for (int tries = 0; tries < MAX_TRIES; tries++) {
                ensureOpen();
                long epochAtStart = epoch.get();
                Entry mine = entries.get(id);
                if (mine != null && mine.held()) {
                    // granted before and since lost (or held on by a successor that lost it): granting it again
                    // would repeat a token that was issued, or undercut a successor's; end it and queue anew
                    entries.remove(id, mine);
                    deleteGuaranteed(mine.path());
                    mine = null;
                }
                Sub sub = subscriptionsByPath.get(lockPath);
                if (mine == null) {
                    // a lock node known to exist makes the one-round-trip create fail: skip it
                    Entry alone = lockNodeMissing || sub == null || !sub.knownToExist()
                            ? createWithLockNode(key, owner, lockPath, epochAtStart)
                            : null;
                    lockNodeMissing = false;
                    if (alone != null) {
                        entries.put(id, alone);
                        dropIfClosed(id, alone);
                        return Attempt.acquired(alone.token(), SPARE);
                    }
                    if (!queue && othersQueued(children(lockPath), tag)) {
                        return Attempt.busy(retryWithin); // nothing written
                    }
                    mine = createEntry(owner, lockPath, epochAtStart);
                    if (mine == null) {
                        lockNodeMissing = true; // reaped or released in between
                        continue;
                    }
                    entries.put(id, mine);
                    dropIfClosed(id, mine);
                }
                if (queue && sub != null && mine.session() == sessionId()) {
                    Boolean heads = sub.heads(ZKPaths.getNodeFromPath(mine.path()), null, tag, MIRROR_WAIT_NANOS);
                    if (heads != null) {
                        if (heads) {
                            Entry held = mine.granted(epochAtStart, false);
                            entries.put(id, held);
                            return Attempt.acquired(held.token(), SPARE);
                        }
                        return Attempt.busy(retryWithin);
                    }
                }
                List<ZkNames.Entry> queueNow = children(lockPath);
                ZkNames.Entry first = null;
                ZkNames.Entry own = null;
                for (ZkNames.Entry e : queueNow) {
                    if (first == null) {
                        first = e;
                    }
                    if (e.ownerTag().equals(tag)) {
                        if (own == null) {
                            own = e;
                        } else {
                            deleteInBackground(ZKPaths.makePath(lockPath, e.node())); // a duplicate of ours
                        }
                    }
                }
                if (own == null) {
                    // our entry is gone (session expired, deleted by an operator): queue again
                    entries.remove(id, mine);
                    continue;
                }
                String ownPath = ZKPaths.makePath(lockPath, own.node());
                if (!ownPath.equals(mine.path())) {
                    // the entry we know of is gone but an earlier one of ours (a lost create answer) is there
                    deleteInBackground(mine.path());
                    Stat stat = curator.checkExists().forPath(ownPath);
                    if (stat == null) {
                        entries.remove(id, mine);
                        continue;
                    }
                    mine = new Entry(ownPath, stat.getCzxid(), stat.getEphemeralOwner(), epochAtStart, false, false);
                    entries.put(id, mine);
                }
                if (mine.session() != sessionId()) {
                    // left over from a session that ended; it dies with that session, but do not wait for it
                    deleteInBackground(mine.path());
                    entries.remove(id, mine);
                    continue;
                }
                if (own == first) {
                    Entry held = mine.granted(epochAtStart, queueNow.size() == 1);
                    entries.put(id, held);
                    return Attempt.acquired(held.token(), SPARE);
                }
                if (!queue) {
                    entries.remove(id, mine);
                    deleteGuaranteed(mine.path());
                }
                return Attempt.busy(retryWithin);
            }
            // the name's lock node was removed and made again under us every time: others are busy with this lock.
            // That is contention, not a failure: answer busy (leaving nothing behind for a plain try) and let the
            // engine try again shortly.
            if (!queue) {
                Entry left = entries.remove(id);
                if (left != null) {
                    deleteGuaranteed(left.path());
                }
            }
            return Attempt.busy(CHURN_RETRY);
        });
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("the ZooKeeper lock store is closed");
        }
    }

    /** An entry created while close() ran is not in close()'s list: delete it here. */
    private void dropIfClosed(EntryId id, Entry created) throws Exception {
        if (closed) {
            entries.remove(id, created);
            curator.delete().guaranteed().inBackground().forPath(created.path());
            ensureOpen();
        }
    }

    /** The one-round-trip path: creates lock node and entry together; null if the lock node exists. */
    private @Nullable Entry createWithLockNode(LockKey key, OwnerId owner, String lockPath, long epochAtStart)
            throws Exception {
        createHook.beforeCreate(lockPath, true);
        byte[] name = key.name().getBytes(StandardCharsets.UTF_8);
        String entryPrefix = ZKPaths.makePath(lockPath, ZkNames.entryPrefix(owner.value()));
        for (int tries = 0; tries < 2; tries++) {
            ACLProvider acls = rawAcls;
            if (acls != null && curator.getZookeeperClient().isConnected()) {
                // ZooKeeper's own multi answers with the container's Stat, whose czxid the entry shares; Curator's
                // transaction drops it, which would cost a round trip more
                ZooKeeper zk = curator.getZookeeperClient().getZooKeeper();
                String namespace = curator.getNamespace();
                List<OpResult> results;
                try {
                    results = zk.multi(List.of(
                            Op.create(
                                    ZKPaths.fixForNamespace(namespace, lockPath),
                                    name,
                                    acls.getAclForPath(lockPath),
                                    CreateMode.CONTAINER),
                            Op.create(
                                    ZKPaths.fixForNamespace(namespace, entryPrefix),
                                    owner.value().getBytes(StandardCharsets.UTF_8),
                                    acls.getAclForPath(entryPrefix),
                                    CreateMode.EPHEMERAL_SEQUENTIAL)));
                } catch (KeeperException.NodeExistsException e) {
                    return null;
                } catch (KeeperException.NoNodeException e) {
                    ensureLocksPath(); // an operator deleted the root
                    continue;
                }
                String created = ((OpResult.CreateResult) results.get(1)).getPath();
                String path = ZKPaths.makePath(lockPath, ZKPaths.getNodeFromPath(created));
                Stat stat = ((OpResult.CreateResult) results.get(0)).getStat();
                if (stat == null) {
                    stat = curator.checkExists().forPath(path);
                    if (stat == null) {
                        return null;
                    }
                }
                return new Entry(path, stat.getCzxid(), zk.getSessionId(), epochAtStart, true, true);
            }
            CuratorOp createLockNode = curator.transactionOp()
                    .create()
                    .withMode(CreateMode.CONTAINER)
                    .forPath(lockPath, name);
            CuratorOp createEntry = curator.transactionOp()
                    .create()
                    .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                    .forPath(entryPrefix, owner.value().getBytes(StandardCharsets.UTF_8));
            List<CuratorTransactionResult> results;
            try {
                results = curator.transaction().forOperations(createLockNode, createEntry);
            } catch (KeeperException.NodeExistsException e) {
                return null;
            } catch (KeeperException.NoNodeException e) {
                ensureLocksPath(); // an operator deleted the root
                continue;
            }
            String path = Objects.requireNonNull(results.get(1).getResultPath(), "entry path");
            Stat stat = results.get(0).getResultStat();
            if (stat == null || stat.getCzxid() == 0) {
                stat = curator.checkExists().forPath(path); // the container and the entry share one zxid
                if (stat == null) {
                    return null;
                }
            }
            return new Entry(path, stat.getCzxid(), sessionId(), epochAtStart, true, true);
        }
        return null;
    }

    /** Creates an entry in an existing lock node; null if the lock node is gone. */
    private @Nullable Entry createEntry(OwnerId owner, String lockPath, long epochAtStart) throws Exception {
        createHook.beforeCreate(lockPath, false);
        String entryPrefix = ZKPaths.makePath(lockPath, ZkNames.entryPrefix(owner.value()));
        Stat stat = new Stat();
        String path;
        try {
            path = curator.create()
                    .withProtection()
                    .storingStatIn(stat)
                    .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                    .forPath(entryPrefix, owner.value().getBytes(StandardCharsets.UTF_8));
        } catch (KeeperException.NoNodeException e) {
            return null;
        }
        if (stat.getCzxid() == 0) {
            // protected mode found our entry after a lost answer and filled in no Stat
            Stat found = curator.checkExists().forPath(path);
            if (found == null) {
                return null;
            }
            stat = found;
        }
        return new Entry(path, stat.getCzxid(), stat.getEphemeralOwner(), epochAtStart, false, false);
    }

    private static boolean othersQueued(List<ZkNames.Entry> queue, String tag) {
        for (ZkNames.Entry e : queue) {
            if (!e.ownerTag().equals(tag)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void abandon(LockKey key, OwnerId owner) {
        EntryId id = new EntryId(key.name(), owner.value());
        Entry mine = entries.remove(id);
        try {
            cleanUp(() -> {
                if (mine != null) {
                    deleteGuaranteed(mine.path());
                } else {
                    deleteEntriesOf(key, owner, null);
                }
            });
        } catch (RuntimeException e) {
            if (mine == null) {
                uncertain.add(id); // look again after the next reconnect
            }
            throw e;
        }
    }

    /**
     * Runs a clean-up step. An interrupted waiter still has to clean up, and ZooKeeper calls fail at once on an
     * interrupted thread: the flag is cleared for the step and set again after it.
     */
    private static void cleanUp(ZkAction step) {
        boolean interrupted = Thread.interrupted();
        try {
            run("abandon", step);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Ends exactly the entry of a lost hold: the one whose grant's token it carries. The owner the hold is kept under
     * may be acquiring again already (after successions it is another thread of this client, and it may wait): its
     * attempt deletes the old entry itself (an entry is granted once) and makes a new one, which this must not touch.
     */
    @Override
    public void abandonHold(HeldLock hold) {
        EntryId id = new EntryId(hold.key().name(), hold.owner().value());
        Entry mine = entries.get(id);
        if (mine != null && mine.token() == hold.fencingToken()) {
            entries.remove(id, mine);
            cleanUp(() -> deleteGuaranteed(mine.path()));
        } else if (mine == null) {
            // not known here (any more): delete the owner's entry with that token if one is still there
            cleanUp(() -> deleteEntriesOf(hold.key(), hold.owner(), hold.fencingToken()));
        }
        // else: the owner has a newer entry, made by an attempt that deleted this one first
    }

    /**
     * Deletes the entries of {@code owner} under the lock, found by owner tag: every one, or with {@code token} only
     * the one whose grant would carry that token.
     */
    private void deleteEntriesOf(LockKey key, OwnerId owner, @Nullable Long token) throws Exception {
        String lockPath = lockPath(key);
        String tag = ZkNames.ownerTag(owner.value());
        for (ZkNames.Entry e : children(lockPath)) {
            if (e.ownerTag().equals(tag)) {
                String path = ZKPaths.makePath(lockPath, e.node());
                if (token != null) {
                    Stat stat = curator.checkExists().forPath(path);
                    if (stat == null || tokenOf(stat.getCzxid()) != token) {
                        continue;
                    }
                }
                deleteGuaranteed(path);
            }
        }
    }

    @Override
    public boolean release(LockKey key, OwnerId owner) {
        EntryId id = new EntryId(key.name(), owner.value());
        Entry mine = entries.remove(id);
        if (mine == null) {
            return false;
        }
        return call("release", () -> {
            if (mine.epoch() != epoch.get()) {
                // the connection was suspended since the grant: the hold is presumed lost, whatever the node says
                deleteGuaranteed(mine.path());
                return false;
            }
            // with local waiters the lock node is about to be used again: deleting it would make them race to
            // create it anew
            String lockPath = lockPath(key);
            if (mine.alone() && !subscriptionsByPath.containsKey(lockPath)) {
                try {
                    var unused = transact(List.of(TxOp.delete(mine.path()), TxOp.delete(lockPath)));
                    return true;
                } catch (KeeperException.NotEmptyException e) {
                    // someone queued meanwhile: delete our entry alone
                } catch (KeeperException.NoNodeException e) {
                    return false; // our entry is gone (the lock node cannot be while our entry is there)
                } catch (KeeperException.ConnectionLossException | KeeperException.OperationTimeoutException e) {
                    // the direct multi is tried once: its outcome is unknown, and the connection trouble ends the
                    // hold anyway (presumed lost, as after SUSPENDED). Make sure the entry goes; the empty lock node
                    // is a container, which the server reaps.
                    deleteGuaranteed(mine.path());
                    return false;
                }
            }
            try {
                curator.delete().guaranteed().forPath(mine.path());
                return true;
            } catch (KeeperException.NoNodeException e) {
                return false;
            }
        });
    }

    @Override
    public HandOff handOff(LockKey key, OwnerId from, OwnerId to, Lease leaseSpec) {
        Duration lease = leaseSpec.length();
        EntryId fromId = new EntryId(key.name(), from.value());
        EntryId toId = new EntryId(key.name(), to.value());
        Entry held = entries.get(fromId);
        if (held == null) {
            return HandOff.notHeld();
        }
        return call("handOff", () -> {
            ensureOpen();
            long epochAtStart = epoch.get();
            long session = sessionId();
            if (held.epoch() != epochAtStart || held.session() != session) {
                // as in release: the connection was suspended since the grant, so the hold is presumed lost
                entries.remove(fromId, held);
                deleteGuaranteed(held.path());
                return HandOff.notHeld();
            }
            String lockPath = lockPath(key);
            // the receiver may be the owner the hold is kept under (a succession passed it on, and that owner waits
            // again): its entry is the one handed off, not a place in the queue
            Entry waiting = fromId.equals(toId) ? null : entries.get(toId);
            if (waiting != null && waiting.session() != session) {
                // left over from a session that ended: it dies with it
                entries.remove(toId, waiting);
                deleteInBackground(waiting.path());
                waiting = null;
            }
            boolean quiet = subscriptionsByPath.containsKey(lockPath);
            if (quiet) {
                handedOff.add(held.path());
            }
            HandOff answer = null;
            try {
                answer = waiting != null
                        ? handOffToQueued(fromId, held, toId, waiting, lockPath, epochAtStart)
                        : handOffToNew(key, fromId, held, toId, to, lockPath, epochAtStart);
                return answer;
            } finally {
                if (quiet && (answer == null || answer == HandOff.notHeld())) {
                    handedOff.remove(held.path()); // deleted by nobody, or by someone else before
                }
            }
        });
    }

    /** The receiver has no entry: one transaction ends the hold and queues the receiver. */
    private HandOff handOffToNew(
            LockKey key, EntryId fromId, Entry held, EntryId toId, OwnerId to, String lockPath, long epochAtStart)
            throws Exception {
        // protected like Curator's protected mode: a transaction retried after a lost answer is recognised by it
        String guid = UUID.randomUUID().toString();
        String entryPath = ZKPaths.makePath(lockPath, PROTECTED_MARK + guid + "-" + ZkNames.entryPrefix(to.value()));
        byte[] ownerData = to.value().getBytes(StandardCharsets.UTF_8);
        String heldNode = ZKPaths.getNodeFromPath(held.path());
        Sub sub = subscriptionsByPath.get(lockPath);
        try {
            if (sub == null || !sub.knownOthers(heldNode)) {
                // nobody else queued: delete the lock node with the hold and make it again with the receiver's entry,
                // which fails as a whole if any other entry is there. The new entry is then alone, so it holds the
                // lock, and the transaction's zxid (the container's czxid, which the entry shares) is its token.
                try {
                    List<TxResult> done = transact(List.of(
                            TxOp.delete(held.path()),
                            TxOp.delete(lockPath),
                            TxOp.create(lockPath, key.name().getBytes(StandardCharsets.UTF_8), CreateMode.CONTAINER),
                            TxOp.create(entryPath, ownerData, CreateMode.EPHEMERAL_SEQUENTIAL)));
                    entries.remove(fromId, held);
                    String path = done.get(3).path();
                    Stat stat = done.get(2).stat();
                    if (stat == null || stat.getCzxid() == 0) {
                        stat = curator.checkExists().forPath(path);
                        if (stat == null) {
                            throw new IllegalStateException("the entry " + path + " handed the lock vanished");
                        }
                    }
                    Entry granted = new Entry(path, stat.getCzxid(), held.session(), epochAtStart, true, true);
                    entries.put(toId, granted);
                    dropIfClosed(toId, granted);
                    return HandOff.granted(granted.token(), SPARE);
                } catch (KeeperException.NotEmptyException e) {
                    // other owners are queued: the receiver joins them
                }
            }
            List<TxResult> done = transact(List.of(
                    TxOp.delete(held.path()), TxOp.create(entryPath, ownerData, CreateMode.EPHEMERAL_SEQUENTIAL)));
            entries.remove(fromId, held);
            String path = done.get(1).path();
            Stat stat = done.get(1).stat();
            if (stat == null || stat.getCzxid() == 0) {
                stat = curator.checkExists().forPath(path); // a server without stats in multi answers
                if (stat == null) {
                    throw new IllegalStateException("the entry " + path + " handed the lock vanished");
                }
            }
            Entry queued = new Entry(path, stat.getCzxid(), held.session(), epochAtStart, false, false);
            entries.put(toId, queued);
            dropIfClosed(toId, queued);
            String tag = ZkNames.ownerTag(to.value());
            Boolean heads = sub == null ? null : sub.heads(ZKPaths.getNodeFromPath(path), null, tag, MIRROR_WAIT_NANOS);
            if (heads == null) {
                List<ZkNames.Entry> queueNow = children(lockPath);
                heads = !queueNow.isEmpty()
                        && ZKPaths.makePath(lockPath, queueNow.get(0).node()).equals(path);
            }
            return grantIfFirst(toId, queued, heads, epochAtStart);
        } catch (KeeperException.NoNodeException
                | KeeperException.ConnectionLossException
                | KeeperException.OperationTimeoutException e) {
            // the hold's entry is gone, or the answer was lost (perhaps after a retry found the first try applied)
            try {
                return recoverHandOff(fromId, held, toId, lockPath, guid, epochAtStart, e);
            } catch (Exception failed) {
                forget(fromId, held);
                throw failed;
            }
        } catch (Exception e) {
            forget(fromId, held);
            throw e;
        }
    }

    /**
     * After a failed hand-off the engine takes the hold as ended: make sure its entry goes (the engine gives the
     * receiver's possible entry back itself, by abandon or by its next attempt, which finds it by owner tag).
     */
    private void forget(EntryId fromId, Entry held) {
        entries.remove(fromId, held);
        try {
            deleteInBackground(held.path());
        } catch (Exception e) {
            log.warn("distlock: could not delete {} after a failed hand-off", held.path(), e);
        }
    }

    /** The receiver is queued already: ending the hold may make it the head. */
    private HandOff handOffToQueued(
            EntryId fromId, Entry held, EntryId toId, Entry waiting, String lockPath, long epochAtStart)
            throws Exception {
        try {
            curator.delete().guaranteed().forPath(held.path());
        } catch (KeeperException.NoNodeException e) {
            entries.remove(fromId, held);
            return HandOff.notHeld();
        }
        entries.remove(fromId, held);
        String node = ZKPaths.getNodeFromPath(waiting.path());
        String tag = ZkNames.ownerTag(toId.owner());
        Sub sub = subscriptionsByPath.get(lockPath);
        Boolean heads =
                sub == null ? null : sub.heads(node, ZKPaths.getNodeFromPath(held.path()), tag, MIRROR_WAIT_NANOS);
        if (heads == null) {
            List<ZkNames.Entry> queueNow = children(lockPath);
            heads = !queueNow.isEmpty() && queueNow.get(0).node().equals(node);
        }
        return grantIfFirst(toId, waiting, heads, epochAtStart);
    }

    private HandOff grantIfFirst(EntryId toId, Entry entry, boolean heads, long epochAtStart) {
        if (!heads) {
            return HandOff.queued(); // behind owners of other clients; the entry stays for tryAcquire or abandon
        }
        Entry granted = entry.granted(epochAtStart, false);
        entries.put(toId, granted);
        return HandOff.granted(granted.token(), SPARE);
    }

    /**
     * A hand-off's transaction failed with a lost answer or a missing node: whether it was applied (by this try or by
     * a retry Curator made) shows in the receiver's protected entry.
     */
    private HandOff recoverHandOff(
            EntryId fromId,
            Entry held,
            EntryId toId,
            String lockPath,
            String guid,
            long epochAtStart,
            KeeperException failure)
            throws Exception {
        List<ZkNames.Entry> queueNow = children(lockPath);
        ZkNames.Entry created = null;
        boolean heldThere = false;
        String heldNode = ZKPaths.getNodeFromPath(held.path());
        for (ZkNames.Entry e : queueNow) {
            if (e.node().startsWith(PROTECTED_MARK + guid + "-")) {
                created = e;
            }
            heldThere |= e.node().equals(heldNode);
        }
        if (created == null) {
            if (!heldThere) {
                entries.remove(fromId, held);
                return HandOff.notHeld(); // the hold's entry was gone: nothing was changed
            }
            // not applied and the hold's entry is still there: the answer was lost; the connection trouble ends the
            // hold anyway (presumed lost), so do not leave its entry behind
            entries.remove(fromId, held);
            deleteGuaranteed(held.path());
            throw failure;
        }
        // applied: the hold's entry went in the same transaction
        entries.remove(fromId, held);
        String path = ZKPaths.makePath(lockPath, created.node());
        Stat stat = curator.checkExists().forPath(path);
        if (stat == null) {
            throw new IllegalStateException("the entry " + path + " handed the lock vanished", failure);
        }
        Entry entry = new Entry(path, stat.getCzxid(), stat.getEphemeralOwner(), epochAtStart, false, false);
        entries.put(toId, entry);
        dropIfClosed(toId, entry);
        return grantIfFirst(toId, entry, queueNow.get(0).equals(created), epochAtStart);
    }

    /** One operation of a transaction: a create when {@code mode} is set, else a delete of any version. */
    private record TxOp(String path, byte[] data, @Nullable CreateMode mode) {
        static TxOp delete(String path) {
            return new TxOp(path, new byte[0], null);
        }

        static TxOp create(String path, byte[] data, CreateMode mode) {
            return new TxOp(path, data, mode);
        }
    }

    /** The outcome of one operation: the created path (without namespace), and its Stat when the server sent it. */
    private record TxResult(String path, @Nullable Stat stat) {}

    /**
     * Runs the operations as one ZooKeeper transaction: directly on the ZooKeeper handle when the client is connected
     * and the ACLs are known or not needed (deletes only): one try, creates answered with their Stat. Else through
     * Curator's transaction: retried after connection trouble, creates answered without Stat.
     */
    private List<TxResult> transact(List<TxOp> ops) throws Exception {
        ACLProvider acls = rawAcls;
        List<TxResult> out = new ArrayList<>(ops.size());
        boolean deletesOnly = true;
        for (TxOp op : ops) {
            deletesOnly &= op.mode() == null;
        }
        // deletes need no ACLs, so a Curator client given by the user takes the direct path for them too
        if ((acls != null || deletesOnly) && curator.getZookeeperClient().isConnected()) {
            ZooKeeper zk = curator.getZookeeperClient().getZooKeeper();
            String namespace = curator.getNamespace();
            List<Op> raw = new ArrayList<>(ops.size());
            for (TxOp op : ops) {
                String path = ZKPaths.fixForNamespace(namespace, op.path());
                CreateMode mode = op.mode();
                raw.add(
                        mode == null
                                ? Op.delete(path, -1)
                                : Op.create(
                                        path,
                                        op.data(),
                                        CreateOptions.newBuilder(
                                                        Objects.requireNonNull(acls, "acls")
                                                                .getAclForPath(op.path()),
                                                        mode)
                                                .build()));
            }
            List<OpResult> results = zk.multi(raw);
            for (int i = 0; i < ops.size(); i++) {
                if (results.get(i) instanceof OpResult.CreateResult created) {
                    String parent = ZKPaths.getPathAndNode(ops.get(i).path()).getPath();
                    out.add(new TxResult(
                            ZKPaths.makePath(parent, ZKPaths.getNodeFromPath(created.getPath())), created.getStat()));
                } else {
                    out.add(new TxResult(ops.get(i).path(), null));
                }
            }
            return out;
        }
        List<CuratorOp> curatorOps = new ArrayList<>(ops.size());
        for (TxOp op : ops) {
            CreateMode mode = op.mode();
            curatorOps.add(
                    mode == null
                            ? curator.transactionOp().delete().forPath(op.path())
                            : curator.transactionOp().create().withMode(mode).forPath(op.path(), op.data()));
        }
        for (CuratorTransactionResult r : curator.transaction().forOperations(curatorOps)) {
            String path = r.getResultPath();
            out.add(new TxResult(path != null ? path : r.getForPath(), r.getResultStat()));
        }
        return out;
    }

    @Override
    public Set<HeldLock> renew(Collection<HeldLock> holds, Duration lease) {
        return call("renew", () -> {
            Set<HeldLock> gone = new HashSet<>();
            long epochNow = epoch.get();
            if (!curator.getZookeeperClient().isConnected()) {
                gone.addAll(holds); // a suspended connection cannot vouch for any hold
                return gone;
            }
            List<HeldLock> toCheck = new ArrayList<>();
            List<Entry> checked = new ArrayList<>();
            for (HeldLock h : holds) {
                Entry e = entries.get(new EntryId(h.key().name(), h.owner().value()));
                if (e == null || e.epoch() != epochNow || e.token() != h.fencingToken()) {
                    gone.add(h);
                } else {
                    toCheck.add(h);
                    checked.add(e);
                }
            }
            if (toCheck.isEmpty()) {
                // decided without the handle: Curator makes its callers wait for it while it resets the session, which
                // on Expired includes closing the old handle, a round trip
                return gone;
            }
            // an entry of an earlier session fails the read's check of its ephemeral owner
            ZooKeeper zk = curator.getZookeeperClient().getZooKeeper();
            long session = zk.getSessionId();
            String namespace = curator.getNamespace();
            for (int from = 0; from < toCheck.size(); from += MAX_OPS_PER_MULTI) {
                int to = Math.min(toCheck.size(), from + MAX_OPS_PER_MULTI);
                List<Op> reads = new ArrayList<>(to - from);
                for (int i = from; i < to; i++) {
                    reads.add(Op.getData(
                            ZKPaths.fixForNamespace(namespace, checked.get(i).path())));
                }
                // one round trip for the batch: a read-only multi answers each read on its own
                List<OpResult> results = zk.multi(reads);
                for (int i = from; i < to; i++) {
                    OpResult r = results.get(i - from);
                    Entry e = checked.get(i);
                    boolean alive = r instanceof OpResult.GetDataResult data
                            && data.getStat().getCzxid() == e.czxid()
                            && data.getStat().getEphemeralOwner() == session;
                    if (!alive) {
                        gone.add(toCheck.get(i));
                    }
                }
            }
            return gone;
        });
    }

    @Override
    public Subscription subscribe(LockKey key, Runnable wakeUp) {
        Sub sub = new Sub(lockPath(key), wakeUp);
        subscriptions.add(sub);
        subscriptionsByPath.put(sub.path, sub);
        try {
            sub.register();
        } catch (KeeperException.ConnectionLossException
                | KeeperException.SessionExpiredException
                | KeeperException.OperationTimeoutException e) {
            // registered by afterReconnect, which also wakes it: a change made meanwhile is not missed, and the
            // engine's re-check after subscribing meets the same connection trouble and handles it
            log.debug("distlock: watch on {} deferred until the reconnect", sub.path, e);
        } catch (Exception e) {
            subscriptions.remove(sub);
            subscriptionsByPath.remove(sub.path, sub);
            run("subscribe", () -> {
                throw e;
            });
        }
        return sub;
    }

    @Override
    public Optional<LockInfo> inspect(LockKey key) {
        return call("inspect", () -> Optional.ofNullable(head(key.name(), lockPath(key)))
                .map(Head::info));
    }

    @Override
    public List<LockInfo> list(String prefix, int limit) {
        return call("list", () -> {
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

    @Override
    public Optional<LockInfo> forceRelease(LockKey key) {
        return call("forceRelease", () -> {
            String lockPath = lockPath(key);
            for (int tries = 0; tries < MAX_TRIES; tries++) {
                Head head = head(key.name(), lockPath);
                if (head == null) {
                    return Optional.<LockInfo>empty();
                }
                try {
                    curator.delete().withVersion(head.version()).forPath(head.path());
                    return Optional.of(head.info());
                } catch (KeeperException.NoNodeException | KeeperException.BadVersionException e) {
                    // released or re-queued meanwhile: look again
                }
            }
            throw new IllegalStateException("lock node " + lockPath + " kept changing under " + MAX_TRIES + " tries");
        });
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        curator.getConnectionStateListenable().removeListener(stateListener);
        if (hearsThroughCurator) {
            curator.getCuratorListenable().removeListener(eventListener);
        }
        for (Sub sub : List.copyOf(subscriptions)) {
            sub.close();
        }
        if (!ownsCurator) {
            // the session outlives us: its ephemeral entries would too
            for (Entry e : List.copyOf(entries.values())) {
                try {
                    curator.delete().guaranteed().inBackground().forPath(e.path());
                } catch (Exception ex) {
                    log.debug("distlock: could not delete {} on close", e.path(), ex);
                }
            }
        }
        entries.clear();
        background.shutdownNow();
        if (ownsCurator) {
            curator.close();
        }
    }

    @Override
    public String toString() {
        return "ZooKeeperLockStore[" + curator.getZookeeperClient().getCurrentConnectionString() + locksPath + "]";
    }

    // ---------------------------------------------------------------- test and operator helpers

    /** Tests only: see {@link CreateHook}. */
    void createHook(CreateHook hook) {
        this.createHook = Objects.requireNonNull(hook, "hook");
    }

    /** The path of the lock node of {@code name}. */
    String lockPath(LockKey key) {
        return ZKPaths.makePath(locksPath, ZkNames.lockNode(key.name()));
    }

    private record Head(String name, String path, String owner, long czxid, int version, int waiters) {
        LockInfo info() {
            return new LockInfo(name, owner, Duration.ZERO, tokenOf(czxid), waiters);
        }
    }

    /** The holder's entry of a lock, or null if nobody holds it. */
    private @Nullable Head head(String name, String lockPath) throws Exception {
        for (int tries = 0; tries < MAX_TRIES; tries++) {
            List<ZkNames.Entry> queue = children(lockPath);
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
        throw new IllegalStateException("lock node " + lockPath + " kept changing under " + MAX_TRIES + " tries");
    }

    // ---------------------------------------------------------------- connection state

    @Override
    public void onPossibleLoss(Runnable checkNow) {
        this.checkNow = checkNow;
    }

    private void stateChanged(CuratorFramework client, ConnectionState state) {
        switch (state) {
            case SUSPENDED, LOST -> {
                // as a rule heard already from the event thread; once connected again, only a check (see Hearing of
                // trouble): Curator's reset() of a connected client (a changed connect string, a reset by the
                // application) reports LOST after the new session is up
                if (!hearsEvents || !curator.getZookeeperClient().isConnected()) {
                    connectionTrouble();
                } else {
                    checkNow.run();
                }
            }
            case RECONNECTED -> submit(this::afterReconnect);
            default -> {}
        }
    }

    /** A connection event of the ZooKeeper handle, on its event thread; see Hearing of trouble in the overview. */
    private void connectionEvent(WatchedEvent event) {
        Watcher.Event.KeeperState state = event.getState();
        if (event.getType() == Watcher.Event.EventType.None
                && (state == Watcher.Event.KeeperState.Disconnected || state == Watcher.Event.KeeperState.Expired)) {
            connectionTrouble();
        }
    }

    /**
     * Every hold is presumed lost from now on. A second report of the same trouble, while still disconnected, costs
     * nothing: no hold is granted meanwhile, and an attempt that spans the trouble gives a hold presumed lost anyway.
     * Often runs on ZooKeeper's event thread, so nothing here waits: checkNow only schedules the engine's check.
     */
    private void connectionTrouble() {
        handedOff.clear(); // their events may never come; one spurious wake-up at worst
        // the mirrors before the epoch: an attempt that reads the new epoch must not be granted from a mirror of the
        // old connection (its hold would carry the new epoch and never be presumed lost)
        subscriptions.forEach(Sub::invalidate);
        epoch.incrementAndGet();
        checkNow.run(); // renew now reports every hold of the old epoch gone, without a round trip
    }

    /**
     * Makes the ZooKeeper handles of a Curator client this library builds, each with a watcher that hands connection
     * events to the store before Curator's own watcher gets them: Curator answers Expired by closing the handle, which
     * ends the session on the server at once (so a waiter may be granted the lock) if the connection is still up, and
     * only then passes the event on.
     */
    static final class HandleFactory implements ZookeeperFactory {
        private static final ZookeeperFactory DEFAULT = new DefaultZookeeperFactory();
        /** Set once the store exists; the Curator client is started after that. */
        private volatile @Nullable ZooKeeperLockStore store;

        @Override
        public ZooKeeper newZooKeeper(String connectString, int sessionTimeout, Watcher curators, boolean canBeReadOnly)
                throws Exception {
            return DEFAULT.newZooKeeper(connectString, sessionTimeout, storeFirst(curators), canBeReadOnly);
        }

        @Override
        public ZooKeeper newZooKeeper(
                String connectString,
                int sessionTimeout,
                Watcher curators,
                boolean canBeReadOnly,
                @Nullable ZKClientConfig config)
                throws Exception {
            // the default would build a handle with Curator's watcher alone when a config is given
            return DEFAULT.newZooKeeper(connectString, sessionTimeout, storeFirst(curators), canBeReadOnly, config);
        }

        /** Curator's watcher, with the store told of each event first. */
        private Watcher storeFirst(Watcher curators) {
            return event -> {
                ZooKeeperLockStore s = store;
                try {
                    if (s != null) {
                        s.connectionEvent(event);
                    }
                } finally {
                    curators.process(event);
                }
            };
        }
    }

    private void afterReconnect() {
        for (Sub sub : List.copyOf(subscriptions)) {
            try {
                // persistent watches do not survive a new session (adding one twice is harmless), and events may
                // have been missed while disconnected: watch again and read a new snapshot
                sub.register();
            } catch (Exception e) {
                log.warn("distlock: could not watch {} again after a reconnect", sub.path, e);
            }
            sub.wake(); // changes while disconnected may have gone unseen
        }
        for (EntryId id : List.copyOf(uncertain)) {
            try {
                deleteEntriesOf(new LockKey(id.name()), new OwnerId(id.owner()), null);
                uncertain.remove(id);
            } catch (Exception e) {
                log.warn("distlock: could not clean up after '{}' for {}", id.name(), id.owner(), e);
            }
        }
    }

    private void submit(Runnable task) {
        if (closed) {
            return;
        }
        try {
            background.execute(task);
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    /**
     * One persistent recursive watch on a lock node. It wakes the engine when an entry is deleted, and mirrors the
     * queue: a snapshot read through the same ordered event stream as the watch events, then every creation and
     * deletion applied in order. While valid, the mirror is the queue as of the last event seen, so "my entry is
     * first" read from it is a fact (entries leave the head only by deletion), and tryAcquire needs no round trip.
     * It turns invalid on any connection trouble, and is read again after the reconnect.
     */
    private final class Sub implements Subscription, Watcher {
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

        Sub(String path, Runnable wakeUp) {
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
                return; // the state listener asks for a new snapshot after the reconnect
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

        /** Whether the mirror knows the lock node to exist (with entries in it or not). */
        boolean knownToExist() {
            mutex.lock();
            try {
                return queue != null && exists;
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
            subscriptionsByPath.remove(path, this);
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

    private static final Comparator<ZkNames.Entry> QUEUE_ORDER =
            Comparator.comparingLong(ZkNames.Entry::sequence).thenComparing(ZkNames.Entry::node);

    // ---------------------------------------------------------------- helpers

    /** The queue of a lock node in grant order; empty when the lock node does not exist. */
    private List<ZkNames.Entry> children(String lockPath) throws Exception {
        List<String> nodes;
        try {
            nodes = curator.getChildren().forPath(lockPath);
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
        List<ZkNames.Entry> queue = new ArrayList<>(nodes.size());
        for (String node : nodes) {
            ZkNames.Entry e = ZkNames.entry(node);
            if (e != null) {
                queue.add(e);
            }
        }
        Collections.sort(queue);
        return queue;
    }

    /** Deletes {@code path} now if connected; Curator keeps retrying after a connection loss. */
    private void deleteGuaranteed(String path) throws Exception {
        if (!curator.getZookeeperClient().isConnected()) {
            // do not block the caller (often the watchdog) for a connection timeout; Curator retries until done
            curator.delete().guaranteed().inBackground().forPath(path);
            return;
        }
        try {
            curator.delete().guaranteed().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            // already gone
        }
    }

    private void deleteInBackground(String path) throws Exception {
        curator.delete().guaranteed().inBackground().forPath(path);
    }

    private long sessionId() throws Exception {
        return curator.getZookeeperClient().getZooKeeper().getSessionId();
    }

    private interface ZkCall<T> {
        T run() throws Exception;
    }

    private interface ZkAction {
        void run() throws Exception;
    }

    private static void run(String operation, ZkAction action) {
        var unused = call(operation, () -> {
            action.run();
            return Boolean.TRUE;
        });
    }

    private static <T> T call(String operation, ZkCall<T> call) {
        try {
            return call.run();
        } catch (RuntimeException e) {
            throw e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DistributedLockException("ZooKeeper " + operation + " was interrupted", e);
        } catch (Exception e) {
            throw new DistributedLockException("ZooKeeper " + operation + " failed: " + e, e);
        }
    }
}
