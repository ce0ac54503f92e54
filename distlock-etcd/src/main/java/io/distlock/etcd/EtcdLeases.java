package io.distlock.etcd;

import io.distlock.internal.Ticker;
import io.etcd.jetcd.Lease;
import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdException;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.options.PutOption;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Two kinds of lease
 *   Holds renewed by the engine's watchdog, and their waiters, share one etcd lease per client, granted lazily and kept
 *   alive by the watchdog's tick (EtcdRenewal) with one keep-alive-once, not by jetcd's keep-alive stream, which can
 *   stop without telling anyone (jetcd #965, #1383). A hold with a fixed lease gets an etcd lease of its own, granted
 *   with the hold's length as its TTL and never kept alive once granted, so etcd ends it by itself, whether this
 *   client lives or not. While such an owner waits in the queue, its re-checks keep its own lease alive, so that its
 *   place outlives the wait; the keep-alive sent with the grant restarts the full TTL from the grant. LeaseChoice picks one of the two
 *   for the key a call writes, from Lease.renewed() of the hold's lease.
 *
 * Dating a lease
 *   Each LeaseRef remembers when the request behind its last confirmed grant or keep-alive was sent (ticker time): etcd
 *   started the TTL after that. The engine dates a hold's lease from just before tryAcquire; the etcd lease must not end
 *   before the hold's, or a holder could believe in a hold that etcd has already given to another owner.
 *
 * Arithmetic
 *   etcd counts TTLs in whole seconds, so every TTL is rounded up. A fresh lease is granted inside the call that uses
 *   it, so it is safe. The shared lease has one second of slack (TTL = watchdog lease + 1 s, rounded up): a hold dated
 *   at most one second after the sending of the shared lease's last confirmed keep-alive ends before the lease can.
 *   refreshIfDue decides what a call needs: a reused per-hold lease (a queued waiter's own) always gets a keep-alive
 *   pipelined with the call's request, which the call waits for; the shared lease gets one sent in the background when
 *   its confirmation is older than half the slack (its answer dates the lease for later acquires), and only a call that
 *   finds it older than three quarters of the slack waits for it, with its own request.
 *
 * Loss
 *   A lease that etcd no longer knows ("lease not found") takes every key on it along; leaseGone marks it dead, and the
 *   next watchdog hold takes a new shared lease. revokeQuietly ends a lease nobody needs any more (etcd deletes its
 *   keys), without waiting for the answer.
 */
/** The etcd leases of one client: the shared watchdog lease, per-hold leases for fixed leases, keep-alives. */
final class EtcdLeases {
    private static final Logger log = LoggerFactory.getLogger(EtcdLeases.class);
    private static final long SLACK_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long REFRESH_NANOS = SLACK_NANOS / 2; // send a keep-alive of the shared lease, not waiting
    private static final long CONFIRM_NANOS = SLACK_NANOS * 3 / 4; // and wait for it: the slack is nearly used up

    private final Lease leases;
    private final EtcdRequests requests;
    private final Ticker ticker;
    private final long sharedTtlSeconds;
    private final ReentrantLock sharedLock = new ReentrantLock();
    private volatile @Nullable LeaseRef shared;

    /** @param watchdogLease the length of the client's renewed leases, which the shared etcd lease covers */
    EtcdLeases(Lease leases, EtcdRequests requests, Ticker ticker, Duration watchdogLease) {
        this.leases = leases;
        this.requests = requests;
        this.ticker = ticker;
        this.sharedTtlSeconds = ceilSeconds(watchdogLease.toNanos() + SLACK_NANOS);
    }

    /** The shared lease, granted now if there is none alive. */
    LeaseRef shared() {
        LeaseRef l = shared;
        if (l != null && !l.dead) {
            return l;
        }
        sharedLock.lock();
        try {
            l = shared;
            if (l == null || l.dead) {
                long sent = ticker.read();
                long id = requests.await(leases.grant(sharedTtlSeconds), "lease grant")
                        .getID();
                l = new LeaseRef(id, true, sent);
                shared = l;
            }
            return l;
        } finally {
            sharedLock.unlock();
        }
    }

    /** A lease of its own for a hold with a fixed lease: its TTL is the hold's length, rounded up to whole seconds. */
    LeaseRef grantFor(Duration lease) {
        long sent = ticker.read();
        long id = requests.await(leases.grant(ceilSeconds(lease.toNanos())), "lease grant")
                .getID();
        return new LeaseRef(id, false, sent);
    }

    /** One keep-alive of {@code lease}, not waited for. */
    CompletableFuture<LeaseKeepAliveResponse> keepAliveOnce(LeaseRef lease) {
        return leases.keepAliveOnce(lease.id);
    }

    /**
     * Whether a hold dated at {@code start} may rest on {@code lease} with no keep-alive at all: it is the shared lease
     * and its last confirmation is recent enough that {@link #refreshIfDue} would send none.
     */
    boolean needsNoRefresh(LeaseRef lease, long start) {
        return lease.shared && start - lease.refreshedAt() <= REFRESH_NANOS;
    }

    /**
     * The keep-alive of {@code lease} that a call dating its hold at {@code start} must wait for, sent now to be
     * pipelined with the call's request: a per-hold lease from before this call always needs one; the shared lease only
     * when its last confirmation is older than {@link #CONFIRM_NANOS}, and from {@link #REFRESH_NANOS} on it gets one in
     * the background (the confirmation covers this hold; the answer dates the lease for later ones). Null if the call
     * need not wait.
     */
    @Nullable
    Refresh refreshIfDue(LeaseRef lease, long start) {
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
        if (r == null
                || now - r.sentAt
                        > (mustWait ? REFRESH_NANOS : requests.timeout().toNanos())) {
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

    /** etcd no longer has the lease, nor any key on it. */
    void leaseGone(LeaseRef lease) {
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

    /** Gives up a lease that went unconfirmed for a whole lease, so no later keep-alive revives its keys. */
    void retire(LeaseRef lease) {
        log.warn("distlock: etcd lease {} went unconfirmed for a whole lease; retiring it", lease.id);
        leaseGone(lease);
        revokeQuietly(lease);
    }

    /** Revokes a lease nobody needs (etcd deletes its keys), without waiting for the answer. */
    void revokeQuietly(LeaseRef lease) {
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

    /** The shared lease if there is one alive, without granting one. */
    @Nullable
    LeaseRef currentShared() {
        LeaseRef s = shared;
        return s != null && !s.dead ? s : null;
    }

    /** Whether {@code id} is the client's current shared lease. */
    boolean isShared(long id) {
        LeaseRef s = shared;
        return s != null && s.id == id;
    }

    /** Revokes the lease {@code id} (etcd deletes its keys), without waiting for the answer. */
    void revokeQuietly(long id) {
        try {
            leases.revoke(id).whenComplete((r, t) -> {
                if (t != null && !leaseNotFound(t)) {
                    log.debug("distlock: revoking etcd lease {} failed; it ends with its TTL", id, t);
                }
            });
        } catch (RuntimeException e) {
            log.debug("distlock: revoking etcd lease {} failed; it ends with its TTL", id, e);
        }
    }

    /** Revokes the shared lease and {@code others}, waiting for the answers; for closing the store. */
    void revokeAll(Collection<Long> others) {
        List<Long> ids = new ArrayList<>(others);
        LeaseRef s = shared;
        shared = null;
        if (s != null && !ids.contains(s.id)) {
            ids.add(s.id);
        }
        List<CompletableFuture<?>> revokes = new ArrayList<>();
        try {
            for (long id : ids) {
                revokes.add(leases.revoke(id));
            }
            for (CompletableFuture<?> f : revokes) {
                var unused = requests.await(f, "lease revoke");
            }
        } catch (RuntimeException e) {
            if (!leaseNotFound(e)) {
                log.debug("distlock: revoking etcd leases on close failed; they end with their TTL", e);
            }
        }
    }

    /**
     * Whether {@code t} says that etcd does not know the lease (expired or revoked): as jetcd's {@link EtcdException},
     * or as the gRPC status that jetcd passes on unconverted when its retries of a call give up, anywhere in the
     * causes.
     */
    static boolean leaseNotFound(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof EtcdException ee && ee.getErrorCode() == ErrorCode.NOT_FOUND) {
                String m = ee.getMessage();
                return m != null && m.contains("lease not found");
            }
            Status status = c instanceof StatusRuntimeException sre
                    ? sre.getStatus()
                    : c instanceof StatusException se ? se.getStatus() : null;
            if (status != null) {
                String d = status.getDescription();
                return status.getCode() == Status.Code.NOT_FOUND && d != null && d.contains("lease not found");
            }
        }
        return false;
    }

    static long ceilSeconds(long nanos) {
        long s = TimeUnit.NANOSECONDS.toSeconds(nanos);
        if (TimeUnit.SECONDS.toNanos(s) < nanos) {
            s++;
        }
        return Math.max(1, s);
    }

    /** One etcd lease of this client. */
    static final class LeaseRef {
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

    /** A keep-alive in flight: {@link #confirm} waits for it and dates the lease from when it was sent. */
    final class Refresh {
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
            var unused = requests.await(answer, "keep-alive");
            lease.refreshed(sentAt);
        }
    }

    /**
     * The lease a key written by one call goes on: the shared lease for watchdog holds, otherwise a per-hold lease
     * granted on first use and kept across the call's rounds. Closing revokes a per-hold lease that no key kept.
     */
    final class LeaseChoice implements AutoCloseable {
        private final boolean watchdogHold;
        private final Duration lease;
        private @Nullable LeaseRef fresh; // granted in this call and not kept by a key yet

        LeaseChoice(io.distlock.spi.Lease lease) {
            this.watchdogHold = lease.renewed();
            this.lease = lease.length();
        }

        LeaseRef pick() {
            if (watchdogHold) {
                return shared();
            }
            LeaseRef f = fresh;
            if (f == null || f.dead) {
                f = grantFor(lease);
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
}
