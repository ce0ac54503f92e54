package io.distlock.etcd;

import static io.distlock.etcd.EtcdRequests.KEY_ONLY;
import static io.distlock.etcd.EtcdRequests.bytes;
import static io.distlock.etcd.EtcdRequests.first;

import io.distlock.etcd.EtcdClaimQueue.Key;
import io.distlock.etcd.EtcdClaimQueue.Verdict;
import io.distlock.etcd.EtcdEntries.Entry;
import io.distlock.etcd.EtcdLeases.LeaseChoice;
import io.distlock.etcd.EtcdLeases.LeaseRef;
import io.distlock.etcd.EtcdLeases.Refresh;
import io.distlock.etcd.EtcdRequests.RequestFailedException;
import io.distlock.internal.Ticker;
import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.Lease;
import io.distlock.spi.Mode;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * Enqueue
 *   As for a lock (EtcdAcquirer): an owner with no queue entry writes its key in one transaction, if the key does not
 *   exist (create_revision == 0), with its lease, and in the same transaction reads the name's keys with their values
 *   (oldest first) and the name's latch key. Reads inside a transaction see its own put, so one round trip enqueues
 *   and answers whether the key is granted (EtcdClaimQueue); the key's create revision is the fencing token.
 *
 * Downgrade
 *   A read claim of an owner whose write hold this client has granted writes its read key only while that write key
 *   still has the hold's create revision (a second compare in the transaction), and marks it after=<that revision>:
 *   the read key takes the write key's place, so it is granted at once and no writer queued behind the write lock can
 *   pass it when the write lock is released.
 *
 * Re-check
 *   A queued waiter keeps its key and re-checks with a read-only transaction (a linearizable read, no Raft write) of
 *   its key, the latch key and the name's keys. When the watch's mirror of the queue shows that a key the waiter
 *   depends on is still there, and its own key and lease were confirmed within its come-back interval, it answers Busy
 *   without a round trip: the delete of that key will wake it. A grant is always confirmed by etcd. A key that is
 *   gone or was recreated is no longer the waiter's place: it enqueues again.
 *
 * Refusals
 *   A name in use as another kind (or a semaphore of another size, or a latch) refuses the claim with
 *   IllegalStateException; the key the attempt wrote, or the waiter's key, is deleted first, so a refusal leaves
 *   nothing behind. A failed attempt with queue false deletes its key before it answers Busy.
 */
/** The etcd store's acquire path for read-write locks and semaphores: enqueue, re-check, grant. */
final class EtcdClaims {
    private static final int MAX_ROUNDS = 4;
    /** Every key of a name with its value, oldest first. */
    static final GetOption QUEUE = GetOption.builder()
            .isPrefix(true)
            .withSortField(GetOption.SortTarget.CREATE)
            .withSortOrder(GetOption.SortOrder.ASCEND)
            .build();

    private final EtcdRequests requests;
    private final EtcdKeys keys;
    private final EtcdLeases leases;
    private final EtcdEntries entries;
    private final EtcdWatches watches;
    private final Ticker ticker;

    EtcdClaims(
            EtcdRequests requests,
            EtcdKeys keys,
            EtcdLeases leases,
            EtcdEntries entries,
            EtcdWatches watches,
            Ticker ticker) {
        this.requests = requests;
        this.keys = keys;
        this.leases = leases;
        this.entries = entries;
        this.watches = watches;
        this.ticker = ticker;
    }

    Attempt tryAcquire(Claim claim, boolean queue) {
        String name = claim.key().name();
        Lease lease = claim.lease();
        long start = ticker.read();
        String path = keys.holdKey(name, claim.owner().value(), claim.kind(), claim.mode());
        long comeBack =
                Math.max(TimeUnit.MILLISECONDS.toNanos(1), lease.length().toNanos() / 3);
        Entry known = entries.usable(path, lease.renewed());
        if (known != null) {
            if (queue
                    && start - known.checkedAt < comeBack
                    && start - known.lease.refreshedAt() < comeBack
                    && watches.showsBlocked(name, known.revision)) {
                // a key this waiter depends on is still there: its delete will wake us
                return Attempt.busy(Duration.ofNanos(comeBack));
            }
            Attempt a = recheck(claim, path, known, start, queue, comeBack);
            if (a != null) {
                return a;
            }
        }
        return enqueue(claim, path, queue, start, comeBack);
    }

    private @Nullable ByteSequence ownWrite(Claim claim) {
        return claim.kind() == Claim.Kind.READ_WRITE_LOCK && claim.mode() == Mode.SHARED
                ? bytes(keys.ownerKey(claim.key().name(), claim.owner().value()))
                : null;
    }

    /** A queued waiter's re-check: one read-only transaction. Returns null if the waiter's key is gone. */
    private @Nullable Attempt recheck(Claim claim, String path, Entry known, long start, boolean queue, long comeBack) {
        String name = claim.key().name();
        Refresh keepAlive = leases.refreshIfDue(known.lease, start);
        ByteSequence k = bytes(path);
        TxnResponse r = requests.await(
                requests.kv()
                        .txn()
                        .Then(
                                Op.get(k, KEY_ONLY),
                                Op.get(bytes(keys.latchKey(name)), KEY_ONLY),
                                Op.get(bytes(keys.namePrefix(name)), QUEUE))
                        .commit(),
                "acquire");
        if (keepAlive != null) {
            try {
                keepAlive.confirm();
            } catch (RuntimeException e) {
                if (!EtcdLeases.leaseNotFound(e)) {
                    throw e;
                }
                leases.leaseGone(known.lease);
                entries.remove(path, known);
                return null; // the key went with the lease
            }
        }
        List<GetResponse> gets = r.getGetResponses();
        KeyValue mine = first(gets.get(0));
        if (mine == null || mine.getCreateRevision() != known.revision || mine.getLease() != known.lease.id) {
            entries.remove(path, known);
            if (mine != null) {
                requests.deleteIfRevision(k, mine.getCreateRevision());
            }
            return null;
        }
        known.checkedAt = start;
        List<Key> queueKeys = EtcdClaimQueue.parse(gets.get(2).getKvs());
        Verdict v =
                verdict(claim, k, known.revision, placeOf(queueKeys, k, known.revision), gets.get(1), queueKeys, () -> {
                    entries.remove(path, known);
                    entries.ended(known);
                });
        if (v.granted()) {
            entries.granted(path, known.grant(start), claim.lease().length());
            return Attempt.acquired(known.revision);
        }
        if (!queue) {
            requests.deleteIfRevision(k, known.revision);
            entries.remove(path, known);
            entries.ended(known);
            return Attempt.busy(claim.lease().length());
        }
        watches.dependsOn(name, known.revision, v.blockers(), v.budget());
        return Attempt.busy(Duration.ofNanos(comeBack));
    }

    /** Writes the owner's key if it has none (one transaction that also reads the name's keys). */
    private Attempt enqueue(Claim claim, String path, boolean queue, long start, long comeBack) {
        String name = claim.key().name();
        ByteSequence k = bytes(path);
        ByteSequence prefix = bytes(keys.namePrefix(name));
        ByteSequence latch = bytes(keys.latchKey(name));
        ByteSequence ownWrite = ownWrite(claim);
        long after = 0;
        if (ownWrite != null) {
            Entry w = entries.get(keys.ownerKey(name, claim.owner().value()));
            if (w != null && w.granted) {
                after = w.revision; // a downgrade: the read key takes the write key's place
            }
        }
        try (LeaseChoice choice = leases.new LeaseChoice(claim.lease())) {
            for (int round = 0; ; round++) {
                if (round >= MAX_ROUNDS) {
                    throw new RequestFailedException("etcd: the queue entry " + path + " kept changing under us", null);
                }
                LeaseRef leaseRef = choice.pick();
                Refresh keepAlive = leases.refreshIfDue(leaseRef, start);
                Cmp absent = new Cmp(k, Cmp.Op.EQUAL, CmpTarget.createRevision(0));
                Cmp[] ifs = after > 0 && ownWrite != null
                        ? new Cmp[] {absent, new Cmp(ownWrite, Cmp.Op.EQUAL, CmpTarget.createRevision(after))}
                        : new Cmp[] {absent};
                TxnResponse r;
                try {
                    r = requests.await(
                            requests.kv()
                                    .txn()
                                    .If(ifs)
                                    .Then(
                                            Op.put(k, bytes(EtcdKeys.claimValue(claim, after)), leaseRef.putOnIt),
                                            Op.get(latch, KEY_ONLY),
                                            Op.get(prefix, QUEUE))
                                    .Else(Op.get(k, KEY_ONLY))
                                    .commit(),
                            "acquire");
                    if (keepAlive != null) {
                        keepAlive.confirm();
                    }
                } catch (RuntimeException e) {
                    if (EtcdLeases.leaseNotFound(e)) {
                        leases.leaseGone(leaseRef);
                        continue;
                    }
                    throw e;
                }
                List<GetResponse> gets = r.getGetResponses();
                if (!r.isSucceeded()) {
                    KeyValue mine = first(gets.get(0));
                    if (mine != null) {
                        // our key is there but it is not a queue entry we know: a leftover (a failed abandon or
                        // release)
                        requests.deleteIfRevision(k, mine.getCreateRevision());
                    } else {
                        after = 0; // the write hold ended meanwhile: an ordinary read claim
                    }
                    continue;
                }
                long myRevision = r.getHeader().getRevision();
                List<Key> queueKeys = EtcdClaimQueue.parse(gets.get(1).getKvs());
                Verdict v =
                        verdict(claim, k, myRevision, after > 0 ? after : myRevision, gets.get(0), queueKeys, () -> {});
                if (v.granted()) {
                    entries.granted(
                            path,
                            new Entry(myRevision, leaseRef, true, start),
                            claim.lease().length());
                    choice.kept();
                    return Attempt.acquired(myRevision);
                }
                if (!queue) {
                    requests.deleteIfRevision(k, myRevision);
                    return Attempt.busy(claim.lease().length());
                }
                entries.queued(path, new Entry(myRevision, leaseRef, false, start));
                choice.kept();
                watches.dependsOn(name, myRevision, v.blockers(), v.budget());
                return Attempt.busy(Duration.ofNanos(comeBack));
            }
        }
    }

    /**
     * The grant rule over one read; a refusal (the name is another kind) deletes our key and runs {@code forget} before
     * it throws.
     */
    private Verdict verdict(
            Claim claim,
            ByteSequence k,
            long revision,
            long place,
            GetResponse latch,
            List<Key> queueKeys,
            Runnable forget) {
        try {
            if (first(latch) != null) {
                throw EtcdClaimQueue.inUse(
                        claim.key().name(), "count-down latch", claim.kind().label());
            }
            return EtcdClaimQueue.decide(claim, queueKeys, k, place, ownWrite(claim));
        } catch (IllegalStateException e) {
            requests.deleteIfRevision(k, revision);
            forget.run();
            throw e;
        }
    }

    private static long placeOf(List<Key> queueKeys, ByteSequence k, long revision) {
        for (Key q : queueKeys) {
            if (q.key().equals(k)) {
                return q.place();
            }
        }
        return revision;
    }
}
