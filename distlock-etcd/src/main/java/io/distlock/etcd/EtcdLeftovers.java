package io.distlock.etcd;

import static io.distlock.etcd.EtcdRequests.bytes;
import static io.distlock.etcd.EtcdRequests.first;

import io.distlock.etcd.EtcdEntries.Entry;
import io.distlock.etcd.EtcdLeases.LeaseRef;
import io.distlock.internal.Ticker;
import io.distlock.spi.OwnerId;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Why
 *   A write whose answer never came may have been applied, at once or later: etcd applies a request that reached it
 *   whether or not the answer gets back, and a request held up on its way (a member cut off, a slow link) can reach a
 *   member and be applied after the client gave up on it, even after the clean-up delete the engine sent at once on
 *   another connection. The clean-up itself may fail too. A key left so on the client's shared watchdog lease is kept
 *   alive by the client's own keep-alives for its other holds and waiters, and keeps every other owner of the name out
 *   for as long as the client keeps asking. Keys on a lease of a hold's own end with that lease and are not tracked.
 *
 * Doubts
 *   The store notes a doubt about a key path when a call that writes it (an acquire, a hand-off) fails, and when the
 *   delete of a key it gives up on (abandon, the end of a lost hold) fails. A doubt with a create revision (the end of
 *   a lost hold) is settled by one delete owner-checked by that revision. A doubt without one is a write whose fate is
 *   unknown: each sweep reads the path and deletes the key there, owner-checked by the create revision it read, if it
 *   is on the client's shared lease and is not an entry of the client (EtcdEntries). Since such a write may still be
 *   applied later, the doubt stays for WINDOW after the failure, then goes; it goes earlier when the shared lease it was
 *   about is no longer the client's, since then nothing keeps a key on it alive.
 *
 * Sweeps
 *   The watchdog's tick and acquires (at most every SWEEP_EVERY) sweep, with asynchronous requests that neither waits
 *   for. Those are also the only calls that keep the shared lease alive, so a client that no longer sweeps lets its
 *   shared lease, and any key left on it, run out.
 *
 * Never a key in use
 *   A writer of a path with a doubt marks the path for as long as it runs (enter), after waiting out a sweep of that
 *   path in flight; a sweep skips a marked path. The engine never runs two writers of one owner's path at once, so a
 *   sweep never reads a key that a writer has put and not yet recorded; a key recorded as an entry is never swept.
 */
/** Keys this client may have left in etcd without knowing: writes whose answer was lost, deletes that failed. */
final class EtcdLeftovers {
    private static final Logger log = LoggerFactory.getLogger(EtcdLeftovers.class);
    static final long WINDOW_NANOS = TimeUnit.MINUTES.toNanos(1);
    private static final long SWEEP_EVERY_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    private static final int MAX_DOUBTS = 4096;
    private static final Runnable NOTHING = () -> {};

    private final EtcdRequests requests;
    private final EtcdLeases leases;
    private final EtcdEntries entries;
    private final Ticker ticker;
    private final ConcurrentHashMap<String, Doubt> doubts = new ConcurrentHashMap<>();
    /** Paths a writer or a sweep is using now; the future completes when it is done. */
    private final ConcurrentHashMap<String, CompletableFuture<Void>> inUse = new ConcurrentHashMap<>();

    private final AtomicLong nextSweep;

    EtcdLeftovers(EtcdRequests requests, EtcdLeases leases, EtcdEntries entries, Ticker ticker) {
        this.requests = requests;
        this.leases = leases;
        this.entries = entries;
        this.ticker = ticker;
        this.nextSweep = new AtomicLong(ticker.read());
    }

    /** A doubt about a path: the create revision of the key to delete, or 0 for a write whose fate is unknown. */
    private record Doubt(long revision, long leaseId, long since) {}

    /** A write of {@code path} that may have put a key on {@code lease} failed without a definite answer. */
    void unknownWrite(String path, @Nullable LeaseRef lease) {
        if (lease == null || !lease.shared) {
            return; // a lease of a hold's own ends by itself
        }
        note(path, new Doubt(0, lease.id, ticker.read()));
    }

    /** The delete of a key of this client with create revision {@code revision} at {@code path} failed. */
    void failedDelete(String path, long revision) {
        note(path, new Doubt(revision, 0, ticker.read()));
    }

    private void note(String path, Doubt d) {
        if (doubts.size() >= MAX_DOUBTS && !doubts.containsKey(path)) {
            log.warn("distlock: too many etcd keys in doubt; {} is left to its lease", OwnerId.redact(path));
            return;
        }
        // a write of unknown fate covers a known revision too: its sweep deletes any key of the path we do not know
        doubts.merge(path, d, (old, neu) -> old.revision == 0 && neu.revision != 0 ? old : neu);
    }

    /**
     * Marks {@code path} as written by the caller until the returned action runs, after waiting out a sweep of it in
     * flight; nothing to mark if the path is not in doubt. An interrupt is kept for the caller, not obeyed.
     */
    Runnable enter(String path) {
        if (!doubts.containsKey(path)) {
            return NOTHING;
        }
        CompletableFuture<Void> mine = new CompletableFuture<>();
        long bound = requests.timeout().toNanos() * 3;
        boolean interrupted = false;
        try {
            for (; ; ) {
                CompletableFuture<Void> other = inUse.putIfAbsent(path, mine);
                if (other == null) {
                    return () -> {
                        inUse.remove(path, mine);
                        mine.complete(null);
                    };
                }
                try {
                    other.get(bound, TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    // done either way
                } catch (TimeoutException e) {
                    inUse.remove(path, other); // a sweep's requests time out sooner; do not wait for a lost one
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** {@link #sweep} unless an acquire swept within SWEEP_EVERY. */
    void sweepIfDue() {
        if (doubts.isEmpty()) {
            return;
        }
        long now = ticker.read();
        long next = nextSweep.get();
        if (now - next >= 0 && nextSweep.compareAndSet(next, now + SWEEP_EVERY_NANOS)) {
            sweep();
        }
    }

    /** Sends the requests that settle each doubt, and does not wait for them. */
    void sweep() {
        long now = ticker.read();
        for (Map.Entry<String, Doubt> e : doubts.entrySet()) {
            String path = e.getKey();
            Doubt d = e.getValue();
            if (d.revision == 0 && (now - d.since > WINDOW_NANOS || !leases.isShared(d.leaseId))) {
                doubts.remove(path, d);
                continue;
            }
            CompletableFuture<Void> mark = new CompletableFuture<>();
            if (inUse.putIfAbsent(path, mark) != null) {
                continue; // a writer has it now; the next sweep will see
            }
            CompletableFuture<?> settled;
            try {
                settled = d.revision != 0 ? deleteKnown(path, d) : deleteUnknown(path, d);
            } catch (RuntimeException ex) {
                settled = CompletableFuture.failedFuture(ex);
            }
            settled.whenComplete((r, t) -> {
                if (t != null) {
                    log.debug("distlock: could not settle etcd key {} yet", OwnerId.redact(path), t);
                }
                inUse.remove(path, mark);
                mark.complete(null);
            });
        }
    }

    private CompletableFuture<?> deleteKnown(String path, Doubt d) {
        return requests.deleteIfRevisionAsync(bytes(path), d.revision).thenAccept(gone -> {
            doubts.remove(path, d);
            if (gone != null) {
                log.debug("distlock: deleted etcd key {} whose delete had failed", OwnerId.redact(path));
            }
        });
    }

    private CompletableFuture<?> deleteUnknown(String path, Doubt d) {
        ByteSequence k = bytes(path);
        return requests.kv()
                .get(k)
                .orTimeout(requests.timeout().toNanos(), TimeUnit.NANOSECONDS)
                .thenCompose(r -> {
                    KeyValue kv = first(r);
                    if (kv == null || !(kv.getLease() == d.leaseId || leases.isShared(kv.getLease()))) {
                        return CompletableFuture.completedFuture(null);
                    }
                    Entry known = entries.get(path);
                    if (known != null && known.revision == kv.getCreateRevision()) {
                        return CompletableFuture.completedFuture(null); // ours, and counted on
                    }
                    return requests.deleteIfRevisionAsync(k, kv.getCreateRevision())
                            .thenAccept(gone -> {
                                if (gone != null) {
                                    log.info(
                                            "distlock: deleted etcd key {} (create revision {}) left by a call whose"
                                                    + " answer was lost",
                                            OwnerId.redact(path),
                                            gone.getCreateRevision());
                                }
                            });
                });
    }
}
