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
import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
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
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * Enqueue
 *   An owner with no queue entry writes its key in one transaction: if the key does not exist (create_revision == 0),
 *   put it with its lease and read the lowest key of the name's prefix. Reads inside an etcd transaction see the
 *   transaction's own put, so one round trip both enqueues and answers "am I the head?"; the head's create revision is
 *   then the fencing token. A key of the owner that already exists is a leftover this client does not know (a failed
 *   abandon or release): it is deleted, owner-checked by its create revision, and the owner enqueues again, so a fresh
 *   acquisition always gets a fresh, greater token.
 *
 * Re-check
 *   A queued waiter keeps its key and re-checks with a read-only transaction of its key and the head (a linearizable
 *   read, no Raft write). When the watch's mirror of the queue still shows an older key, and the waiter's key and lease
 *   were confirmed within the waiter's come-back interval, it answers Busy without a round trip: the delete of that key
 *   will wake it. When the mirror shows the waiter's key as the oldest (the watch saw its put and the delete of every
 *   key before it, in revision order), the waiter is the head as of the mirror's revision and takes the lock without a
 *   round trip too, provided the shared lease was confirmed within the half second that lets a hold be dated from now;
 *   otherwise the re-check confirms it in etcd. A key deleted behind the waiter's back after that revision is a lost
 *   hold, told by the watchdog as for any hold. A waiter's key that is gone, or was recreated, is no longer its place:
 *   the waiter enqueues again.
 *
 * Trying without queueing
 *   An attempt with queue false that is not the head deletes its key again before it answers Busy (owner-checked by
 *   create revision), so it leaves nothing behind.
 *
 * Coming back
 *   Queued waiters answer Busy with a third of their lease as retryWithin, and keep their lease alive when they come
 *   back, so a waiter whose process died is evicted when its lease runs out.
 */
/** The etcd store's acquire path: enqueue, re-check, grant. */
final class EtcdAcquirer {
    private static final int MAX_ROUNDS = 4;

    private final EtcdRequests requests;
    private final EtcdKeys keys;
    private final EtcdLeases leases;
    private final EtcdEntries entries;
    private final EtcdWatches watches;
    private final Ticker ticker;

    EtcdAcquirer(
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
        LockKey key = claim.key();
        OwnerId owner = claim.owner();
        Lease lease = claim.lease();
        int spare = EtcdLockStore.spareTokens(claim);
        long start = ticker.read();
        String path = keys.ownerKey(key.name(), owner.value());
        long comeBack =
                Math.max(TimeUnit.MILLISECONDS.toNanos(1), lease.length().toNanos() / 3);
        Entry known = entries.usable(path, lease.renewed());
        if (known != null) {
            if (queue
                    && start - known.checkedAt < comeBack
                    && start - known.lease.refreshedAt() < comeBack
                    && watches.showsOlderThan(key.name(), known.revision)) {
                // the watch shows an older key in the queue: the answer is Busy without asking etcd, and its delete
                // event will wake us
                return Attempt.busy(Duration.ofNanos(comeBack));
            }
            if (queue
                    && start - known.checkedAt < comeBack
                    && leases.needsNoRefresh(known.lease, start)
                    && watches.showsHead(key.name(), known.revision)) {
                // the watch has seen our key's put and the delete of every older key: we are the head, as a re-check
                // would say, and the shared lease is confirmed recently enough to date the hold from start
                entries.granted(path, known.grant(start), lease.length());
                return Attempt.acquired(known.revision, spare);
            }
            Attempt a = recheck(key, path, known, start, lease, spare, queue, comeBack);
            if (a != null) {
                return a;
            }
            // our queue entry is gone (its lease ran out, or it was deleted behind our back): queue again
        }
        return enqueue(key, owner, path, lease, spare, queue, start, comeBack);
    }

    /**
     * A queued waiter's re-check: one read-only transaction (a linearizable read, no Raft write) of its own key and the
     * head of the queue. Returns null if the waiter's key is gone.
     */
    private @Nullable Attempt recheck(
            LockKey key, String path, Entry known, long start, Lease lease, int spare, boolean queue, long comeBack) {
        Refresh keepAlive = leases.refreshIfDue(known.lease, start);
        ByteSequence k = bytes(path);
        TxnResponse r = requests.await(
                requests.kv()
                        .txn()
                        .Then(Op.get(k, KEY_ONLY), Op.get(bytes(keys.namePrefix(key.name())), HEAD))
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
        KeyValue head = first(gets.get(1));
        if (head != null && head.getCreateRevision() == known.revision) {
            entries.granted(path, known.grant(start), lease.length());
            return Attempt.acquired(known.revision, spare);
        }
        if (!queue) {
            requests.deleteIfRevision(k, known.revision);
            entries.remove(path, known);
            if (!known.shared) {
                leases.revokeQuietly(known.lease);
            }
            return Attempt.busy(lease.length());
        }
        return Attempt.busy(Duration.ofNanos(comeBack));
    }

    /** Writes the owner's key if it has none (one transaction that also reads the head of the queue). */
    private Attempt enqueue(
            LockKey key, OwnerId owner, String path, Lease lease, int spare, boolean queue, long start, long comeBack) {
        ByteSequence k = bytes(path);
        ByteSequence prefix = bytes(keys.namePrefix(key.name()));
        ByteSequence value = bytes(EtcdKeys.value(owner, lease.length()));
        try (LeaseChoice choice = leases.new LeaseChoice(lease)) {
            for (int round = 0; ; round++) {
                if (round >= MAX_ROUNDS) {
                    throw new RequestFailedException("etcd: the queue entry " + path + " kept changing under us", null);
                }
                LeaseRef leaseRef = choice.pick();
                Refresh keepAlive = leases.refreshIfDue(leaseRef, start);
                TxnResponse r;
                try {
                    r = requests.await(
                            requests.kv()
                                    .txn()
                                    .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                                    .Then(Op.put(k, value, leaseRef.putOnIt), Op.get(prefix, HEAD))
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
                    // our key is there but it is not a queue entry we know: a leftover (a failed abandon or release)
                    KeyValue mine = first(gets.get(0));
                    if (mine != null) {
                        requests.deleteIfRevision(k, mine.getCreateRevision());
                    }
                    continue;
                }
                long myRevision = r.getHeader().getRevision();
                KeyValue head = first(gets.get(0));
                if (head != null && head.getCreateRevision() == myRevision) {
                    entries.granted(path, new Entry(myRevision, leaseRef, true, start), lease.length());
                    choice.kept();
                    return Attempt.acquired(myRevision, spare);
                }
                if (!queue) {
                    requests.deleteIfRevision(k, myRevision);
                    return Attempt.busy(lease.length());
                }
                entries.queued(path, new Entry(myRevision, leaseRef, false, start));
                choice.kept();
                // come back within a third of the waiter's lease to keep the queue entry alive
                return Attempt.busy(Duration.ofNanos(comeBack));
            }
        }
    }
}
