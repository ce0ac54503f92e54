package io.distlock.testkit;

import io.distlock.LockInfo;
import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.ClaimAdmin;
import io.distlock.spi.ClaimStore;
import io.distlock.spi.CounterStore;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import io.distlock.spi.Subscription;
import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * One client's view of an {@link InMemoryLockServer}'s read-write locks, semaphores and latches: the {@link
 * ClaimStore} and {@link CounterStore} the engine drives.
 */
class InMemorySyncStore implements ClaimStore, CounterStore, ClaimAdmin {
    final InMemoryLockServer server;

    InMemorySyncStore(InMemoryLockServer server) {
        this.server = server;
    }

    @Override
    public Attempt tryAcquire(Claim claim, boolean queue) {
        long r = server.claims(c -> c.tryAcquire(claim, queue));
        return r > 0 ? Attempt.acquired(r) : Attempt.busy(Duration.ofNanos(-r));
    }

    @Override
    public void abandon(Claim claim) {
        server.claims(c -> {
            c.abandon(claim);
            return null;
        });
    }

    @Override
    public boolean release(HeldClaim hold) {
        return server.claims(c -> c.release(hold));
    }

    @Override
    public Set<HeldClaim> renew(Collection<HeldClaim> holds, Duration lease) {
        long nanos = lease.toNanos();
        return server.claims(c -> {
            Set<HeldClaim> gone = new HashSet<>();
            for (HeldClaim h : holds) {
                if (!c.renew(h, nanos)) {
                    gone.add(h);
                }
            }
            return gone;
        });
    }

    @Override
    public int available(LockKey key, Claim.Kind kind, int size) {
        return server.claims(c -> c.available(key.name(), kind, size));
    }

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
    public Subscription subscribe(LockKey key, Runnable wakeUp) {
        Runnable cancel = server.subscribe(key.name(), wakeUp);
        return cancel::run;
    }

    @Override
    public Optional<LockInfo> inspect(LockKey key) {
        return server.claims(c -> c.inspect(key.name()));
    }

    @Override
    public List<LockInfo> list(String prefix, int limit) {
        return server.claims(c -> c.list(prefix, limit));
    }

    @Override
    public Optional<LockInfo> forceRelease(LockKey key, OwnerId owner) {
        return server.claims(c -> c.forceRelease(key.name(), owner));
    }

    @Override
    public void close() {}

    @Override
    public String toString() {
        return "InMemorySyncStore";
    }
}
