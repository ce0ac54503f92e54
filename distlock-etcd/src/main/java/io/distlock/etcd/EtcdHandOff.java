package io.distlock.etcd;

import static io.distlock.etcd.EtcdRequests.HEAD;
import static io.distlock.etcd.EtcdRequests.KEY_ONLY;
import static io.distlock.etcd.EtcdRequests.bytes;
import static io.distlock.etcd.EtcdRequests.first;

import io.distlock.etcd.EtcdEntries.Entry;
import io.distlock.etcd.EtcdLeases.LeaseChoice;
import io.distlock.etcd.EtcdLeases.LeaseRef;
import io.distlock.etcd.EtcdLeases.Refresh;
import io.distlock.etcd.EtcdRequests.RequestFailedException;
import io.distlock.internal.Ticker;
import io.distlock.spi.Claim;
import io.distlock.spi.HandOff;
import io.distlock.spi.Lease;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * When it runs
 *   For a non-fair lock the engine lines a client's waiters up locally behind the first, which alone has a key in the
 *   queue. When a local holder releases while a local waiter exists, the engine hands the lock over here instead of a
 *   release, a wake-up and a new acquire.
 *
 * One transaction
 *   Guarded by the giver's create revision (or, for a giver this client does not know, by its key existing: the key
 *   names its owner): delete the giver's key; put the receiver's key with its lease unless it has one (a nested
 *   transaction on create_revision == 0); read the receiver's key and the head of the queue, which see the
 *   transaction's own writes. When the guard fails, nothing is written (notHeld).
 *
 * Order between clients
 *   The receiver's key is the head exactly when no other client's key is older; then its create revision is the
 *   grant's token, greater than every earlier grant's as for any head. Otherwise the giver's hold ended and the
 *   receiver waits in the queue (queued), behind the owners of other clients that were there first, so a hand-off
 *   never jumps etcd's FIFO order. A receiver that was queued already keeps its key and its place.
 *
 * Leases
 *   The receiver's key goes on its queue entry's lease if it has one, otherwise on the lease LeaseChoice picks for the
 *   hold's lease. A reused per-hold lease is kept alive in the same round trip, and a grant waits for that
 *   confirmation: a lease that may end before the hold's is no grant, and the receiver's next attempt re-checks.
 */
/** The etcd store's hand-off of a hold between two owners of one client, in one transaction. */
final class EtcdHandOff {
    private static final Logger log = LoggerFactory.getLogger(EtcdHandOff.class);
    private static final int MAX_ROUNDS = 4;

    private final EtcdRequests requests;
    private final EtcdKeys keys;
    private final EtcdLeases leases;
    private final EtcdEntries entries;
    private final Ticker ticker;

    EtcdHandOff(EtcdRequests requests, EtcdKeys keys, EtcdLeases leases, EtcdEntries entries, Ticker ticker) {
        this.requests = requests;
        this.keys = keys;
        this.leases = leases;
        this.entries = entries;
        this.ticker = ticker;
    }

    HandOff handOff(Claim claim, OwnerId from) {
        LockKey key = claim.key();
        OwnerId to = claim.owner();
        Lease lease = claim.lease();
        long start = ticker.read();
        String fromPath = keys.ownerKey(key.name(), from.value());
        String toPath = keys.ownerKey(key.name(), to.value());
        Entry giver = entries.get(fromPath);
        // as in tryAcquire: a leftover must not be granted with its old lease
        Entry known = entries.usable(toPath, lease.renewed());
        ByteSequence fk = bytes(fromPath);
        ByteSequence tk = bytes(toPath);
        Cmp held = giver != null
                ? new Cmp(fk, Cmp.Op.EQUAL, CmpTarget.createRevision(giver.revision))
                : new Cmp(fk, Cmp.Op.GREATER, CmpTarget.version(0)); // the key names its owner
        ByteSequence prefix = bytes(keys.namePrefix(key.name()));
        ByteSequence value = bytes(EtcdKeys.value(to, lease.length()));
        try (LeaseChoice choice = leases.new LeaseChoice(lease)) {
            for (int round = 0; ; round++) {
                if (round >= MAX_ROUNDS) {
                    throw new RequestFailedException("etcd: the lease of " + toPath + " kept disappearing", null);
                }
                LeaseRef leaseRef = known != null ? known.lease : choice.pick();
                Refresh keepAlive = leases.refreshIfDue(leaseRef, start);
                // one transaction: end from's hold (owner-checked), queue `to` unless it is queued already, and read
                // to's key and the head of the queue, which see the transaction's own writes
                TxnResponse r;
                try {
                    r = requests.await(
                            requests.kv()
                                    .txn()
                                    .If(held)
                                    .Then(
                                            Op.delete(fk, DeleteOption.DEFAULT),
                                            Op.txn(
                                                    new Cmp[] {new Cmp(tk, Cmp.Op.EQUAL, CmpTarget.createRevision(0))},
                                                    new Op[] {Op.put(tk, value, leaseRef.putOnIt)},
                                                    new Op[0]),
                                            Op.get(tk, KEY_ONLY),
                                            Op.get(prefix, HEAD))
                                    .commit(),
                            "hand-off");
                } catch (RuntimeException e) {
                    if (EtcdLeases.leaseNotFound(e)) {
                        // the put needed a lease that is gone (so is every key on it): nothing was changed
                        leases.leaseGone(leaseRef);
                        if (known != null) {
                            entries.remove(toPath, known);
                            known = null;
                        }
                        continue;
                    }
                    throw e;
                }
                entries.forget(fromPath, giver);
                if (!r.isSucceeded()) {
                    return HandOff.notHeld();
                }
                boolean put = r.getTxnResponses().get(0).isSucceeded();
                List<GetResponse> gets = r.getGetResponses();
                KeyValue mine = first(gets.get(0));
                KeyValue head = first(gets.get(1));
                if (mine == null
                        || mine.getLease() != leaseRef.id
                        || !(put || (known != null && mine.getCreateRevision() == known.revision))) {
                    // a key of `to` that we do not know (a failed abandon): its next attempt replaces it
                    if (known != null) {
                        entries.remove(toPath, known);
                    }
                    return HandOff.queued();
                }
                long revision = mine.getCreateRevision();
                choice.kept(); // to's key is on it now
                boolean confirmed = true;
                if (keepAlive != null) {
                    try {
                        keepAlive.confirm();
                    } catch (RuntimeException e) {
                        if (EtcdLeases.leaseNotFound(e)) {
                            leases.leaseGone(leaseRef);
                            if (known != null) {
                                entries.remove(toPath, known);
                            }
                            return HandOff.queued(); // to's key went with the lease: its next attempt queues again
                        }
                        // the lease may end before the hold's lease: no grant now; to's next attempt re-checks
                        log.debug("distlock: keep-alive of etcd lease {} failed during a hand-off", leaseRef.id, e);
                        confirmed = false;
                    }
                }
                if (confirmed && head != null && head.getCreateRevision() == revision) {
                    entries.granted(toPath, new Entry(revision, leaseRef, true, start), lease.length());
                    return HandOff.granted(revision, EtcdLockStore.spareTokens(claim));
                }
                entries.queued(toPath, new Entry(revision, leaseRef, false, start));
                return HandOff.queued();
            }
        }
    }
}
