package io.distlock.zookeeper;

import io.distlock.LockInfo;
import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.ClaimAdmin;
import io.distlock.spi.ClaimStore;
import io.distlock.spi.CounterStore;
import io.distlock.spi.HandOff;
import io.distlock.spi.HandsOff;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import io.distlock.spi.QueueOrdered;
import io.distlock.spi.ReportsLoss;
import io.distlock.spi.SessionHolds;
import io.distlock.spi.Subscription;
import io.distlock.spi.WakesOwners;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.ACLProvider;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * Layout. Every lock name has a lock node <root>/locks/<ZkNames.lockNode(name)>, a CONTAINER node (the server reaps it
 * once it is empty) whose data is the full lock name. Its children are the queue: one EPHEMERAL_SEQUENTIAL entry per
 * owner that holds or waits, named after the owner (ZkNames.entryPrefix) so that an owner finds its own entry in a
 * getChildren answer, with the owner id as data. The entry with the lowest sequence holds the lock; the others wait in
 * sequence order, so the store's queue is fair by construction and the store is QueueOrdered (a non-fair lock's local
 * waiters line up in the engine behind the first one, which alone queues here; see ZkHandOff).
 *
 * Fencing. The token of a grant is derived from the czxid of the owner's entry: the zxid of the transaction that
 * created it. Zxids are totally ordered across the ensemble and survive restarts that keep data; entries of one lock
 * node are granted in creation order, and a lock node is deleted only when empty, so every grant's czxid is greater
 * than every earlier grant's of that name. The sequence suffix is not used: it restarts when the container is reaped.
 * The token is that czxid times SPARE_TOKEN_CAP + 1 (tokenOf), so the SPARE_TOKEN_CAP tokens after it stay below every
 * later entry's token, whose czxid is at least one more.
 *
 * Spare tokens. How many of those tokens a grant reserves for the client's local successions (a thread of the client
 * takes the hold over from another, without a round trip, while the entry stays) is the engine's policy: the claim
 * asks, and the store reserves that many up to SPARE_TOKEN_CAP, the most the arithmetic allows, and says how many in
 * its answer (Attempt.Acquired, HandOff.Granted). A hand-off to a queued receiver reserves what the hand-off's claim
 * asks.
 *
 * Leases. A hold lasts as long as the session (SessionHolds): the lease a claim carries is not kept in the tree, and a
 * fixed lease is ended by the engine's hold timer through abandonHold.
 *
 * Other kinds. Read-write locks and semaphores queue the same way under their own name nodes <root>/sync/<node>, with
 * entries whose names carry the mode or the permits (ZkClaimQueue, ZkClaims); a count-down latch is the child "latch"
 * of that node (ZkLatches). A claim's kind picks the part; a subscription goes to the name node when this client has
 * an entry there (the engine subscribes after a busy answer, whose attempt made one), else to the lock node.
 *
 * Parts. This class is the coordinator: it builds the parts, hands each call of the SPI (ClaimStore, ClaimAdmin,
 * CounterStore and the abilities) to the one that does it, and closes them in order. All share ZkOps (the Curator
 * client, paths, transactions, error translation); the lock parts share OwnEntries (what this client knows of its own
 * lock entries, checked against the tree before it is relied on):
 *   ZkSession       connection watching: the epoch of connection trouble that ends holds, and the engine's checkNow
 *   ZkQueueMirrors  the waiters' persistent watches, the wake-ups, and the queue mirrors that spare round trips
 *   ZkAcquirer      tryAcquire: the one-round-trip create, the protected create, and the queue's verdict
 *   ZkReleaser      release, abandon and abandonHold
 *   ZkHandOff       handOff to a local waiter in one multi
 *   ZkLeases        renew: the check that holds still exist in the current session
 *   ZkAdmin         inspect, list, forceRelease and available
 *   ZkClaims        read-write lock and semaphore steps: tryAcquire, release, abandon, abandonHold, renew
 *   ZkClaimWatches  the one-shot watches of their waiters, on the entries they wait for, and which owners a deletion
 *                   wakes (WakesOwners)
 *   ZkClaimAdmin    their inspect, list, forceRelease and available (latches' too)
 *   ZkLatches       count-down latches: counter node, versioned updates, zero watch, expiry
 *
 * Concurrency. Every part is thread-safe: OwnEntries is a concurrent map, a mirror has its own lock, and the epoch is
 * atomic. The ZooKeeper handle's event thread runs watch events and connection events, and never waits on a lock the
 * callers hold across a round trip. A background thread runs the work after a reconnect.
 *
 * Closing. close stops hearing the Curator client, closes the subscriptions, forgets the entries (deleting them in
 * the background when the Curator client, and with it the session, is not the store's), ends the background thread,
 * and closes the Curator client if the store owns it. A call that meets a closed store fails with
 * IllegalStateException; an entry created while close runs is deleted by its creator (OwnEntries.dropIfClosed).
 */
/** A {@link ClaimStore} over ZooKeeper through Curator; see the overview comment in the source. */
final class ZooKeeperLockStore
        implements ClaimStore,
                ClaimAdmin,
                CounterStore,
                QueueOrdered,
                SessionHolds,
                HandsOff,
                ReportsLoss,
                WakesOwners {
    /** How many times a step reads the queue again when the tree changes under it. */
    static final int MAX_TRIES = 32;
    /** The most spare tokens a grant reserves (see Fencing); a power of two less one. */
    static final int SPARE_TOKEN_CAP = 15;
    /** How soon to try again after the lock node kept changing under one attempt. */
    static final Duration CHURN_RETRY = Duration.ofMillis(10);

    private static final Set<Claim.Kind> KINDS =
            Set.of(Claim.Kind.LOCK, Claim.Kind.READ_WRITE_LOCK, Claim.Kind.SEMAPHORE);

    private final CuratorFramework curator;
    private final boolean ownsCurator;
    private final ZkOps ops;
    private final OwnEntries entries;
    private final ZkQueueMirrors mirrors;
    private final ZkSession session;
    private final ZkAcquirer acquirer;
    private final ZkReleaser releaser;
    private final ZkHandOff handOff;
    private final ZkLeases leases;
    private final ZkAdmin admin;
    private final ZkClaimWatches claimWatches;
    private final ZkClaims claims;
    private final ZkLatches latches;
    private final ZkClaimAdmin claimAdmin;

    /**
     * The fencing token of a grant of the entry created at {@code czxid}: {@code czxid * (SPARE_TOKEN_CAP + 1)}, so
     * the SPARE_TOKEN_CAP tokens after it, which the client may give to its own threads that take the hold over
     * (successions), stay below the token of any entry created later.
     */
    static long tokenOf(long czxid) {
        // a zxid is epoch << 32 | counter: this overflows only after 2^27 leader elections
        return Math.multiplyExact(czxid, SPARE_TOKEN_CAP + 1);
    }

    /** The spare tokens a grant for {@code claim} reserves: what it asks, up to the cap. */
    private static int spareTokens(Claim claim) {
        return Math.min(claim.spareTokens(), SPARE_TOKEN_CAP);
    }

    /**
     * @param rawAcls the ACLs the Curator client applies, when known (a client this library built); enables the
     *     one-round-trip acquire, which talks to ZooKeeper directly
     * @param retryWithin the longest wait a busy answer asks for: it bounds the cost of a lost wake-up
     * @param handles the factory that made the Curator client's ZooKeeper handles, if this library built it: the
     *     store then hears connection events before Curator does
     */
    ZooKeeperLockStore(
            CuratorFramework curator,
            boolean ownsCurator,
            @Nullable ACLProvider rawAcls,
            String rootPath,
            Duration retryWithin,
            ZkSession.@Nullable HandleFactory handles) {
        this.ops = new ZkOps(curator, rawAcls, rootPath);
        this.curator = curator;
        this.ownsCurator = ownsCurator;
        this.entries = new OwnEntries(ops);
        this.mirrors = new ZkQueueMirrors(ops);
        this.session = new ZkSession(ops, mirrors, entries, handles);
        this.acquirer = new ZkAcquirer(ops, entries, session, mirrors, retryWithin);
        this.releaser = new ZkReleaser(ops, entries, session, mirrors);
        this.handOff = new ZkHandOff(ops, entries, session, mirrors);
        this.leases = new ZkLeases(ops, entries, session);
        this.admin = new ZkAdmin(ops);
        this.claimWatches = new ZkClaimWatches(ops);
        this.claims = new ZkClaims(ops, session, claimWatches, retryWithin);
        this.latches = new ZkLatches(ops, rootPath);
        this.claimAdmin = new ZkClaimAdmin(ops, latches);
    }

    /** Creates the root path if needed. */
    void start() {
        ZkOps.run("create root " + ops.locksPath(), ops::ensureLocksPath);
        ZkOps.run("create root " + ops.syncRoot(), () -> {
            try {
                var unused = curator.create().creatingParentsIfNeeded().forPath(ops.syncRoot());
            } catch (org.apache.zookeeper.KeeperException.NodeExistsException e) {
                // someone else made it
            }
        });
    }

    @Override
    public Set<Claim.Kind> kinds() {
        return KINDS;
    }

    @Override
    public Attempt tryAcquire(Claim claim, boolean queue) {
        if (claim.kind() != Claim.Kind.LOCK) {
            return claims.tryAcquire(claim, queue);
        }
        return acquirer.tryAcquire(claim.key(), claim.owner(), spareTokens(claim), queue);
    }

    @Override
    public void abandon(Claim claim) {
        if (claim.kind() != Claim.Kind.LOCK) {
            claims.abandon(claim);
            return;
        }
        releaser.abandon(claim.key(), claim.owner());
    }

    @Override
    public void abandonHold(HeldClaim hold) {
        if (hold.kind() != Claim.Kind.LOCK) {
            claims.abandonHold(hold);
            return;
        }
        releaser.abandonHold(hold);
    }

    @Override
    public boolean release(HeldClaim hold) {
        if (hold.kind() != Claim.Kind.LOCK) {
            return claims.release(hold);
        }
        return releaser.release(hold.key(), hold.owner());
    }

    @Override
    public HandOff handOff(Claim to, OwnerId from) {
        return handOff.handOff(to.key(), from, to.owner(), spareTokens(to));
    }

    @Override
    public Set<HeldClaim> renew(Collection<HeldClaim> holds, Duration lease) {
        List<HeldClaim> lockHolds = new ArrayList<>(holds.size());
        List<HeldClaim> claimHolds = new ArrayList<>();
        for (HeldClaim h : holds) {
            (h.kind() == Claim.Kind.LOCK ? lockHolds : claimHolds).add(h);
        }
        if (claimHolds.isEmpty()) {
            return leases.renew(lockHolds, lease);
        }
        Set<HeldClaim> gone = new HashSet<>(claims.renew(claimHolds));
        if (!lockHolds.isEmpty()) {
            gone.addAll(leases.renew(lockHolds, lease));
        }
        return gone;
    }

    @Override
    public int available(LockKey key, Claim.Kind kind, int size) {
        if (kind != Claim.Kind.LOCK) {
            return claimAdmin.available(key, kind, size);
        }
        return admin.available(key);
    }

    /**
     * Subscribes to the name node of a read-write lock or semaphore when this client has an entry there (the engine
     * subscribes after a busy answer, whose attempt made one), else to the lock node.
     */
    @Override
    public Subscription subscribe(LockKey key, Runnable wakeUp) {
        if (claims.hasEntry(key.name())) {
            return claimWatches.subscribe(ops.syncPath(key), owners -> wakeUp.run());
        }
        return mirrors.subscribe(ops.lockPath(key), wakeUp);
    }

    /**
     * As {@link #subscribe(LockKey, Runnable)}; on a name node each wake-up names the owners whose wait the deletion
     * ended (ZkClaimWatches), on a lock node every owner.
     */
    @Override
    public Subscription subscribe(LockKey key, Consumer<Predicate<OwnerId>> wakeUp) {
        if (claims.hasEntry(key.name())) {
            return claimWatches.subscribe(ops.syncPath(key), wakeUp);
        }
        return mirrors.subscribe(ops.lockPath(key), () -> wakeUp.accept(owner -> true));
    }

    @Override
    public boolean trySetCount(LockKey key, long count, Duration expiry) {
        return latches.trySetCount(key, count, expiry);
    }

    @Override
    public long countDown(LockKey key, String callId, Duration expiry) {
        return latches.countDown(key, callId, expiry);
    }

    @Override
    public long count(LockKey key) {
        return latches.count(key);
    }

    @Override
    public Subscription watchZero(LockKey key, Runnable wakeUp) {
        return latches.watchZero(key, wakeUp);
    }

    @Override
    public void onPossibleLoss(Runnable checkNow) {
        session.onPossibleLoss(checkNow);
    }

    @Override
    public Optional<LockInfo> inspect(LockKey key) {
        Optional<LockInfo> lock = admin.inspect(key);
        return lock.isPresent() ? lock : claimAdmin.inspect(key);
    }

    @Override
    public List<LockInfo> list(String prefix, int limit) {
        List<LockInfo> all = new ArrayList<>(admin.list(prefix, limit));
        all.addAll(claimAdmin.list(prefix, limit));
        all.sort(java.util.Comparator.comparing(LockInfo::name));
        return all.size() > limit ? List.copyOf(all.subList(0, limit)) : all;
    }

    @Override
    public Optional<LockInfo> forceRelease(LockKey key) {
        Optional<LockInfo> lock = admin.forceRelease(key);
        return lock.isPresent() ? lock : claimAdmin.forceRelease(key, null);
    }

    @Override
    public Optional<LockInfo> forceRelease(LockKey key, OwnerId owner) {
        Optional<LockInfo> lock = admin.forceRelease(key, owner);
        return lock.isPresent() ? lock : claimAdmin.forceRelease(key, owner);
    }

    @Override
    public void close() {
        if (!ops.markClosed()) {
            return;
        }
        session.stopListening();
        mirrors.closeAll();
        claimWatches.closeAll();
        entries.close(!ownsCurator);
        claims.close(!ownsCurator);
        latches.close(); // a session that outlives the store would keep its ephemeral entries
        session.stopBackground();
        if (ownsCurator) {
            curator.close();
        }
    }

    @Override
    public String toString() {
        return "ZooKeeperLockStore[" + curator.getZookeeperClient().getCurrentConnectionString() + ops.locksPath()
                + "]";
    }

    /** Tests only: see {@link ZkAcquirer.CreateHook}. */
    void createHook(ZkAcquirer.CreateHook hook) {
        acquirer.createHook(hook);
    }

    /** The path of the lock node of {@code key}. */
    String lockPath(LockKey key) {
        return ops.lockPath(key);
    }
}
