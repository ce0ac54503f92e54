package io.distlock.etcd;

import static io.distlock.etcd.EtcdRequests.KEY_ONLY;
import static io.distlock.etcd.EtcdRequests.bytes;
import static io.distlock.etcd.EtcdRequests.first;

import io.distlock.etcd.EtcdEntries.Entry;
import io.distlock.etcd.EtcdLeases.LeaseRef;
import io.distlock.internal.Ticker;
import io.distlock.spi.HeldClaim;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Op;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * One tick
 *   The engine's watchdog calls renew once per tick with every hold it renews. The holds sit on the shared lease (and
 *   rarely on an older one), so the tick is one keep-alive-once per lease, pipelined with transactions that read every
 *   renewed key (up to MAX_TXN_OPS reads each): one round trip for the whole client.
 *
 * What counts as gone
 *   A hold is gone when its lease is gone, or its key is missing, or was recreated (another create revision than the
 *   hold's token), or sits on another lease. Gone holds are forgotten here and reported to the engine, which marks them
 *   lost within the tick.
 *
 * A failed tick
 *   A round trip that fails throws, and the engine keeps the holds until their last confirmed lease ends. A lease that
 *   has gone unconfirmed for a whole watchdog lease is retired (forgotten, revoked), so that no later keep-alive can
 *   revive keys the engine has given up on.
 */
/** The watchdog's batched renewal of the etcd store's holds: keep-alives of their leases and a check of their keys. */
final class EtcdRenewal {
    private static final int MAX_TXN_OPS = 128;

    private final EtcdRequests requests;
    private final EtcdKeys keys;
    private final EtcdLeases leases;
    private final EtcdEntries entries;
    private final Ticker ticker;
    private final Duration watchdogLease;

    EtcdRenewal(
            EtcdRequests requests,
            EtcdKeys keys,
            EtcdLeases leases,
            EtcdEntries entries,
            Ticker ticker,
            Duration watchdogLease) {
        this.requests = requests;
        this.keys = keys;
        this.leases = leases;
        this.entries = entries;
        this.ticker = ticker;
        this.watchdogLease = watchdogLease;
    }

    Set<HeldClaim> renew(Collection<HeldClaim> holds) {
        if (holds.isEmpty()) {
            return Set.of();
        }
        List<HeldClaim> batch = new ArrayList<>(holds);
        // keep alive each lease the holds are on (the shared one, nearly always), pipelined with the key check
        Map<LeaseRef, CompletableFuture<LeaseKeepAliveResponse>> keepAlives = new HashMap<>(); // identity equality
        long sent = ticker.read();
        List<@Nullable Entry> known = new ArrayList<>(batch.size());
        for (HeldClaim h : batch) {
            Entry e = entries.get(path(h));
            known.add(e);
            if (e != null && !keepAlives.containsKey(e.lease)) {
                keepAlives.put(e.lease, leases.keepAliveOnce(e.lease));
            }
        }
        List<CompletableFuture<TxnResponse>> reads = new ArrayList<>();
        for (int from = 0; from < batch.size(); from += MAX_TXN_OPS) {
            List<HeldClaim> chunk = batch.subList(from, Math.min(batch.size(), from + MAX_TXN_OPS));
            Op[] ops = new Op[chunk.size()];
            for (int i = 0; i < ops.length; i++) {
                ops[i] = Op.get(bytes(path(chunk.get(i))), KEY_ONLY);
            }
            reads.add(requests.kv().txn().Then(ops).commit());
        }
        Set<LeaseRef> goneLeases = new HashSet<>();
        RuntimeException failure = null;
        for (Map.Entry<LeaseRef, CompletableFuture<LeaseKeepAliveResponse>> ka : keepAlives.entrySet()) {
            try {
                var unused = requests.await(ka.getValue(), "keep-alive");
                ka.getKey().refreshed(sent);
            } catch (RuntimeException e) {
                if (EtcdLeases.leaseNotFound(e)) {
                    goneLeases.add(ka.getKey());
                    leases.leaseGone(ka.getKey());
                } else if (failure == null) {
                    failure = e;
                }
            }
        }
        List<@Nullable KeyValue> found = new ArrayList<>(batch.size());
        for (CompletableFuture<TxnResponse> read : reads) {
            try {
                for (GetResponse g : requests.await(read, "renew").getGetResponses()) {
                    found.add(first(g));
                }
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                }
            }
        }
        if (failure != null) {
            retireUnconfirmed(keepAlives.keySet());
            throw failure;
        }
        Set<HeldClaim> gone = new HashSet<>();
        for (int i = 0; i < batch.size(); i++) {
            HeldClaim h = batch.get(i);
            Entry e = known.get(i);
            KeyValue kvNow = found.get(i);
            boolean alive = e != null
                    && !goneLeases.contains(e.lease)
                    && kvNow != null
                    && kvNow.getCreateRevision() == h.fencingToken()
                    && kvNow.getLease() == e.lease.id;
            if (!alive) {
                gone.add(h);
                entries.forget(path(h), e);
            }
        }
        return gone;
    }

    /** Retires each lease that has gone unconfirmed for a whole watchdog lease, with the entries on it. */
    private void retireUnconfirmed(Set<LeaseRef> renewed) {
        long now = ticker.read();
        for (LeaseRef l : renewed) {
            if (now - l.refreshedAt() >= watchdogLease.toNanos()) {
                leases.retire(l);
                entries.forgetAllOn(l);
            }
        }
    }

    private String path(HeldClaim h) {
        return keys.holdKey(h.key().name(), h.owner().value(), h.kind(), h.mode());
    }
}
