package io.distlock.etcd;

import static io.distlock.etcd.EtcdRequests.bytes;

import io.distlock.LockInfo;
import io.distlock.etcd.EtcdEntries.Entry;
import io.distlock.internal.Ticker;
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
import io.distlock.spi.SessionHolds;
import io.distlock.spi.Subscription;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Keys and the queue
 *   Every owner that holds or waits for a lock has its own key <namespace><encoded name>/<owner> (EtcdKeys), bound to
 *   an etcd lease. The keys of one name form a queue ordered by their create revision: the owner whose key has the
 *   lowest create revision under the name's prefix holds the lock, every other key is a waiter (FIFO by construction,
 *   as in etcd's own concurrency.Mutex). The holder's create revision is the fencing token: etcd's revision is one
 *   counter for the whole keyspace that only grows, so every grant's token is greater than every earlier grant's,
 *   across client and server restarts that keep the data.
 *
 * Claims
 *   A lock's claim is an exclusive claim of one permit, its key and owner name the key written, its Lease says which
 *   etcd lease the key goes on. Read-write locks and semaphores queue the same way, with what each key claims in its
 *   value (EtcdClaims, EtcdClaimQueue); a read hold has a key of its own beside its owner's write key (EtcdKeys).
 *   Count-down latches are a count key beside the name's keys (EtcdLatches). A grant reserves no spare tokens, whatever the claim
 *   asks: etcd assigns the create revision, so no token after it can be set aside for local successions, and every
 *   new holder of the client (a hand-off included) takes a fresh key in etcd's order.
 *
 * The parts
 *   EtcdAcquirer: enqueue, re-check and grant (tryAcquire) of locks; EtcdClaims the same for read-write locks and
 *   semaphores, with EtcdClaimQueue's grant rule; EtcdLatches: count-down latches. EtcdHandOff: a hold passed between two owners of this
 *   client in one transaction. EtcdRenewal: the watchdog's batched keep-alive and key check. EtcdLeases: the shared
 *   watchdog lease and the per-hold leases of fixed leases. EtcdEntries: what this client knows of its own keys.
 *   EtcdWatches: one watch per name, waking waiters and mirroring the queue. EtcdAdmin: inspect, list, forced release, free or held.
 *   EtcdLeftovers: keys this client may have left behind when an answer was lost, and their clean-up.
 *   EtcdRequests: the round trips they all share. This class wires them and does the two steps that are one request.
 *
 * Release and abandon
 *   release is a transaction that deletes the owner's key only while it has the hold's create revision (its fencing
 *   token): the key names its owner, so it cannot touch another owner's key, and the revision keeps a release that
 *   arrives late or twice from ending the same owner's newer hold. An uncontended acquire and release is two
 *   transactions, two Raft writes, the fewest a lock can do. abandon deletes the waiter's key, which also deletes a grant the engine never saw: a waiter that gave up
 *   can never become the holder later (jetcd issue #291). abandonHold (SessionHolds) ends one hold the engine found
 *   lost or whose fixed lease ran out: a transaction deletes the key only while it has the hold's create revision, so
 *   the owner's newer key is never touched, and a fixed-lease hold's own etcd lease is revoked. The engine's timer thus
 *   frees a fixed-lease hold at its length, not at etcd's rounded-up TTL, which still ends it if this client dies.
 *
 * Answers lost
 *   A key on the shared lease that this client does not know of would live as long as the client keeps that lease
 *   alive. So an acquire or hand-off that fails (its write may be applied, at once or after the client gave up on it)
 *   and an abandon or abandonHold whose delete fails leave a doubt about their key path in EtcdLeftovers, which the
 *   watchdog's ticks and later acquires settle by deleting the key if it turns up and is not an entry of this client.
 *
 * Closing
 *   Closing stops the watches and revokes every lease of this client, which deletes every key on them: waiters'
 *   entries, and holds the engine could not release.
 */
/**
 * The etcd {@link ClaimStore} of locks, read-write locks and semaphores, and {@link CounterStore} of count-down latches:
 * one key per owner and mode, FIFO by create revision, revision fencing.
 */
final class EtcdLockStore implements ClaimStore, CounterStore, ClaimAdmin, QueueOrdered, HandsOff, SessionHolds {
    private static final Logger log = LoggerFactory.getLogger(EtcdLockStore.class);
    private static final int MAX_SPARE_TOKENS = 0; // a token is a create revision etcd assigns: none can be set aside

    private final Client client;
    private final boolean ownsClient;
    private final EtcdKeys keys;
    private final EtcdRequests requests;
    private final EtcdLeases leases;
    private final EtcdEntries entries;
    private final EtcdWatches watches;
    private final EtcdAcquirer acquirer;
    private final EtcdHandOff handOff;
    private final EtcdRenewal renewal;
    private final EtcdAdmin admin;
    private final EtcdClaims claims;
    private final EtcdLatches latches;
    private final EtcdLeftovers leftovers;
    private volatile boolean closed;

    /**
     * @param watchdogLease the length of the client's renewed leases, which the shared etcd lease covers
     * @param ownsClient whether {@link #close()} closes {@code client}
     */
    EtcdLockStore(
            Client client,
            boolean ownsClient,
            String namespace,
            Duration watchdogLease,
            Duration timeout,
            Ticker ticker) {
        this.client = client;
        this.ownsClient = ownsClient;
        this.keys = new EtcdKeys(namespace);
        this.requests = new EtcdRequests(client.getKVClient(), timeout);
        this.leases = new EtcdLeases(client.getLeaseClient(), requests, ticker, watchdogLease);
        this.entries = new EtcdEntries(requests, leases, ticker);
        this.watches = new EtcdWatches(requests, client.getWatchClient(), keys);
        this.acquirer = new EtcdAcquirer(requests, keys, leases, entries, watches, ticker);
        this.handOff = new EtcdHandOff(requests, keys, leases, entries, ticker);
        this.renewal = new EtcdRenewal(requests, keys, leases, entries, ticker, watchdogLease);
        this.admin = new EtcdAdmin(requests, keys, client.getLeaseClient());
        this.claims = new EtcdClaims(requests, keys, leases, entries, watches, ticker);
        this.latches = new EtcdLatches(requests, keys, client.getLeaseClient(), client.getWatchClient());
        this.leftovers = new EtcdLeftovers(requests, leases, entries, ticker);
    }

    EtcdKeys keys() {
        return keys;
    }

    /** How many of the spare tokens a claim asks for a grant reserves: none (see MAX_SPARE_TOKENS). */
    static int spareTokens(Claim claim) {
        return Math.min(claim.spareTokens(), MAX_SPARE_TOKENS);
    }

    @Override
    public Set<Claim.Kind> kinds() {
        return Set.of(Claim.Kind.LOCK, Claim.Kind.READ_WRITE_LOCK, Claim.Kind.SEMAPHORE);
    }

    @Override
    public Attempt tryAcquire(Claim claim, boolean queue) {
        ensureOpen();
        leftovers.sweepIfDue();
        String path = keys.holdKey(claim.key().name(), claim.owner().value(), claim.kind(), claim.mode());
        Runnable done = leftovers.enter(path);
        try {
            return claim.kind() == Claim.Kind.LOCK
                    ? acquirer.tryAcquire(claim, queue)
                    : claims.tryAcquire(claim, queue);
        } catch (IllegalStateException e) {
            throw e; // the name is another kind: nothing of ours was left written
        } catch (RuntimeException e) {
            if (claim.lease().renewed()) {
                leftovers.unknownWrite(path, leases.currentShared()); // its write may be applied, now or later
            }
            throw e;
        } finally {
            done.run();
        }
    }

    @Override
    public void abandon(Claim claim) {
        ensureOpen();
        String path = keys.holdKey(claim.key().name(), claim.owner().value(), claim.kind(), claim.mode());
        Entry e = entries.remove(path);
        try {
            var unused = requests.await(requests.kv().delete(bytes(path)), "abandon");
        } catch (RuntimeException ex) {
            if (claim.lease().renewed()) {
                // the key, if any, is on the shared lease, which this client keeps alive: a sweep deletes it
                leftovers.unknownWrite(path, e != null ? e.lease : leases.currentShared());
            }
            throw ex;
        }
        if (e != null) {
            entries.ended(e);
        }
    }

    /**
     * Ends one hold the engine found lost or whose fixed lease ran out: deletes the hold's key only while it still has
     * the hold's create revision (its fencing token), so a newer key of the same owner is never touched, and revokes
     * the etcd lease of the hold's own when it had a fixed lease. The shared watchdog lease is never revoked here: other
     * keys are on it.
     *
     * <p>It sends the delete and does not wait for it. The engine calls this for each hold it finds lost, one after
     * another, also when etcd cannot be reached (a hold whose lease ended unconfirmed): waiting up to a request timeout
     * for each would tell the owners of the holds after it of their loss that much later. A key whose delete fails is
     * deleted by a later sweep of EtcdLeftovers, or ends with its lease if the client stops keeping that alive; a newer
     * key of the owner is safe from a late delete, which compares the create revision, and the owner's next acquire
     * writes a new key anyway (EtcdAcquirer drops unknown leftovers).
     */
    @Override
    public void abandonHold(HeldClaim hold) {
        var unused = endHold(hold);
    }

    /** {@link #abandonHold}; the answer completes once the delete and the lease's revoke were sent and answered. */
    CompletableFuture<?> endHold(HeldClaim hold) {
        if (closed) {
            return CompletableFuture.completedFuture(null); // closing revoked every lease, and with them every key
        }
        String path = keys.holdKey(hold.key().name(), hold.owner().value(), hold.kind(), hold.mode());
        Entry e = entries.get(path);
        Entry own = e != null && e.revision == hold.fencingToken() && entries.remove(path, e) ? e : null;
        CompletableFuture<@Nullable KeyValue> delete;
        try {
            delete = requests.deleteIfRevisionAsync(bytes(path), hold.fencingToken());
        } catch (RuntimeException ex) {
            delete = CompletableFuture.failedFuture(ex);
        }
        return delete.whenComplete((gone, failure) -> {
            if (own != null) {
                entries.ended(own); // revokes the hold's own lease, if it had one (which also deletes the key)
            } else if (gone != null && gone.getLease() != 0 && !leases.isShared(gone.getLease())) {
                // a fixed-lease grant whose entry was already forgotten (its lease had passed): its lease is its own
                leases.revokeQuietly(gone.getLease());
            }
            if (failure != null) {
                leftovers.failedDelete(path, hold.fencingToken()); // a sweep deletes it, owner-checked by revision
                log.debug(
                        "distlock: could not end lost {} in etcd; a later sweep or its lease ends it",
                        OwnerId.redact(path),
                        failure);
            }
        });
    }

    @Override
    public boolean release(HeldClaim hold) {
        ensureOpen();
        String path = keys.holdKey(hold.key().name(), hold.owner().value(), hold.kind(), hold.mode());
        Entry e = entries.get(path);
        // deletes the owner's key only while it has the hold's create revision (its fencing token): a newer key at the
        // same path (the owner's next hold or queue entry) is never ended by a release that arrives late or twice
        boolean released = requests.deleteIfRevision(bytes(path), hold.fencingToken(), "release");
        if (e != null && e.revision == hold.fencingToken()) {
            entries.forget(path, e);
        }
        return released;
    }

    @Override
    public HandOff handOff(Claim to, OwnerId from) {
        ensureOpen();
        String path = keys.holdKey(to.key().name(), to.owner().value(), to.kind(), to.mode());
        Runnable done = leftovers.enter(path);
        try {
            return handOff.handOff(to, from);
        } catch (RuntimeException e) {
            if (to.lease().renewed()) {
                leftovers.unknownWrite(path, leases.currentShared()); // its write may be applied, now or later
            }
            throw e;
        } finally {
            done.run();
        }
    }

    @Override
    public Set<HeldClaim> renew(Collection<HeldClaim> holds, Duration lease) {
        ensureOpen();
        leftovers.sweep();
        return renewal.renew(holds);
    }

    @Override
    public Subscription subscribe(LockKey key, Runnable wakeUp) {
        ensureOpen();
        return watches.subscribe(key, wakeUp);
    }

    /** How many etcd watches this store keeps open, idle ones included. */
    int openWatches() {
        return watches.openWatches();
    }

    @Override
    public Optional<LockInfo> inspect(LockKey key) {
        ensureOpen();
        return admin.inspect(key);
    }

    @Override
    public List<LockInfo> list(String prefix, int limit) {
        ensureOpen();
        return admin.list(prefix, limit);
    }

    @Override
    public Optional<LockInfo> forceRelease(LockKey key) {
        ensureOpen();
        return admin.forceRelease(key);
    }

    @Override
    public Optional<LockInfo> forceRelease(LockKey key, OwnerId owner) {
        ensureOpen();
        return admin.forceRelease(key, owner);
    }

    @Override
    public int available(LockKey key, Claim.Kind kind, int size) {
        ensureOpen();
        return kind == Claim.Kind.LOCK ? admin.available(key) : admin.available(key, kind, size);
    }

    @Override
    public boolean trySetCount(LockKey key, long count, Duration expiry) {
        ensureOpen();
        return latches.trySetCount(key, count, expiry);
    }

    @Override
    public long countDown(LockKey key, String callId, Duration expiry) {
        ensureOpen();
        return latches.countDown(key, callId);
    }

    @Override
    public long count(LockKey key) {
        ensureOpen();
        return latches.count(key);
    }

    @Override
    public Subscription watchZero(LockKey key, Runnable wakeUp) {
        ensureOpen();
        return latches.watchZero(key, wakeUp);
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("the etcd lock store is closed");
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        watches.close();
        // revoking a lease deletes every key on it: waiters' entries, and holds the engine could not release
        leases.revokeAll(entries.clear());
        if (ownsClient) {
            client.close();
        }
    }

    @Override
    public String toString() {
        return "EtcdLockStore[" + keys.namespace() + "]";
    }
}
