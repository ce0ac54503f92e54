package io.distlock.etcd;

import static io.distlock.etcd.EtcdRequests.KEY_ONLY;
import static io.distlock.etcd.EtcdRequests.bytes;
import static io.distlock.etcd.EtcdRequests.first;

import io.distlock.etcd.EtcdRequests.RequestFailedException;
import io.distlock.spi.LockKey;
import io.distlock.spi.Subscription;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Lease;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Keys
 *   A latch is its count key <namespace><encoded name>%latch (value count=<n>) and one key per counted count-down,
 *   <count key>/<call id>, all on one etcd lease of the latch's own (EtcdKeys). A latch at zero is deleted, count key,
 *   call keys and all, so an absent latch and a latch at zero are the same thing.
 *
 * Changes
 *   trySetCount grants the latch's lease (TTL: the expiry) and puts the count key on it if it does not exist
 *   (create_revision == 0). countDown reads the count key and the call's key in one read-only transaction, then
 *   writes in a transaction that compares the count key's mod revision: the new count and the call's key, or, at zero,
 *   the delete of the latch's whole range. A count-down whose call key exists has been counted and changes nothing, so
 *   a retried call never counts twice; a concurrent change makes the compare fail, and the count-down reads again.
 *
 * Expiry
 *   Each change keeps the latch's lease alive, pipelined with its transaction, which restarts the lease's full TTL:
 *   the latch's data expires the expiry after its last change (rounded up to whole seconds), and then reads as absent.
 *
 * Kinds
 *   The count key lies outside every name's claim range, so each side checks the other: a latch step reads whether the
 *   name has claim keys (a count) in the same transaction, and a read-write lock's or semaphore's attempt reads the
 *   count key in its own. trySetCount that finds claim keys after its put deletes the latch it made again before it
 *   refuses, so a race between the two kinds refuses one or both and never mixes them.
 *
 * Waiting for zero
 *   watchZero watches exactly the count key from the server's current revision and returns once etcd has created the
 *   watch; the engine reads the count after that, so a zero reached before cannot be missed. A watch on the current
 *   revision is served as each write is applied (one on a revision already passed would wait for etcd's loop for
 *   unsynced watchers). The delete of the count key (zero, or expiry) wakes the waiters.
 */
/** The etcd store's count-down latches: a count key changed by compare-and-swap on its mod revision. */
final class EtcdLatches {
    private static final Logger log = LoggerFactory.getLogger(EtcdLatches.class);
    private static final int MAX_ROUNDS = 32;
    private static final GetOption COUNT =
            GetOption.builder().isPrefix(true).withCountOnly(true).build();
    private static final DeleteOption RANGE =
            DeleteOption.builder().isPrefix(true).build();

    private final EtcdRequests requests;
    private final EtcdKeys keys;
    private final Lease leases;
    private final Watch watch;

    EtcdLatches(EtcdRequests requests, EtcdKeys keys, Lease leases, Watch watch) {
        this.requests = requests;
        this.keys = keys;
        this.leases = leases;
        this.watch = watch;
    }

    boolean trySetCount(LockKey key, long count, Duration expiry) {
        String name = key.name();
        ByteSequence latch = bytes(keys.latchKey(name));
        long lease = requests.await(leases.grant(EtcdLeases.ceilSeconds(expiry.toNanos())), "trySetCount")
                .getID();
        boolean kept = false;
        try {
            TxnResponse r = requests.await(
                    requests.kv()
                            .txn()
                            .If(new Cmp(latch, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                            .Then(
                                    Op.put(
                                            latch,
                                            countValue(count),
                                            PutOption.builder()
                                                    .withLeaseId(lease)
                                                    .build()),
                                    Op.get(bytes(keys.namePrefix(name)), COUNT))
                            .Else(Op.get(bytes(keys.namePrefix(name)), COUNT))
                            .commit(),
                    "trySetCount");
            long claims = r.getGetResponses().get(0).getCount();
            if (!r.isSucceeded()) {
                if (claims > 0) {
                    throw inUse(name);
                }
                return false; // a latch that is counting (one at zero is deleted)
            }
            if (claims > 0) {
                // the name has holds or waiters of a read-write lock or semaphore: take our latch back, then refuse
                var unused = requests.await(
                        requests.kv()
                                .txn()
                                .If(new Cmp(
                                        latch,
                                        Cmp.Op.EQUAL,
                                        CmpTarget.createRevision(r.getHeader().getRevision())))
                                .Then(Op.delete(latch, DeleteOption.DEFAULT))
                                .commit(),
                        "trySetCount");
                throw inUse(name);
            }
            kept = true;
            return true;
        } finally {
            if (!kept) {
                revokeQuietly(lease);
            }
        }
    }

    long countDown(LockKey key, String callId) {
        String name = key.name();
        ByteSequence latch = bytes(keys.latchKey(name));
        ByteSequence call = bytes(keys.latchCallKey(name, callId));
        for (int round = 0; round < MAX_ROUNDS; round++) {
            TxnResponse read = requests.await(
                    requests.kv()
                            .txn()
                            .Then(
                                    Op.get(latch, GetOption.DEFAULT),
                                    Op.get(call, KEY_ONLY),
                                    Op.get(bytes(keys.namePrefix(name)), COUNT))
                            .commit(),
                    "countDown");
            List<GetResponse> gets = read.getGetResponses();
            KeyValue now = first(gets.get(0));
            if (now == null) {
                if (gets.get(2).getCount() > 0) {
                    throw inUse(name);
                }
                return 0;
            }
            long count = countOf(now);
            if (count <= 0 || first(gets.get(1)) != null) {
                return Math.max(0, count); // at zero, or this call was counted already
            }
            long lease = now.getLease();
            Cmp unchanged = new Cmp(latch, Cmp.Op.EQUAL, CmpTarget.modRevision(now.getModRevision()));
            if (count == 1) {
                TxnResponse r = requests.await(
                        requests.kv()
                                .txn()
                                .If(unchanged)
                                .Then(Op.delete(latch, RANGE))
                                .commit(),
                        "countDown");
                if (r.isSucceeded()) {
                    revokeQuietly(lease);
                    return 0;
                }
                continue;
            }
            PutOption onLease = PutOption.builder().withLeaseId(lease).build();
            CompletableFuture<LeaseKeepAliveResponse> keepAlive = leases.keepAliveOnce(lease);
            TxnResponse r = requests.await(
                    requests.kv()
                            .txn()
                            .If(unchanged)
                            .Then(
                                    Op.put(latch, countValue(count - 1), onLease),
                                    Op.put(call, ByteSequence.EMPTY, onLease))
                            .commit(),
                    "countDown");
            try {
                var unused = requests.await(keepAlive, "countDown");
            } catch (RuntimeException e) {
                log.debug("distlock: keep-alive of latch lease {} failed", lease, e);
            }
            if (r.isSucceeded()) {
                return count - 1;
            }
        }
        throw new RequestFailedException("etcd: the latch '" + name + "' kept changing under us", null);
    }

    long count(LockKey key) {
        String name = key.name();
        TxnResponse r = requests.await(
                requests.kv()
                        .txn()
                        .Then(
                                Op.get(bytes(keys.latchKey(name)), GetOption.DEFAULT),
                                Op.get(bytes(keys.namePrefix(name)), COUNT))
                        .commit(),
                "count");
        KeyValue now = first(r.getGetResponses().get(0));
        if (now == null) {
            if (r.getGetResponses().get(1).getCount() > 0) {
                throw inUse(name);
            }
            return 0;
        }
        return Math.max(0, countOf(now));
    }

    /**
     * Watches the count key from the server's current revision and returns once etcd has created the watch; the
     * delete of the key (zero or expiry) wakes. The caller reads the count after this returns.
     */
    Subscription watchZero(LockKey key, Runnable wakeUp) {
        ByteSequence latch = bytes(keys.latchKey(key.name()));
        AtomicBoolean open = new AtomicBoolean(true);
        CompletableFuture<Void> created = new CompletableFuture<>();
        Watch.Watcher w = watch.watch(
                latch,
                WatchOption.builder().withCreateNotify(true).build(),
                Watch.listener(
                        response -> {
                            if (response.isCreatedNotify()) {
                                created.complete(null);
                            }
                            for (WatchEvent e : response.getEvents()) {
                                if (e.getEventType() == WatchEvent.EventType.DELETE && open.get()) {
                                    wakeUp.run();
                                    return;
                                }
                            }
                        },
                        t -> {
                            log.debug("distlock: etcd watch on latch {} failed", key.name(), t);
                            created.completeExceptionally(t);
                            if (open.get()) {
                                wakeUp.run(); // the awaiter re-reads the count
                            }
                        }));
        Subscription sub = () -> {
            if (open.compareAndSet(true, false)) {
                try {
                    w.close();
                } catch (RuntimeException e) {
                    log.debug("distlock: closing an etcd watch failed", e);
                }
            }
        };
        try {
            var unused = requests.await(created, "await");
        } catch (RuntimeException e) {
            sub.close();
            throw e;
        }
        return sub;
    }

    private void revokeQuietly(long lease) {
        leases.revoke(lease).whenComplete((ok, failure) -> {
            if (failure != null) {
                log.debug("distlock: revoking latch lease {} failed", lease, failure);
            }
        });
    }

    private static ByteSequence countValue(long count) {
        return bytes("count=" + count);
    }

    private static long countOf(KeyValue kv) {
        String v = kv.getValue().toString(StandardCharsets.UTF_8);
        try {
            return v.startsWith("count=") ? Long.parseLong(v.substring("count=".length())) : 0;
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static IllegalStateException inUse(String name) {
        return new IllegalStateException(
                "'" + name + "' is in use as a lock, read-write lock or semaphore, not as a " + "count-down latch");
    }
}
