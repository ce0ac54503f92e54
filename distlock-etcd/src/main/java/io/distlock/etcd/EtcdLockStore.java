package io.distlock.etcd;

import io.distlock.DistributedLockException;
import io.distlock.LockInfo;
import io.distlock.internal.Ticker;
import io.distlock.spi.Attempt;
import io.distlock.spi.HandOff;
import io.distlock.spi.HandsOff;
import io.distlock.spi.HeldLock;
import io.distlock.spi.LockKey;
import io.distlock.spi.LockStore;
import io.distlock.spi.OwnerId;
import io.distlock.spi.QueueOrdered;
import io.distlock.spi.Subscription;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Lease;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdException;
import io.etcd.jetcd.kv.DeleteResponse;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.lease.LeaseTimeToLiveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.options.OptionsUtil;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Keys. Every owner that holds or waits for a lock has its own key <namespace><encoded name>/<owner> (EtcdKeys), whose
 * value names the owner and its nominal lease ("lease=30000ms owner=..."), bound to an etcd lease. The keys of one
 * name form a queue ordered by their create revision: the owner whose key has the lowest create revision under the
 * name's prefix holds the lock, every other key is a waiter (FIFO by construction, as in etcd's own
 * concurrency.Mutex). The holder's create revision is the fencing token: etcd's revision is one counter for the
 * whole keyspace that only grows, and a key created later always has a greater create revision, so every grant's
 * token is greater than every earlier grant's, across client and server restarts that keep the data.
 *
 * Acquire is one transaction: if our key does not exist (create_revision == 0) put it with its lease and read the
 * lowest key of the prefix (reads inside an etcd transaction see the transaction's own put, so one round trip both
 * enqueues and answers "am I the head?"); otherwise read our key. A non-queued attempt that is not the head deletes its
 * key again before it answers Busy (owner-checked by create revision), so it leaves nothing. A queued waiter keeps its
 * key and re-checks with a read-only transaction (its key and the head: a linearizable read, no Raft write); when the
 * watch's mirror of the queue still shows an older key it answers Busy without a round trip, since the delete of that
 * key will wake it. A grant is always confirmed by etcd. abandon deletes the waiter's key, which also deletes a grant
 * the engine never saw: a waiter that gave up can never become the holder later (jetcd issue #291). A key of ours that
 * we do not know (a failed abandon or release, a grant the engine has given up on) is deleted, owner-checked by its
 * create revision, before we queue again, so a fresh acquisition always gets a fresh, greater token. release is a
 * plain delete of the owner's key with prev_kv, not a transaction: the key names its owner, so it cannot touch another
 * owner's key, and the deleted key's create revision says whether it was the hold we granted; an uncontended
 * acquire+release is one transaction and one delete, the fewest Raft writes a lock can do.
 *
 * Hand-off (non-fair locks: the engine lines up a client's waiters locally behind the first, which alone has a key
 * in the queue). When a local holder releases and a local waiter exists, handOff is one transaction guarded by the
 * giver's create revision: delete the giver's key, put the receiver's key with its lease unless it has one (a nested
 * transaction on create_revision == 0), and read the receiver's key and the head. The receiver's key is the head
 * exactly when no other client's key is older; then its create revision is the grant's token, greater than every
 * earlier grant's as for any head. Otherwise the giver's hold ended and the receiver waits in the queue (queued),
 * behind the owners of other clients that were there first, so hand-off never jumps etcd's FIFO order. When the
 * guard fails, nothing is written (notHeld).
 *
 * Leases. Holds renewed by the engine's watchdog, and their waiters, share one lease per client, granted lazily; the
 * engine says which holds those are (Lease.renewed), so a fixed lease of the same length still ends by itself. The watchdog's tick calls renew: one keep-alive-once of the
 * shared lease (not jetcd's fire-and-forget keepAlive stream, which can stop silently: jetcd #965, #1383) pipelined
 * with one transaction that reads every renewed key. A lease that is gone, or a key that is missing or was recreated,
 * is reported gone, so the engine marks the hold lost within one tick; a failed round trip throws, and the engine keeps
 * the holds until their last confirmed lease ends. A hold with a fixed lease gets a lease of its own, so it expires by
 * itself even if this client dies; the client also revokes it when the lease ends locally, so a sub-second lease does
 * not last as long as etcd's whole-second TTL.
 *
 * Lease arithmetic. etcd counts TTLs in whole seconds, so every TTL is rounded up. The engine dates a hold's lease from
 * just before tryAcquire; the etcd lease must not end before that, or a holder could believe in a hold that etcd has
 * already given to another owner. A fresh per-hold lease is granted inside the call, so it is safe; a reused one is
 * kept alive in the same round trip as the transaction. The shared lease has one second of slack (TTL = lease + 1 s,
 * rounded up): a hold dated at most one second after the sending of the shared lease's last confirmed keep-alive ends
 * before the lease can. An acquire that finds that confirmation older than half the slack sends a keep-alive and goes
 * on without waiting for it (its answer dates the lease for later acquires; measured: waiting for it, pipelined,
 * added about 1.4 ms to the acquire that sent it); only one that finds it older than three quarters of the slack waits
 * for it, with its transaction, so an acquire on a busy client is one round trip. Queued waiters come back at least every third of
 * their lease (Busy.retryWithin) and keep their lease alive then, so a waiter whose process died is evicted when its
 * lease runs out (the lease plus one second for the shared lease).
 *
 * Wake-ups: one watch per name on the name's prefix, started just after a read of the prefix, so every change after
 * that read is replayed however late the stream is set up; delete events wake the waiters. The same events keep the
 * mirror of the queue that waiters consult. A watch that jetcd gives up on is restarted from a fresh read.
 */
final class EtcdLockStore implements LockStore, QueueOrdered, HandsOff {
    private static final Logger log = LoggerFactory.getLogger(EtcdLockStore.class);
    private static final long SLACK_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long REFRESH_NANOS = SLACK_NANOS / 2; // send a keep-alive of the shared lease, not waiting
    private static final long CONFIRM_NANOS = SLACK_NANOS * 3 / 4; // and wait for it: the slack is nearly used up
    private static final int MAX_TXN_OPS = 128;
    private static final int LIST_PAGE = 1000;
    private static final GetOption HEAD = GetOption.builder()
            .isPrefix(true)
            .withSortField(GetOption.SortTarget.CREATE)
            .withSortOrder(GetOption.SortOrder.ASCEND)
            .withLimit(1)
            .withKeysOnly(true)
            .build();
    private static final GetOption HEAD_WITH_VALUE = GetOption.builder()
            .isPrefix(true)
            .withSortField(GetOption.SortTarget.CREATE)
            .withSortOrder(GetOption.SortOrder.ASCEND)
            .withLimit(1)
            .build();
    private static final DeleteOption PREV_KV =
            DeleteOption.builder().withPrevKV(true).build();
    private static final GetOption KEY_ONLY =
            GetOption.builder().withKeysOnly(true).build();

    private final Client client;
    private final boolean ownsClient;
    private final KV kv;
    private final Lease leases;
    private final Watch watch;
    private final EtcdKeys keys;
    private final Duration watchdogLease;
    private final long sharedTtlSeconds;
    private final Duration timeout;
    private final Ticker ticker;
    private final ScheduledThreadPoolExecutor scheduler;
    private final ReentrantLock sharedLock = new ReentrantLock();
    private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();
    private final Set<EtcdSubscription> subscriptions = ConcurrentHashMap.newKeySet();
    private final ConcurrentHashMap<String, EtcdSubscription> mirrors = new ConcurrentHashMap<>();
    private volatile @Nullable LeaseRef shared;
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
        this.kv = client.getKVClient();
        this.leases = client.getLeaseClient();
        this.watch = client.getWatchClient();
        this.keys = new EtcdKeys(namespace);
        this.watchdogLease = watchdogLease;
        this.sharedTtlSeconds = ceilSeconds(watchdogLease.toNanos() + SLACK_NANOS);
        this.timeout = timeout;
        this.ticker = ticker;
        this.scheduler = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "distlock-etcd-timer");
            t.setDaemon(true);
            return t;
        });
        scheduler.setRemoveOnCancelPolicy(true);
    }

    EtcdKeys keys() {
        return keys;
    }

    // ---------------------------------------------------------------- acquire

    @Override
    public Attempt tryAcquire(LockKey key, OwnerId owner, io.distlock.spi.Lease leaseSpec, boolean queue) {
        Duration lease = leaseSpec.length();
        ensureOpen();
        long start = ticker.read();
        String path = keys.ownerKey(key.name(), owner.value());
        boolean watchdogHold = leaseSpec.renewed();
        long comeBack = Math.max(TimeUnit.MILLISECONDS.toNanos(1), lease.toNanos() / 3);
        Entry known = entries.get(path);
        if (known != null && (known.granted || known.shared != watchdogHold || known.lease.dead)) {
            // a grant the engine has given up on (its lease ended locally), or a leftover of another kind
            dropStale(path, known);
            known = null;
        }
        if (known != null) {
            EtcdSubscription mirror = mirrors.get(key.name());
            if (queue
                    && mirror != null
                    && start - known.checkedAt < comeBack
                    && start - known.lease.refreshedAt() < comeBack
                    && mirror.hasOlderThan(known.revision)) {
                // the watch shows an older key in the queue: the answer is Busy without asking etcd, and its delete
                // event will wake us. A grant is always confirmed by etcd below.
                return Attempt.busy(Duration.ofNanos(comeBack));
            }
            Attempt a = recheck(key, path, known, start, lease, queue, comeBack);
            if (a != null) {
                return a;
            }
            // our queue entry is gone (its lease ran out, or it was deleted behind our back): queue again
        }
        return enqueue(key, owner, path, lease, watchdogHold, queue, start, comeBack);
    }

    /**
     * A queued waiter's re-check: one read-only transaction (a linearizable read, no Raft write) of its own key and the
     * head of the queue. Returns null if the waiter's key is gone.
     */
    private @Nullable Attempt recheck(
            LockKey key, String path, Entry known, long start, Duration lease, boolean queue, long comeBack) {
        Refresh keepAlive = refreshIfDue(known.lease, start);
        ByteSequence k = bytes(path);
        TxnResponse r = await(
                kv.txn()
                        .Then(Op.get(k, KEY_ONLY), Op.get(bytes(keys.namePrefix(key.name())), HEAD))
                        .commit(),
                "acquire");
        if (keepAlive != null) {
            try {
                keepAlive.confirm();
            } catch (RuntimeException e) {
                if (!leaseNotFound(e)) {
                    throw e;
                }
                leaseGone(known.lease);
                entries.remove(path, known);
                return null; // the key went with the lease
            }
        }
        List<GetResponse> gets = r.getGetResponses();
        KeyValue mine = first(gets.get(0));
        if (mine == null || mine.getCreateRevision() != known.revision || mine.getLease() != known.lease.id) {
            entries.remove(path, known);
            if (mine != null) {
                deleteIfRevision(k, mine.getCreateRevision());
            }
            return null;
        }
        known.checkedAt = start;
        KeyValue head = first(gets.get(1));
        if (head != null && head.getCreateRevision() == known.revision) {
            Entry granted = new Entry(known.revision, known.lease, known.shared, true, start);
            entries.put(path, granted);
            if (!known.shared) {
                scheduleExpiry(path, granted, lease);
            }
            return Attempt.acquired(known.revision);
        }
        if (!queue) {
            deleteIfRevision(k, known.revision);
            entries.remove(path, known);
            if (!known.shared) {
                revokeQuietly(known.lease);
            }
            return Attempt.busy(lease);
        }
        return Attempt.busy(Duration.ofNanos(comeBack));
    }

    /** Writes the owner's key if it has none (one transaction that also reads the head of the queue). */
    private Attempt enqueue(
            LockKey key,
            OwnerId owner,
            String path,
            Duration lease,
            boolean watchdogHold,
            boolean queue,
            long start,
            long comeBack) {
        ByteSequence k = bytes(path);
        ByteSequence prefix = bytes(keys.namePrefix(key.name()));
        ByteSequence value = bytes(value(owner, lease));
        try (LeaseChoice choice = new LeaseChoice(watchdogHold, lease)) {
            for (int round = 0; ; round++) {
                if (round >= 4) {
                    throw new RequestFailedException("etcd: the queue entry " + path + " kept changing under us", null);
                }
                LeaseRef leaseRef = choice.pick();
                Refresh keepAlive = refreshIfDue(leaseRef, start);
                TxnResponse r;
                try {
                    r = await(
                            kv.txn()
                                    .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                                    .Then(Op.put(k, value, leaseRef.putOnIt), Op.get(prefix, HEAD))
                                    .Else(Op.get(k, KEY_ONLY))
                                    .commit(),
                            "acquire");
                    if (keepAlive != null) {
                        keepAlive.confirm();
                    }
                } catch (RuntimeException e) {
                    if (leaseNotFound(e)) {
                        leaseGone(leaseRef);
                        continue;
                    }
                    throw e;
                }
                List<GetResponse> gets = r.getGetResponses();
                if (!r.isSucceeded()) {
                    // our key is there but it is not a queue entry we know: a leftover (a failed abandon or release)
                    KeyValue mine = first(gets.get(0));
                    if (mine != null) {
                        deleteIfRevision(k, mine.getCreateRevision());
                    }
                    continue;
                }
                long myRevision = r.getHeader().getRevision();
                KeyValue head = first(gets.get(0));
                if (head != null && head.getCreateRevision() == myRevision) {
                    Entry e = new Entry(myRevision, leaseRef, watchdogHold, true, start);
                    entries.put(path, e);
                    if (!watchdogHold) {
                        scheduleExpiry(path, e, lease);
                    }
                    choice.kept();
                    return Attempt.acquired(myRevision);
                }
                if (!queue) {
                    deleteIfRevision(k, myRevision);
                    return Attempt.busy(lease);
                }
                entries.put(path, new Entry(myRevision, leaseRef, watchdogHold, false, start));
                choice.kept();
                // come back within a third of the waiter's lease to keep the queue entry alive
                return Attempt.busy(Duration.ofNanos(comeBack));
            }
        }
    }

    /**
     * The keep-alive of {@code lease} that a call dating its hold at {@code start} must wait for, sent now to be
     * pipelined with the call's request: a per-hold lease from before this call always needs one; the shared lease only
     * when its last confirmation is older than {@link #CONFIRM_NANOS}, and from {@link #REFRESH_NANOS} on it gets one in
     * the background (the confirmation covers this hold; the answer dates the lease for later ones). Null if the call
     * need not wait.
     */
    private @Nullable Refresh refreshIfDue(LeaseRef lease, long start) {
        long age = start - lease.refreshedAt();
        if (!lease.shared) {
            return age <= 0 ? null : new Refresh(lease, ticker.read(), leases.keepAliveOnce(lease.id));
        }
        if (age <= REFRESH_NANOS) {
            return null;
        }
        boolean mustWait = age > CONFIRM_NANOS;
        Refresh r = lease.inFlight;
        long now = ticker.read();
        // one in flight will do unless it is unanswered for a request timeout, or this hold needs a newer one: a
        // confirmation dates the lease from its sending, which must be at most the slack before `start`
        if (r == null || now - r.sentAt > (mustWait ? REFRESH_NANOS : timeout.toNanos())) {
            Refresh sent = new Refresh(lease, now, leases.keepAliveOnce(lease.id));
            lease.inFlight = sent;
            sent.answer.whenComplete((answer, failure) -> {
                if (failure == null) {
                    lease.refreshed(sent.sentAt);
                } else if (leaseNotFound(failure)) {
                    leaseGone(lease); // the next acquire takes a new shared lease; renew reports the holds gone
                } else {
                    log.debug("distlock: keep-alive of etcd lease {} failed", lease.id, failure);
                }
                if (lease.inFlight == sent) {
                    lease.inFlight = null;
                }
            });
            r = sent;
        }
        return mustWait ? r : null;
    }

    /** A keep-alive in flight: {@link #confirm} waits for it and dates the lease from when it was sent. */
    private final class Refresh {
        private final LeaseRef lease;
        private final long sentAt;
        private final CompletableFuture<LeaseKeepAliveResponse> answer;

        Refresh(LeaseRef lease, long sentAt, CompletableFuture<LeaseKeepAliveResponse> answer) {
            this.lease = lease;
            this.sentAt = sentAt;
            this.answer = answer;
        }

        /** @throws RuntimeException if the keep-alive failed; {@link #leaseNotFound} tells whether the lease is gone */
        void confirm() {
            var unused = await(answer, "keep-alive");
            lease.refreshed(sentAt);
        }
    }

    /**
     * The lease a key written by one call goes on: the shared lease for watchdog holds, otherwise a per-hold lease
     * granted on first use and kept across the call's rounds. Closing revokes a per-hold lease that no key kept.
     */
    private final class LeaseChoice implements AutoCloseable {
        private final boolean watchdogHold;
        private final Duration lease;
        private @Nullable LeaseRef fresh; // granted in this call and not kept by a key yet

        LeaseChoice(boolean watchdogHold, Duration lease) {
            this.watchdogHold = watchdogHold;
            this.lease = lease;
        }

        LeaseRef pick() {
            if (watchdogHold) {
                return sharedLease();
            }
            LeaseRef f = fresh;
            if (f == null || f.dead) {
                f = grant(ceilSeconds(lease.toNanos()));
                fresh = f;
            }
            return f;
        }

        /** A key is on the picked lease now: it ends with that key's hold or queue entry, not with this call. */
        void kept() {
            fresh = null;
        }

        @Override
        public void close() {
            LeaseRef f = fresh;
            if (f != null) {
                revokeQuietly(f); // granted for an attempt that did not keep it
            }
        }
    }

    private void dropStale(String path, Entry known) {
        deleteIfRevision(bytes(path), known.revision);
        entries.remove(path, known);
        known.cancelExpiry();
        if (!known.shared) {
            revokeQuietly(known.lease);
        }
    }

    private void scheduleExpiry(String path, Entry e, Duration lease) {
        // the engine marks the hold lost at its lease end; ending it in etcd at the same time frees the lock without
        // waiting for etcd's whole-second TTL. The engine dated the lease from before this call, so this is later.
        try {
            e.expiry = scheduler.schedule(
                    () -> {
                        if (entries.remove(path, e)) {
                            revokeQuietly(e.lease);
                        }
                    },
                    lease.toNanos(),
                    TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.RejectedExecutionException ex) {
            // closing: close() revokes every per-hold lease
        }
    }

    // ---------------------------------------------------------------- give up, release, renew

    @Override
    public void abandon(LockKey key, OwnerId owner) {
        ensureOpen();
        String path = keys.ownerKey(key.name(), owner.value());
        Entry e = entries.remove(path);
        var unused = await(kv.delete(bytes(path)), "abandon");
        if (e != null) {
            e.cancelExpiry();
            if (!e.shared) {
                revokeQuietly(e.lease);
            }
        }
    }

    @Override
    public boolean release(LockKey key, OwnerId owner) {
        ensureOpen();
        String path = keys.ownerKey(key.name(), owner.value());
        Entry e = entries.get(path);
        // a plain delete of the owner's own key, not a transaction: the key names its owner, so this can never touch
        // another owner's key, and the deleted key's create revision tells whether it was the hold we granted. etcd
        // answers a delete faster than a transaction with a compare (measured: about 50 us less per release).
        DeleteResponse r = await(kv.delete(bytes(path), PREV_KV), "release");
        forget(path, e);
        List<KeyValue> gone = r.getPrevKvs();
        if (gone.isEmpty()) {
            return false;
        }
        long revision = gone.get(0).getCreateRevision();
        if (e != null && revision != e.revision) {
            // not the hold (it ended), but a key of this owner that we did not know of: gone too now, as it should be
            log.debug("distlock: release of {} found key revision {}, not the hold's {}", path, revision, e.revision);
            return false;
        }
        return true;
    }

    @Override
    public HandOff handOff(LockKey key, OwnerId from, OwnerId to, io.distlock.spi.Lease leaseSpec) {
        Duration lease = leaseSpec.length();
        ensureOpen();
        long start = ticker.read();
        String fromPath = keys.ownerKey(key.name(), from.value());
        String toPath = keys.ownerKey(key.name(), to.value());
        boolean watchdogHold = leaseSpec.renewed();
        Entry giver = entries.get(fromPath);
        Entry known = entries.get(toPath);
        if (known != null && (known.granted || known.shared != watchdogHold || known.lease.dead)) {
            dropStale(toPath, known); // as in tryAcquire: a leftover must not be granted with its old lease
            known = null;
        }
        ByteSequence fk = bytes(fromPath);
        ByteSequence tk = bytes(toPath);
        Cmp held = giver != null
                ? new Cmp(fk, Cmp.Op.EQUAL, CmpTarget.createRevision(giver.revision))
                : new Cmp(fk, Cmp.Op.GREATER, CmpTarget.version(0)); // the key names its owner
        ByteSequence prefix = bytes(keys.namePrefix(key.name()));
        try (LeaseChoice choice = new LeaseChoice(watchdogHold, lease)) {
            for (int round = 0; ; round++) {
                if (round >= 4) {
                    throw new RequestFailedException("etcd: the lease of " + toPath + " kept disappearing", null);
                }
                LeaseRef leaseRef = known != null ? known.lease : choice.pick();
                Refresh keepAlive = refreshIfDue(leaseRef, start);
                // one transaction: end from's hold (owner-checked), queue `to` unless it is queued already, and read
                // to's key and the head of the queue, which see the transaction's own writes
                TxnResponse r;
                try {
                    r = await(
                            kv.txn()
                                    .If(held)
                                    .Then(
                                            Op.delete(fk, DeleteOption.DEFAULT),
                                            Op.txn(
                                                    new Cmp[] {new Cmp(tk, Cmp.Op.EQUAL, CmpTarget.createRevision(0))},
                                                    new Op[] {Op.put(tk, bytes(value(to, lease)), leaseRef.putOnIt)},
                                                    new Op[0]),
                                            Op.get(tk, KEY_ONLY),
                                            Op.get(prefix, HEAD))
                                    .commit(),
                            "hand-off");
                } catch (RuntimeException e) {
                    if (leaseNotFound(e)) {
                        // the put needed a lease that is gone (so is every key on it): nothing was changed
                        leaseGone(leaseRef);
                        if (known != null) {
                            entries.remove(toPath, known);
                            known = null;
                        }
                        continue;
                    }
                    throw e;
                }
                forget(fromPath, giver);
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
                        if (leaseNotFound(e)) {
                            leaseGone(leaseRef);
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
                    Entry granted = new Entry(revision, leaseRef, watchdogHold, true, start);
                    entries.put(toPath, granted);
                    if (!watchdogHold) {
                        scheduleExpiry(toPath, granted, lease);
                    }
                    return HandOff.granted(revision);
                }
                entries.put(toPath, new Entry(revision, leaseRef, watchdogHold, false, start));
                return HandOff.queued();
            }
        }
    }

    /** Forgets a hold that has ended: its entry, its expiry, its own lease. */
    private void forget(String path, @Nullable Entry e) {
        if (e != null && entries.remove(path, e)) {
            e.cancelExpiry();
            if (!e.shared) {
                revokeQuietly(e.lease);
            }
        }
    }

    @Override
    public Set<HeldLock> renew(Collection<HeldLock> holds, Duration lease) {
        ensureOpen();
        if (holds.isEmpty()) {
            return Set.of();
        }
        List<HeldLock> batch = new ArrayList<>(holds);
        // keep alive each lease the holds are on (the shared one, nearly always), pipelined with the key check
        Map<LeaseRef, CompletableFuture<LeaseKeepAliveResponse>> keepAlives = new HashMap<>(); // identity equality
        long sent = ticker.read();
        List<@Nullable Entry> known = new ArrayList<>(batch.size());
        for (HeldLock h : batch) {
            Entry e = entries.get(keys.ownerKey(h.key().name(), h.owner().value()));
            known.add(e);
            if (e != null && !keepAlives.containsKey(e.lease)) {
                keepAlives.put(e.lease, leases.keepAliveOnce(e.lease.id));
            }
        }
        List<CompletableFuture<TxnResponse>> reads = new ArrayList<>();
        for (int from = 0; from < batch.size(); from += MAX_TXN_OPS) {
            List<HeldLock> chunk = batch.subList(from, Math.min(batch.size(), from + MAX_TXN_OPS));
            Op[] ops = new Op[chunk.size()];
            for (int i = 0; i < ops.length; i++) {
                HeldLock h = chunk.get(i);
                ops[i] = Op.get(bytes(keys.ownerKey(h.key().name(), h.owner().value())), KEY_ONLY);
            }
            reads.add(kv.txn().Then(ops).commit());
        }
        Set<LeaseRef> goneLeases = new HashSet<>();
        RuntimeException failure = null;
        for (Map.Entry<LeaseRef, CompletableFuture<LeaseKeepAliveResponse>> ka : keepAlives.entrySet()) {
            try {
                var unused = await(ka.getValue(), "keep-alive");
                ka.getKey().refreshed(sent);
            } catch (RuntimeException e) {
                if (leaseNotFound(e)) {
                    goneLeases.add(ka.getKey());
                    leaseGone(ka.getKey());
                } else if (failure == null) {
                    failure = e;
                }
            }
        }
        List<@Nullable KeyValue> found = new ArrayList<>(batch.size());
        for (CompletableFuture<TxnResponse> read : reads) {
            try {
                for (GetResponse g : await(read, "renew").getGetResponses()) {
                    found.add(first(g));
                }
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                }
            }
        }
        if (failure != null) {
            // the engine keeps the holds until their last confirmed lease ends, then marks them lost; a lease that has
            // gone unconfirmed that long is retired, so no later keep-alive can revive keys the engine gave up on
            long now = ticker.read();
            for (LeaseRef l : keepAlives.keySet()) {
                if (now - l.refreshedAt() >= watchdogLease.toNanos()) {
                    retire(l);
                }
            }
            throw failure;
        }
        Set<HeldLock> gone = new HashSet<>();
        for (int i = 0; i < batch.size(); i++) {
            HeldLock h = batch.get(i);
            Entry e = known.get(i);
            KeyValue kvNow = found.get(i);
            boolean alive = e != null
                    && !goneLeases.contains(e.lease)
                    && kvNow != null
                    && kvNow.getCreateRevision() == h.fencingToken()
                    && kvNow.getLease() == e.lease.id;
            if (!alive) {
                gone.add(h);
                String path = keys.ownerKey(h.key().name(), h.owner().value());
                if (e != null && entries.remove(path, e)) {
                    e.cancelExpiry();
                    if (!e.shared) {
                        revokeQuietly(e.lease);
                    }
                }
            }
        }
        return gone;
    }

    // ---------------------------------------------------------------- wake-ups

    @Override
    public Subscription subscribe(LockKey key, Runnable wakeUp) {
        ensureOpen();
        EtcdSubscription sub = new EtcdSubscription(key.name(), bytes(keys.namePrefix(key.name())), wakeUp);
        subscriptions.add(sub);
        try {
            sub.start();
        } catch (RuntimeException e) {
            sub.close();
            throw e;
        }
        return sub;
    }

    /*
     * One watch per name on the name's prefix. It starts just after a read of the prefix, so every change after that
     * read is replayed however late the stream is set up, and it mirrors the queue (the create revisions of the keys
     * under the prefix) from that read on. Delete events wake the waiters, after the mirror has applied them, so a
     * waiter that consults the mirror and finds an older key will be woken when that key goes. A watch that jetcd
     * closes is restarted from a fresh read; until then the mirror is not trusted.
     */
    private final class EtcdSubscription implements Subscription {
        private final String name;
        private final ByteSequence prefix;
        private final Runnable wakeUp;
        private final ReentrantLock lock = new ReentrantLock();
        private final TreeMap<Long, ByteSequence> byRevision = new TreeMap<>();
        private final HashMap<ByteSequence, Long> byKey = new HashMap<>();
        private boolean healthy;
        private long generation; // the watcher whose callbacks count; older ones were closed by us
        private Watch.@Nullable Watcher watcher;
        private boolean closedSub;

        EtcdSubscription(String name, ByteSequence prefix, Runnable wakeUp) {
            this.name = name;
            this.prefix = prefix;
            this.wakeUp = wakeUp;
        }

        /** Reads the queue, then watches it from just after that read. Blocks for one round trip. */
        void start() {
            GetResponse snapshot = await(
                    kv.get(
                            prefix,
                            GetOption.builder()
                                    .isPrefix(true)
                                    .withKeysOnly(true)
                                    .build()),
                    "subscribe");
            lock.lock();
            try {
                if (closedSub || closed) {
                    return;
                }
                byRevision.clear();
                byKey.clear();
                for (KeyValue kvp : snapshot.getKvs()) {
                    byRevision.put(kvp.getCreateRevision(), kvp.getKey());
                    byKey.put(kvp.getKey(), kvp.getCreateRevision());
                }
                WatchOption option = WatchOption.builder()
                        .isPrefix(true)
                        .withRevision(snapshot.getHeader().getRevision() + 1)
                        .build();
                long g = ++generation;
                watcher = watch.watch(
                        prefix, option, Watch.listener(r -> onNext(g, r), t -> onError(g, t), () -> onDone(g)));
                healthy = true;
                mirrors.put(name, this);
            } finally {
                lock.unlock();
            }
        }

        /** Whether the mirror holds the key with create revision {@code revision} and an older one. */
        boolean hasOlderThan(long revision) {
            lock.lock();
            try {
                return healthy && byRevision.containsKey(revision) && byRevision.firstKey() < revision;
            } finally {
                lock.unlock();
            }
        }

        private void onNext(long g, WatchResponse response) {
            boolean deleted = false;
            lock.lock();
            try {
                if (g != generation) {
                    return;
                }
                for (WatchEvent event : response.getEvents()) {
                    KeyValue kvp = event.getKeyValue();
                    if (event.getEventType() == WatchEvent.EventType.DELETE) {
                        Long rev = byKey.remove(kvp.getKey());
                        if (rev != null) {
                            byRevision.remove(rev);
                        }
                        deleted = true;
                    } else if (event.getEventType() == WatchEvent.EventType.PUT) {
                        byRevision.put(kvp.getCreateRevision(), kvp.getKey());
                        byKey.put(kvp.getKey(), kvp.getCreateRevision());
                    }
                }
            } finally {
                lock.unlock();
            }
            if (deleted) {
                wakeUp.run();
            }
        }

        private void onError(long g, Throwable t) {
            log.debug("distlock: etcd watch on {} failed", prefix, t);
            lock.lock();
            try {
                if (g != generation) {
                    return;
                }
                healthy = false;
            } finally {
                lock.unlock();
            }
            wakeUp.run(); // a release may have gone unseen: let the waiters re-check
            restartLater(); // from a fresh read, so the mirror is whole again
        }

        private void onDone(long g) {
            lock.lock();
            try {
                if (g != generation) {
                    return;
                }
                healthy = false;
            } finally {
                lock.unlock();
            }
            restartLater();
        }

        private void restartLater() {
            if (closedSub || closed) {
                return;
            }
            try {
                scheduler.schedule(
                        () -> {
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
                                wakeUp.run(); // anything may have changed while the watch was down
                            } catch (RuntimeException e) {
                                log.debug("distlock: restarting the etcd watch on {} failed", prefix, e);
                                restartLater();
                            }
                        },
                        500,
                        TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                // closing
            }
        }

        @Override
        public void close() {
            Watch.Watcher w;
            lock.lock();
            try {
                closedSub = true;
                healthy = false;
                w = watcher;
                watcher = null;
            } finally {
                lock.unlock();
            }
            subscriptions.remove(this);
            mirrors.remove(name, this);
            if (w != null) {
                try {
                    w.close();
                } catch (RuntimeException e) {
                    log.debug("distlock: closing an etcd watch failed", e);
                }
            }
        }
    }

    // ---------------------------------------------------------------- operators

    @Override
    public Optional<LockInfo> inspect(LockKey key) {
        ensureOpen();
        GetResponse r = await(kv.get(bytes(keys.namePrefix(key.name())), HEAD_WITH_VALUE), "inspect");
        KeyValue head = first(r);
        if (head == null) {
            return Optional.empty();
        }
        return Optional.of(info(key.name(), head, r.getCount() - 1, remaining(head)));
    }

    @Override
    public List<LockInfo> list(String prefix, int limit) {
        ensureOpen();
        ByteSequence from = bytes(keys.namesStartingWith(prefix));
        ByteSequence end = OptionsUtil.prefixEndOf(from);
        Map<String, KeyValue> heads = new LinkedHashMap<>();
        Map<String, Integer> counts = new HashMap<>();
        ByteSequence cursor = from;
        outer:
        for (; ; ) {
            GetResponse page = await(
                    kv.get(
                            cursor,
                            GetOption.builder()
                                    .withRange(end)
                                    .withLimit(LIST_PAGE)
                                    .build()),
                    "list");
            for (KeyValue kvp : page.getKvs()) {
                EtcdKeys.Parsed p = keys.parse(kvp.getKey().toString(StandardCharsets.UTF_8));
                if (p == null) {
                    continue;
                }
                if (!heads.containsKey(p.name()) && heads.size() == limit) {
                    break outer; // keys of one name are contiguous: the names so far are complete
                }
                KeyValue h = heads.get(p.name());
                if (h == null || kvp.getCreateRevision() < h.getCreateRevision()) {
                    heads.put(p.name(), kvp);
                }
                counts.merge(p.name(), 1, Integer::sum);
            }
            if (!page.isMore() || page.getKvs().isEmpty()) {
                break;
            }
            List<KeyValue> got = page.getKvs();
            cursor = got.get(got.size() - 1).getKey().concat(ByteSequence.from(new byte[] {0}));
        }
        Map<Long, CompletableFuture<LeaseTimeToLiveResponse>> ttls = new HashMap<>();
        for (KeyValue h : heads.values()) {
            if (h.getLease() != 0) {
                ttls.computeIfAbsent(h.getLease(), id -> leases.timeToLive(id, LeaseOption.DEFAULT));
            }
        }
        List<LockInfo> out = new ArrayList<>(heads.size());
        for (Map.Entry<String, KeyValue> e : heads.entrySet()) {
            KeyValue h = e.getValue();
            CompletableFuture<LeaseTimeToLiveResponse> ttl = ttls.get(h.getLease());
            Duration left =
                    ttl == null ? Duration.ZERO : capped(h, await(ttl, "list").getTTL());
            out.add(info(e.getKey(), h, counts.getOrDefault(e.getKey(), 1) - 1, left));
        }
        return out;
    }

    @Override
    public Optional<LockInfo> forceRelease(LockKey key) {
        ensureOpen();
        for (int i = 0; i < 5; i++) {
            GetResponse r = await(kv.get(bytes(keys.namePrefix(key.name())), HEAD_WITH_VALUE), "forceRelease");
            KeyValue head = first(r);
            if (head == null) {
                return Optional.empty();
            }
            Duration left = remaining(head);
            if (deleteIfRevision(head.getKey(), head.getCreateRevision())) {
                return Optional.of(info(key.name(), head, r.getCount() - 1, left));
            }
        }
        throw new RequestFailedException("etcd: the holder of '" + key.name() + "' kept changing; try again", null);
    }

    private LockInfo info(String name, KeyValue head, long waiters, Duration left) {
        EtcdKeys.Parsed p = keys.parse(head.getKey().toString(StandardCharsets.UTF_8));
        String owner = p != null ? p.owner() : head.getKey().toString(StandardCharsets.UTF_8);
        return new LockInfo(name, owner, left, head.getCreateRevision(), (int) Math.min(Integer.MAX_VALUE, waiters));
    }

    private Duration remaining(KeyValue head) {
        if (head.getLease() == 0) {
            return Duration.ZERO;
        }
        return capped(
                head,
                await(leases.timeToLive(head.getLease(), LeaseOption.DEFAULT), "inspect")
                        .getTTL());
    }

    /**
     * etcd's remaining TTL, at most the hold's own lease: etcd counts whole seconds and the shared lease carries a
     * second of slack, so its TTL overstates how long the owner itself counts on the hold.
     */
    private static Duration capped(KeyValue head, long ttlSeconds) {
        if (ttlSeconds <= 0) {
            return Duration.ZERO;
        }
        Duration ttl = Duration.ofSeconds(ttlSeconds);
        Duration nominal = leaseOf(head.getValue().toString(StandardCharsets.UTF_8));
        return nominal != null && nominal.compareTo(ttl) < 0 ? nominal : ttl;
    }

    // ---------------------------------------------------------------- leases

    private LeaseRef sharedLease() {
        LeaseRef l = shared;
        if (l != null && !l.dead) {
            return l;
        }
        sharedLock.lock();
        try {
            l = shared;
            if (l == null || l.dead) {
                long sent = ticker.read();
                long id = await(leases.grant(sharedTtlSeconds), "lease grant").getID();
                l = new LeaseRef(id, true, sent);
                shared = l;
            }
            return l;
        } finally {
            sharedLock.unlock();
        }
    }

    private LeaseRef grant(long ttlSeconds) {
        long sent = ticker.read();
        long id = await(leases.grant(ttlSeconds), "lease grant").getID();
        return new LeaseRef(id, false, sent);
    }

    private void leaseGone(LeaseRef lease) {
        lease.dead = true;
        if (lease.shared) {
            sharedLock.lock();
            try {
                if (shared == lease) {
                    shared = null;
                }
            } finally {
                sharedLock.unlock();
            }
        }
    }

    private void retire(LeaseRef lease) {
        log.warn("distlock: etcd lease {} went unconfirmed for a whole lease; retiring it", lease.id);
        leaseGone(lease);
        entries.values().removeIf(e -> e.lease == lease);
        revokeQuietly(lease);
    }

    private void revokeQuietly(LeaseRef lease) {
        lease.dead = true;
        try {
            leases.revoke(lease.id).whenComplete((r, t) -> {
                if (t != null && !leaseNotFound(t)) {
                    log.debug("distlock: revoking etcd lease {} failed; it ends with its TTL", lease.id, t);
                }
            });
        } catch (RuntimeException e) {
            log.debug("distlock: revoking etcd lease {} failed; it ends with its TTL", lease.id, e);
        }
    }

    /** The value of an owner's key: its owner and its nominal lease, for operators and {@link #inspect}. */
    static String value(OwnerId owner, Duration lease) {
        return "lease=" + lease.toMillis() + "ms owner=" + owner.value();
    }

    /** The nominal lease written in a key's value, or null if the value is not ours. */
    static @Nullable Duration leaseOf(String value) {
        if (!value.startsWith("lease=")) {
            return null;
        }
        int end = value.indexOf("ms ");
        if (end < 0) {
            return null;
        }
        try {
            return Duration.ofMillis(Long.parseLong(value.substring("lease=".length(), end)));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static boolean leaseNotFound(Throwable t) {
        Throwable c = t;
        while (c instanceof CompletionException || c instanceof ExecutionException) {
            Throwable next = c.getCause();
            if (next == null) {
                break;
            }
            c = next;
        }
        if (c instanceof EtcdException ee && ee.getErrorCode() == ErrorCode.NOT_FOUND) {
            String m = ee.getMessage();
            return m != null && m.contains("lease not found");
        }
        return false;
    }

    // ---------------------------------------------------------------- helpers

    private boolean deleteIfRevision(ByteSequence k, long revision) {
        return await(
                        kv.txn()
                                .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.createRevision(revision)))
                                .Then(Op.delete(k, DeleteOption.DEFAULT))
                                .commit(),
                        "delete")
                .isSucceeded();
    }

    private static @Nullable KeyValue first(GetResponse r) {
        List<KeyValue> kvs = r.getKvs();
        return kvs.isEmpty() ? null : kvs.get(0);
    }

    static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    private static long ceilSeconds(long nanos) {
        long s = TimeUnit.NANOSECONDS.toSeconds(nanos);
        if (TimeUnit.SECONDS.toNanos(s) < nanos) {
            s++;
        }
        return Math.max(1, s);
    }

    /** Waits for one round trip, bounded by the request timeout; an interrupt is kept for the caller, not obeyed. */
    private <T> T await(CompletableFuture<T> future, String operation) {
        long deadline = System.nanoTime() + timeout.toNanos();
        boolean interrupted = false;
        try {
            for (; ; ) {
                try {
                    return future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    Throwable cause = e.getCause() != null ? e.getCause() : e;
                    if (cause instanceof RuntimeException re) {
                        throw re;
                    }
                    throw new RequestFailedException("etcd " + operation + " failed: " + cause, cause);
                } catch (TimeoutException e) {
                    future.cancel(true);
                    throw new RequestFailedException(
                            "etcd " + operation + " did not answer within " + timeout + " (request timeout)", e);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
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
        scheduler.shutdownNow();
        for (EtcdSubscription s : List.copyOf(subscriptions)) {
            s.close();
        }
        // revoking a lease deletes every key on it: waiters' entries, and holds the engine could not release
        Set<Long> toRevoke = new HashSet<>();
        LeaseRef s = shared;
        if (s != null) {
            toRevoke.add(s.id);
        }
        for (Entry e : entries.values()) {
            toRevoke.add(e.lease.id);
        }
        entries.clear();
        shared = null;
        List<CompletableFuture<?>> revokes = new ArrayList<>();
        try {
            for (long id : toRevoke) {
                revokes.add(leases.revoke(id));
            }
            for (CompletableFuture<?> f : revokes) {
                var unused = await(f, "lease revoke");
            }
        } catch (RuntimeException e) {
            if (!leaseNotFound(e)) {
                log.debug("distlock: revoking etcd leases on close failed; they end with their TTL", e);
            }
        }
        if (ownsClient) {
            client.close();
        }
    }

    @Override
    public String toString() {
        return "EtcdLockStore[" + keys.namespace() + "]";
    }

    /**
     * A request that failed or timed out; not a {@link DistributedLockException} itself, so the engine wraps it with
     * the operation and the lock's name.
     */
    static final class RequestFailedException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        RequestFailedException(String message, @Nullable Throwable cause) {
            super(message, cause);
        }
    }

    /** One etcd lease of this client. */
    private static final class LeaseRef {
        final long id;
        final boolean shared;
        // ticker reading when the last confirmed grant or keep-alive was sent
        private final AtomicLong refreshedAt;
        volatile boolean dead;
        volatile @Nullable Refresh inFlight; // a keep-alive of the shared lease sent without waiting for its answer
        final PutOption putOnIt; // a put that binds its key to this lease

        LeaseRef(long id, boolean shared, long sentAt) {
            this.id = id;
            this.shared = shared;
            this.refreshedAt = new AtomicLong(sentAt);
            this.putOnIt = PutOption.builder().withLeaseId(id).build();
        }

        long refreshedAt() {
            return refreshedAt.get();
        }

        void refreshed(long sentAt) {
            refreshedAt.accumulateAndGet(sentAt, (now, sent) -> sent - now > 0 ? sent : now);
        }
    }

    /** What this client knows of one of its keys: a queue entry or a grant. */
    private static final class Entry {
        final long revision;
        final LeaseRef lease;
        final boolean shared;
        final boolean granted;
        volatile long checkedAt; // ticker reading before the last round trip that saw this key in etcd
        volatile @Nullable ScheduledFuture<?> expiry;

        Entry(long revision, LeaseRef lease, boolean shared, boolean granted, long checkedAt) {
            this.revision = revision;
            this.lease = lease;
            this.shared = shared;
            this.granted = granted;
            this.checkedAt = checkedAt;
        }

        void cancelExpiry() {
            ScheduledFuture<?> f = expiry;
            if (f != null) {
                f.cancel(false);
            }
        }
    }
}
