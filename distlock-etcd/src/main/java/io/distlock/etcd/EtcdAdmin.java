package io.distlock.etcd;

import static io.distlock.etcd.EtcdRequests.HEAD_WITH_VALUE;
import static io.distlock.etcd.EtcdRequests.bytes;
import static io.distlock.etcd.EtcdRequests.first;

import io.distlock.LockInfo;
import io.distlock.etcd.EtcdRequests.RequestFailedException;
import io.distlock.spi.Claim;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Lease;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseTimeToLiveResponse;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.options.OptionsUtil;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/*
 * Overview
 *
 * What an operator sees
 *   A lock's holder is the head of its queue, the key with the lowest create revision under the name's prefix; its
 *   owner comes from the key, its fencing token is the create revision, the waiters are the other keys, and the lease
 *   left is the etcd lease's remaining TTL, capped at the hold's nominal lease written in the key's value (etcd counts
 *   whole seconds and the shared lease carries a second of slack, so its TTL overstates how long the owner itself
 *   counts on the hold).
 *
 * Listing
 *   The names starting with a text are one key range (EtcdKeys), read in pages in key order. The keys of one name are
 *   contiguous, so the listing stops at the first key of the name after the limit, with every listed name complete.
 *   The remaining TTLs of the heads' leases are asked for together, once per lease.
 *
 * Forced release
 *   Deletes the head's key, owner-checked by its create revision, so a hold that changed meanwhile is not taken for
 *   the one read; the next in line becomes the holder. It retries a few times while the holder keeps changing. The
 *   release of one owner's hold does the same only while that owner's key is the head: an owner whose key waits in
 *   the queue holds nothing, and keeps its place.
 *
 * Read-write locks, semaphores, latches
 *   A name whose oldest key says it is a read-write lock or semaphore is shown with every hold the grant rule lets in
 *   (EtcdClaimQueue), the others as waiters; a name with only a count key is a latch, with its count and the TTL left
 *   of its lease. The forced release of such a name deletes its oldest key, as for a lock.
 *
 * Free or held
 *   A lock is held exactly while its name has a key: the head holds it, whether or not its owner has seen the grant
 *   yet. available counts the keys without reading them.
 */
/** The operator's view of the etcd store: inspect, list, forced release. */
final class EtcdAdmin {
    private static final int LIST_PAGE = 1000;
    private static final int FORCE_ROUNDS = 5;
    private static final GetOption COUNT =
            GetOption.builder().isPrefix(true).withCountOnly(true).build();

    private final EtcdRequests requests;
    private final EtcdKeys keys;
    private final Lease leases;

    EtcdAdmin(EtcdRequests requests, EtcdKeys keys, Lease leases) {
        this.requests = requests;
        this.keys = keys;
        this.leases = leases;
    }

    Optional<LockInfo> inspect(LockKey key) {
        TxnResponse t = requests.await(
                requests.kv()
                        .txn()
                        .Then(
                                Op.get(bytes(keys.namePrefix(key.name())), HEAD_WITH_VALUE),
                                Op.get(bytes(keys.latchKey(key.name())), GetOption.DEFAULT))
                        .commit(),
                "inspect");
        GetResponse r = t.getGetResponses().get(0);
        KeyValue head = first(r);
        if (head == null) {
            KeyValue latch = first(t.getGetResponses().get(1));
            return latch == null ? Optional.empty() : Optional.of(latchInfo(key.name(), latch));
        }
        EtcdClaimQueue.Key parsed = EtcdClaimQueue.Key.of(head);
        if (parsed.kind() != Claim.Kind.LOCK) {
            return Optional.of(claimInfo(key.name(), parsed.kind(), parsed.size()));
        }
        return Optional.of(info(key.name(), head, r.getCount() - 1, remaining(head)));
    }

    /** A read-write lock's or semaphore's holds (the keys the grant rule lets in) and waiters. */
    private LockInfo claimInfo(String name, Claim.Kind kind, int size) {
        List<KeyValue> kvs = requests.await(
                        requests.kv().get(bytes(keys.namePrefix(name)), EtcdClaims.QUEUE), "inspect")
                .getKvs();
        Map<ByteSequence, KeyValue> byKey = new HashMap<>();
        for (KeyValue kv : kvs) {
            byKey.put(kv.getKey(), kv);
        }
        List<EtcdClaimQueue.Key> granted = EtcdClaimQueue.granted(kind, size, EtcdClaimQueue.parse(kvs));
        List<LockInfo.Holder> holders = new ArrayList<>();
        for (EtcdClaimQueue.Key k : granted) {
            KeyValue kv = byKey.get(k.key());
            String path = k.key().toString(StandardCharsets.UTF_8);
            EtcdKeys.Parsed p = keys.parse(path);
            String owner = p == null ? path : p.owner();
            if (owner.endsWith(EtcdKeys.READ_SUFFIX) && !k.exclusive()) {
                owner = owner.substring(0, owner.length() - EtcdKeys.READ_SUFFIX.length());
            }
            holders.add(new LockInfo.Holder(
                    owner, k.exclusive(), k.permits(), kv == null ? Duration.ZERO : remaining(kv), k.revision()));
        }
        LockInfo.Kind infoKind = kind == Claim.Kind.SEMAPHORE ? LockInfo.Kind.SEMAPHORE : LockInfo.Kind.READ_WRITE_LOCK;
        return LockInfo.ofHolders(name, infoKind, holders, kvs.size() - granted.size());
    }

    private LockInfo latchInfo(String name, KeyValue latch) {
        String v = latch.getValue().toString(StandardCharsets.UTF_8);
        long count;
        try {
            count = Long.parseLong(v.substring(v.indexOf('=') + 1));
        } catch (NumberFormatException e) {
            count = 0;
        }
        Duration left = latch.getLease() == 0
                ? Duration.ZERO
                : Duration.ofSeconds(Math.max(
                        0,
                        requests.await(leases.timeToLive(latch.getLease(), LeaseOption.DEFAULT), "inspect")
                                .getTTL()));
        return LockInfo.ofLatch(name, count, left);
    }

    /** The permits of a read-write lock or semaphore that no granted key has. */
    int available(LockKey key, Claim.Kind kind, int size) {
        TxnResponse t = requests.await(
                requests.kv()
                        .txn()
                        .Then(
                                Op.get(bytes(keys.namePrefix(key.name())), EtcdClaims.QUEUE),
                                Op.get(bytes(keys.latchKey(key.name())), EtcdRequests.KEY_ONLY))
                        .commit(),
                "available");
        if (first(t.getGetResponses().get(1)) != null) {
            throw EtcdClaimQueue.inUse(key.name(), "count-down latch", kind.label());
        }
        return EtcdClaimQueue.available(
                key.name(),
                kind,
                size,
                EtcdClaimQueue.parse(t.getGetResponses().get(0).getKvs()));
    }

    List<LockInfo> list(String prefix, int limit) {
        ByteSequence from = bytes(keys.namesStartingWith(prefix));
        ByteSequence end = OptionsUtil.prefixEndOf(from);
        Map<String, KeyValue> heads = new LinkedHashMap<>();
        Map<String, Integer> counts = new HashMap<>();
        ByteSequence cursor = from;
        outer:
        for (; ; ) {
            GetResponse page = requests.await(
                    requests.kv()
                            .get(
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
            Duration left = ttl == null
                    ? Duration.ZERO
                    : capped(h, requests.await(ttl, "list").getTTL());
            out.add(info(e.getKey(), h, counts.getOrDefault(e.getKey(), 1) - 1, left));
        }
        return out;
    }

    Optional<LockInfo> forceRelease(LockKey key) {
        for (int i = 0; i < FORCE_ROUNDS; i++) {
            GetResponse r = requests.await(
                    requests.kv().get(bytes(keys.namePrefix(key.name())), HEAD_WITH_VALUE), "forceRelease");
            KeyValue head = first(r);
            if (head == null) {
                return Optional.empty();
            }
            Duration left = remaining(head);
            if (requests.deleteIfRevision(head.getKey(), head.getCreateRevision())) {
                return Optional.of(info(key.name(), head, r.getCount() - 1, left));
            }
        }
        throw new RequestFailedException("etcd: the holder of '" + key.name() + "' kept changing; try again", null);
    }

    Optional<LockInfo> forceRelease(LockKey key, OwnerId owner) {
        String ownKey = keys.ownerKey(key.name(), owner.value());
        for (int i = 0; i < FORCE_ROUNDS; i++) {
            GetResponse r = requests.await(
                    requests.kv().get(bytes(keys.namePrefix(key.name())), HEAD_WITH_VALUE), "forceRelease");
            KeyValue head = first(r);
            if (head == null || !head.getKey().equals(bytes(ownKey))) {
                return Optional.empty();
            }
            Duration left = remaining(head);
            if (requests.deleteIfRevision(head.getKey(), head.getCreateRevision())) {
                return Optional.of(info(key.name(), head, r.getCount() - 1, left));
            }
        }
        throw new RequestFailedException(
                "etcd: the hold of '" + owner.value() + "' on '" + key.name() + "' kept changing; try again", null);
    }

    /** 1 when nobody holds the lock, 0 when somebody does. */
    int available(LockKey key) {
        GetResponse r = requests.await(requests.kv().get(bytes(keys.namePrefix(key.name())), COUNT), "available");
        return r.getCount() == 0 ? 1 : 0;
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
                requests.await(leases.timeToLive(head.getLease(), LeaseOption.DEFAULT), "inspect")
                        .getTTL());
    }

    /** etcd's remaining TTL, at most the hold's own lease. */
    private static Duration capped(KeyValue head, long ttlSeconds) {
        if (ttlSeconds <= 0) {
            return Duration.ZERO;
        }
        Duration ttl = Duration.ofSeconds(ttlSeconds);
        Duration nominal = EtcdKeys.leaseOf(head.getValue().toString(StandardCharsets.UTF_8));
        return nominal != null && nominal.compareTo(ttl) < 0 ? nominal : ttl;
    }
}
