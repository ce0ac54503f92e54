package io.distlock.zookeeper;

import io.distlock.LockInfo;
import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.ClaimAdmin;
import io.distlock.spi.ClaimStore;
import io.distlock.spi.HandOff;
import io.distlock.spi.HandsOff;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import io.distlock.spi.QueueOrdered;
import io.distlock.spi.ReportsLoss;
import io.distlock.spi.SessionHolds;
import io.distlock.spi.Subscription;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
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
 * Parts. This class is the coordinator: it builds the parts, hands each call of the SPI (ClaimStore, ClaimAdmin and
 * the abilities) to the one that does it, and closes them in order. It keeps locks only (kinds). All share ZkOps (the Curator client, paths, transactions, error translation) and OwnEntries (what
 * this client knows of its own entries, checked against the tree before it is relied on):
 *   ZkSession       connection watching: the epoch of connection trouble that ends holds, and the engine's checkNow
 *   ZkQueueMirrors  the waiters' persistent watches, the wake-ups, and the queue mirrors that spare round trips
 *   ZkAcquirer      tryAcquire: the one-round-trip create, the protected create, and the queue's verdict
 *   ZkReleaser      release, abandon and abandonHold
 *   ZkHandOff       handOff to a local waiter in one multi
 *   ZkLeases        renew: the check that holds still exist in the current session
 *   ZkAdmin         inspect, list, forceRelease and available
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
/** A {@link ClaimStore} of locks over ZooKeeper through Curator; see the overview comment in the source. */
final class ZooKeeperLockStore implements ClaimStore, ClaimAdmin, QueueOrdered, SessionHolds, HandsOff, ReportsLoss {
    /** How many times a step reads the queue again when the tree changes under it. */
    static final int MAX_TRIES = 32;
    /** The most spare tokens a grant reserves (see Fencing); a power of two less one. */
    static final int SPARE_TOKEN_CAP = 15;
    /** How soon to try again after the lock node kept changing under one attempt. */
    static final Duration CHURN_RETRY = Duration.ofMillis(10);

    private static final Set<Claim.Kind> KINDS = Set.of(Claim.Kind.LOCK);

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
    }

    /** Creates the root path if needed. */
    void start() {
        ZkOps.run("create root " + ops.locksPath(), ops::ensureLocksPath);
    }

    @Override
    public Set<Claim.Kind> kinds() {
        return KINDS;
    }

    @Override
    public Attempt tryAcquire(Claim claim, boolean queue) {
        return acquirer.tryAcquire(claim.key(), claim.owner(), spareTokens(claim), queue);
    }

    @Override
    public void abandon(Claim claim) {
        releaser.abandon(claim.key(), claim.owner());
    }

    @Override
    public void abandonHold(HeldClaim hold) {
        releaser.abandonHold(hold);
    }

    @Override
    public boolean release(HeldClaim hold) {
        return releaser.release(hold.key(), hold.owner());
    }

    @Override
    public HandOff handOff(Claim to, OwnerId from) {
        return handOff.handOff(to.key(), from, to.owner(), spareTokens(to));
    }

    @Override
    public Set<HeldClaim> renew(Collection<HeldClaim> holds, Duration lease) {
        return leases.renew(holds, lease);
    }

    @Override
    public int available(LockKey key, Claim.Kind kind, int size) {
        return admin.available(key);
    }

    @Override
    public Subscription subscribe(LockKey key, Runnable wakeUp) {
        return mirrors.subscribe(ops.lockPath(key), wakeUp);
    }

    @Override
    public void onPossibleLoss(Runnable checkNow) {
        session.onPossibleLoss(checkNow);
    }

    @Override
    public Optional<LockInfo> inspect(LockKey key) {
        return admin.inspect(key);
    }

    @Override
    public List<LockInfo> list(String prefix, int limit) {
        return admin.list(prefix, limit);
    }

    @Override
    public Optional<LockInfo> forceRelease(LockKey key) {
        return admin.forceRelease(key);
    }

    @Override
    public Optional<LockInfo> forceRelease(LockKey key, OwnerId owner) {
        return admin.forceRelease(key, owner);
    }

    @Override
    public void close() {
        if (!ops.markClosed()) {
            return;
        }
        session.stopListening();
        mirrors.closeAll();
        entries.close(!ownsCurator); // a session that outlives the store would keep its ephemeral entries
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
