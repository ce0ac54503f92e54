package io.distlock.testkit;

import io.distlock.LockInfo;
import io.distlock.spi.AcquiresTogether;
import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.ClaimAdmin;
import io.distlock.spi.ClaimStore;
import io.distlock.spi.CounterStore;
import io.distlock.spi.HandOff;
import io.distlock.spi.HandsOff;
import io.distlock.spi.HandsOffClaims;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import io.distlock.spi.QueueOrdered;
import io.distlock.spi.Subscription;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/*
 * Overview
 *
 * Dispatch
 *   One client's view of an InMemoryLockServer, and the one store the engine drives for every kind. Lock claims go to
 *   the server's lock table (InMemoryLockServer: one hold per name, a fair queue, hand-off); read-write lock and
 *   semaphore claims and latch counters go to InMemoryClaims. A name is one kind at a time, so a held claim finds its
 *   table by its kind, and the admin asks the lock table first.
 *
 * Spare tokens
 *   A lock's grant reserves what the claim asks, up to SPARE_TOKEN_CAP (few, so that the contract suite also sees a
 *   client run out of them and hand off through the store); none in the strict-queue mode, whose every grant is a
 *   queue position.
 */
/** One client's view of an {@link InMemoryLockServer}: the store the engine drives. */
class InMemoryLockStore implements ClaimStore, ClaimAdmin, CounterStore, HandsOff, HandsOffClaims, AcquiresTogether {
    /** The most spare tokens a lock's grant reserves, whatever the claim asks. */
    static final int SPARE_TOKEN_CAP = 3;

    final InMemoryLockServer server;
    private final boolean strictQueue;

    InMemoryLockStore(InMemoryLockServer server) {
        this(server, false);
    }

    private InMemoryLockStore(InMemoryLockServer server, boolean strictQueue) {
        this.server = server;
        this.strictQueue = strictQueue;
    }

    @Override
    public Set<Claim.Kind> kinds() {
        return EnumSet.allOf(Claim.Kind.class);
    }

    @Override
    public Attempt tryAcquire(Claim claim, boolean queue) {
        if (claim.kind() != Claim.Kind.LOCK) {
            long r = server.claims(c -> c.tryAcquire(claim, queue));
            return r > 0 ? Attempt.acquired(r) : Attempt.busy(Duration.ofNanos(-r));
        }
        int spare = strictQueue ? 0 : Math.min(claim.spareTokens(), SPARE_TOKEN_CAP);
        long r = server.tryAcquire(
                claim.key().name(), claim.owner(), claim.lease().length().toNanos(), queue, strictQueue, spare);
        return r > 0 ? Attempt.acquired(r, spare) : Attempt.busy(Duration.ofNanos(-r));
    }

    /** Each claim in turn: the server has no round trips to save, but the engine's batched path runs. */
    @Override
    public List<Attempt> tryAcquireAll(List<Claim> claims) {
        List<Attempt> answers = new ArrayList<>(claims.size());
        for (Claim c : claims) {
            answers.add(tryAcquire(c, false));
        }
        return answers;
    }

    @Override
    public List<Boolean> releaseAll(List<HeldClaim> holds) {
        List<Boolean> answers = new ArrayList<>(holds.size());
        for (HeldClaim h : holds) {
            answers.add(release(h));
        }
        return answers;
    }

    @Override
    public void abandon(Claim claim) {
        if (claim.kind() == Claim.Kind.LOCK) {
            server.abandon(claim.key().name(), claim.owner());
            return;
        }
        server.claims(c -> {
            c.abandon(claim);
            return null;
        });
    }

    @Override
    public boolean release(HeldClaim hold) {
        if (hold.kind() == Claim.Kind.LOCK) {
            return server.release(hold.key().name(), hold.owner());
        }
        return server.claims(c -> c.release(hold));
    }

    @Override
    public Set<HeldClaim> renew(Collection<HeldClaim> holds, Duration lease) {
        long nanos = lease.toNanos();
        Set<HeldClaim> gone = new HashSet<>();
        for (HeldClaim h : holds) {
            boolean renewed = h.kind() == Claim.Kind.LOCK
                    ? server.renew(h.key().name(), h.owner(), nanos)
                    : server.claims(c -> c.renew(h, nanos));
            if (!renewed) {
                gone.add(h);
            }
        }
        return gone;
    }

    @Override
    public HandOff handOff(Claim to, OwnerId from) {
        return server.handOff(
                to.key().name(), from, to.owner(), to.lease().length().toNanos(), strictQueue);
    }

    @Override
    public HandOff handOff(HeldClaim from, Claim to) {
        long r = server.claims(c -> c.handOff(from, to));
        return r > 0 ? HandOff.granted(r) : r == 0 ? HandOff.notHeld() : HandOff.queued();
    }

    @Override
    public int available(LockKey key, Claim.Kind kind, int size) {
        if (kind == Claim.Kind.LOCK) {
            return server.lockHeld(key.name()) ? 0 : 1;
        }
        return server.claims(c -> c.available(key.name(), kind, size));
    }

    @Override
    public Subscription subscribe(LockKey key, Runnable wakeUp) {
        Runnable cancel = server.subscribe(key.name(), wakeUp);
        return cancel::run;
    }

    // ---------------------------------------------------------------- CounterStore

    @Override
    public boolean trySetCount(LockKey key, long count, Duration expiry) {
        return server.claims(c -> c.trySetCount(key.name(), count, expiry.toNanos()));
    }

    @Override
    public long countDown(LockKey key, String callId, Duration expiry) {
        return server.claims(c -> c.countDown(key.name(), callId, expiry.toNanos()));
    }

    @Override
    public long count(LockKey key) {
        return server.claims(c -> c.count(key.name()));
    }

    @Override
    public Subscription watchZero(LockKey key, Runnable wakeUp) {
        return subscribe(key, wakeUp);
    }

    // ---------------------------------------------------------------- ClaimAdmin

    @Override
    public Optional<LockInfo> inspect(LockKey key) {
        Optional<LockInfo> lock = server.inspect(key.name());
        return lock.isPresent() ? lock : server.claims(c -> c.inspect(key.name()));
    }

    @Override
    public List<LockInfo> list(String prefix, int limit) {
        List<LockInfo> all = new ArrayList<>(server.list(prefix, limit));
        all.addAll(server.claims(c -> c.list(prefix, limit)));
        all.sort(Comparator.comparing(LockInfo::name));
        return all.size() <= limit ? all : List.copyOf(all.subList(0, limit));
    }

    @Override
    public Optional<LockInfo> forceRelease(LockKey key) {
        Optional<LockInfo> lock = server.forceRelease(key.name());
        return lock.isPresent() ? lock : server.claims(c -> c.forceReleaseAll(key.name()));
    }

    @Override
    public Optional<LockInfo> forceRelease(LockKey key, OwnerId owner) {
        Optional<LockInfo> lock = server.inspect(key.name());
        if (lock.isPresent()) {
            return server.release(key.name(), owner) ? lock : Optional.empty();
        }
        return server.claims(c -> c.forceRelease(key.name(), owner));
    }

    @Override
    public void close() {}

    @Override
    public String toString() {
        return strictQueue ? "InMemoryLockStore[strict queue]" : "InMemoryLockStore";
    }

    /** The store for {@code strictQueue}: one whose queue is the only order is {@link QueueOrdered}. */
    static InMemoryLockStore of(InMemoryLockServer server, boolean strictQueue) {
        return strictQueue ? new StrictQueue(server) : new InMemoryLockStore(server);
    }

    /** The store whose queue is the only order between clients, as ZooKeeper's and etcd's. */
    static final class StrictQueue extends InMemoryLockStore implements QueueOrdered {
        StrictQueue(InMemoryLockServer server) {
            super(server, true);
        }
    }
}
