package io.distlock.bench;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.support.CloseableClient;
import io.etcd.jetcd.watch.WatchEvent;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * The yardstick for issue 27's 8-client target: a lock on the plain jetcd client (KV, Watch and one lease per client,
 * kept alive by jetcd's keep-alive stream), doing only what a hand-off between clients needs, so that a target this
 * code misses is out of reach for any queue lock on etcd that keeps those steps.
 *
 * A name is a key prefix. To acquire, a client sends one Txn: if its key <prefix><lease-id> does not exist, put it
 * with the lease and, in the same Txn, read the prefix's keys sorted by create revision. The keys with a create
 * revision below its own are the ones ahead; with none, it holds. Its own key's create revision is the fencing token.
 * Releasing deletes the key (one DeleteRange). Nothing else is sent per lock+unlock, so the floor is 2 unary requests,
 * the same as jetcd's Lock and Unlock.
 *
 * How a waiter learns that the keys ahead are gone comes in two variants:
 *
 * - "watch on the prefix": each client watches the name's prefix (deletes only) from the moment it opens the lock,
 *   before its first Txn, with no start revision, so the watch is synced and etcd sends each delete as it is applied.
 *   Keys ahead can only leave (a key put later has a later create revision), and every delete after the Txn's
 *   revision reaches the watch, so the waiter holds once it has seen a delete, after that revision, of each key that
 *   was ahead: no request on the hand-off. 2 requests per lock+unlock.
 * - "watch on the predecessor": the recipe of etcd's own concurrency package. The waiter watches only the key just
 *   ahead, from the Txn's revision + 1 (so a delete in between is not missed); when it is deleted, one Range of the
 *   prefix's keys with a create revision below its own (the newest of them); with none it holds, else it watches
 *   that one from the Range's revision + 1. 3 requests per contended lock+unlock. A watch that starts at a revision
 *   etcd has already passed is an unsynced watcher, caught up by etcd's sync loop (every 100 ms), not when the delete
 *   is applied.
 *
 * What this leaves out, against what distlock's lock offers: re-entry and several holds per client (the key is per
 * lease: a second lock() of one client on one name, from any thread, fails), hand-off between threads of one client,
 * fairness options, timeouts and tryLock, interrupts (lock() waits uninterruptibly), renewal beyond the lease's
 * keep-alive, any report of a lost lease (a holder whose lease expired goes on believing it holds), retries (an error
 * ends the operation), recovery of a key whose Txn reply was lost (it stays until its lease ends), a watch that fails
 * or is cancelled (the prefix variant's waiters fail; the predecessor variant's waiter fails), and the memory of the
 * prefix variant's last-delete table (one entry per key ever deleted under the name).
 *
 * The benchmark's clients are in one process, so a counter per name, shared by one factory's clients, checks mutual
 * exclusion: a lock() that finds another holder fails (an error in the report's table). It costs no request.
 */
/** A minimal etcd queue lock on the plain jetcd client: the reference for issue 27's 8-client target. */
final class EtcdReference {
    static final String LOCK = "reference lock, watch on the prefix (jetcd KV+Watch)";
    static final String LOCK_PREDECESSOR = "reference lock, watch on the predecessor (jetcd KV+Watch)";

    private static final long LEASE_SECONDS = 30;
    private static final GetOption QUEUE = GetOption.builder()
            .isPrefix(true)
            .withSortField(GetOption.SortTarget.CREATE)
            .withSortOrder(GetOption.SortOrder.ASCEND)
            .withKeysOnly(true)
            .build();

    private EtcdReference() {}

    /**
     * Opens one jetcd client per provider, with one lease kept alive; {@code lock(name)} is the lock on the prefix
     * {@code root + name + "/"}, one per name and client; {@code prefixWatch} picks the variant.
     */
    static LockProvider.Factory locks(String endpoints, String root, boolean prefixWatch) {
        Map<String, AtomicInteger> holders = new ConcurrentHashMap<>(); // across this factory's clients
        return LockProvider.factory(prefixWatch ? LOCK : LOCK_PREDECESSOR, () -> {
            Client client = Client.builder().endpoints(endpoints.split(",")).build();
            long lease = await(client.getLeaseClient().grant(LEASE_SECONDS)).getID();
            CloseableClient keepAlive = client.getLeaseClient().keepAlive(lease, new Ignore());
            Map<String, QueueLock> locks = new ConcurrentHashMap<>();
            return RedisBench.provider(
                    name -> locks.computeIfAbsent(
                            name,
                            n -> new QueueLock(
                                    client,
                                    lease,
                                    EtcdBench.bytes(root + "ref/" + n + "/"),
                                    prefixWatch,
                                    holders.computeIfAbsent(n, k -> new AtomicInteger()))),
                    () -> {
                        locks.values().forEach(QueueLock::close);
                        keepAlive.close();
                        try {
                            await(client.getLeaseClient().revoke(lease));
                        } catch (RuntimeException e) {
                            // the lease ends with its TTL
                        }
                        client.close();
                    });
        });
    }

    /** One client's lock on one name: its key is the name's prefix + the client's lease id. */
    static final class QueueLock extends LockAndUnlockOnly {
        private final KV kv;
        private final Watch watch;
        private final ByteSequence prefix;
        private final ByteSequence key;
        private final PutOption onLease;
        private final boolean prefixWatch;
        private final AtomicInteger holders;
        private final Object monitor = new Object();
        /** Per key, the revision of the latest delete the prefix watch has seen. Guarded by monitor. */
        private final Map<ByteSequence, Long> deletedAt = new HashMap<>();
        /** Guarded by monitor. */
        private @Nullable Throwable watchFailure;

        private final Watch.@Nullable Watcher prefixWatcher;
        private volatile long token;

        QueueLock(Client client, long lease, ByteSequence prefix, boolean prefixWatch, AtomicInteger holders) {
            this.kv = client.getKVClient();
            this.watch = client.getWatchClient();
            this.prefix = prefix;
            this.key = prefix.concat(EtcdBench.bytes(Long.toHexString(lease)));
            this.onLease = PutOption.builder().withLeaseId(lease).build();
            this.prefixWatch = prefixWatch;
            this.holders = holders;
            if (prefixWatch) {
                // no start revision: the watch starts at the server's current revision and is synced; waiting for
                // its created notification puts its start before this client's first Txn
                CompletableFuture<Void> created = new CompletableFuture<>();
                WatchOption option = WatchOption.builder()
                        .isPrefix(true)
                        .withNoPut(true)
                        .withCreateNotify(true)
                        .build();
                prefixWatcher = watch.watch(
                        prefix,
                        option,
                        Watch.listener(
                                r -> {
                                    if (r.isCreatedNotify()) {
                                        created.complete(null);
                                    }
                                    onDeletes(r.getEvents());
                                },
                                t -> {
                                    created.completeExceptionally(t);
                                    onWatchFailure(t);
                                }));
                await(created);
            } else {
                prefixWatcher = null;
            }
        }

        /** The fencing token of the current hold: the create revision of this client's key. */
        long token() {
            return token;
        }

        @Override
        public void lock() {
            TxnResponse r = await(kv.txn()
                    .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                    .Then(Op.put(key, ByteSequence.EMPTY, onLease), Op.get(prefix, QUEUE))
                    .commit());
            if (!r.isSucceeded()) {
                throw new IllegalStateException("this client already holds or waits for " + prefix);
            }
            long revision = r.getHeader().getRevision(); // the put's revision: the key's create revision
            List<ByteSequence> ahead = new ArrayList<>();
            for (KeyValue kvp : r.getGetResponses().get(0).getKvs()) {
                if (kvp.getCreateRevision() < revision) {
                    ahead.add(kvp.getKey());
                }
            }
            if (!ahead.isEmpty()) {
                if (prefixWatch) {
                    awaitDeleted(ahead, revision);
                } else {
                    followPredecessors(ahead.get(ahead.size() - 1), revision);
                }
            }
            token = revision;
            if (holders.incrementAndGet() != 1) {
                holders.decrementAndGet();
                throw new IllegalStateException("two clients of this process hold " + prefix + " at once");
            }
        }

        @Override
        public void unlock() {
            if (token == 0) {
                throw new IllegalMonitorStateException("not held");
            }
            token = 0;
            holders.decrementAndGet();
            var unused = await(kv.delete(key));
        }

        /** Waits until the prefix watch has seen a delete, after {@code revision}, of every key in {@code ahead}. */
        private void awaitDeleted(List<ByteSequence> ahead, long revision) {
            synchronized (monitor) {
                while (true) {
                    if (watchFailure != null) {
                        throw new IllegalStateException("the watch on " + prefix + " failed", watchFailure);
                    }
                    boolean allGone = true;
                    for (ByteSequence k : ahead) {
                        Long at = deletedAt.get(k);
                        if (at == null || at <= revision) {
                            allGone = false;
                            break;
                        }
                    }
                    if (allGone) {
                        return;
                    }
                    try {
                        monitor.wait();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException(e);
                    }
                }
            }
        }

        private void onDeletes(List<WatchEvent> events) {
            synchronized (monitor) {
                for (WatchEvent e : events) {
                    if (e.getEventType() == WatchEvent.EventType.DELETE) {
                        KeyValue kvp = e.getKeyValue();
                        deletedAt.merge(kvp.getKey(), kvp.getModRevision(), Math::max);
                    }
                }
                monitor.notifyAll();
            }
        }

        private void onWatchFailure(Throwable t) {
            synchronized (monitor) {
                watchFailure = t;
                monitor.notifyAll();
            }
        }

        /**
         * Watches {@code predecessor} from {@code revision + 1} until it is deleted, then reads the newest key created
         * before {@code own}; returns when there is none, else watches that one.
         */
        private void followPredecessors(ByteSequence predecessor, long own) {
            ByteSequence next = predecessor;
            long from = own + 1;
            GetOption newestAhead = GetOption.builder()
                    .isPrefix(true)
                    .withMaxCreateRevision(own - 1)
                    .withSortField(GetOption.SortTarget.CREATE)
                    .withSortOrder(GetOption.SortOrder.DESCEND)
                    .withLimit(1)
                    .withKeysOnly(true)
                    .build();
            while (true) {
                CompletableFuture<Void> deleted = new CompletableFuture<>();
                Watch.Watcher w = watch.watch(
                        next,
                        WatchOption.builder().withRevision(from).withNoPut(true).build(),
                        Watch.listener(
                                r -> {
                                    for (WatchEvent e : r.getEvents()) {
                                        if (e.getEventType() == WatchEvent.EventType.DELETE) {
                                            deleted.complete(null);
                                        }
                                    }
                                },
                                deleted::completeExceptionally));
                try {
                    await(deleted);
                } finally {
                    w.close();
                }
                GetResponse g = await(kv.get(prefix, newestAhead));
                if (g.getKvs().isEmpty()) {
                    return;
                }
                next = g.getKvs().get(0).getKey();
                from = g.getHeader().getRevision() + 1;
            }
        }

        void close() {
            if (prefixWatcher != null) {
                prefixWatcher.close();
            }
        }
    }

    private static <T> T await(CompletableFuture<T> f) {
        try {
            return f.get(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("etcd request failed: " + e, e);
        }
    }

    private static final class Ignore implements StreamObserver<LeaseKeepAliveResponse> {
        @Override
        public void onNext(LeaseKeepAliveResponse value) {}

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {}
    }
}
