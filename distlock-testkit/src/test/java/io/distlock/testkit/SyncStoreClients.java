package io.distlock.testkit;

import io.distlock.LockInfo;
import io.distlock.internal.EngineClient;
import io.distlock.internal.EngineConfig;
import io.distlock.internal.LockEngine;
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
import java.util.function.Function;

/**
 * In-memory clients whose read-write locks, semaphores and latches run over a decorated store: a broken variant, or
 * the standard store with lost replies. Locks and the admin keep the standard in-memory store.
 */
final class SyncStoreClients {
    private SyncStoreClients() {}

    static EngineClient client(
            InMemoryLockServer server,
            Duration watchdogLease,
            boolean strictQueue,
            Function<InMemoryLockStore, ClaimStore> claims,
            Function<InMemoryLockStore, CounterStore> counters) {
        InMemoryLockStore standard = InMemoryLockStore.of(server, strictQueue);
        EngineConfig config = EngineConfig.defaults().withWatchdogLease(watchdogLease);
        return new DecoratedClient(
                LockEngine.create(new SplitStore(standard, claims.apply(standard), counters.apply(standard)), config));
    }

    /** A client over the standard stores whose count-downs lose their first reply. */
    static EngineClient losingCountDownReplies(InMemoryLockServer server, Duration watchdogLease, boolean strict) {
        return client(server, watchdogLease, strict, s -> s, LosingCountDownReplies::new);
    }

    private static final class DecoratedClient extends EngineClient {
        DecoratedClient(LockEngine engine) {
            super(engine);
        }
    }

    /** Lock claims to the standard store, other claims to {@code claims}, latches to {@code counters}. */
    private static final class SplitStore implements ClaimStore, ClaimAdmin, CounterStore {
        private final InMemoryLockStore standard;
        private final ClaimStore claims;
        private final CounterStore counters;

        SplitStore(InMemoryLockStore standard, ClaimStore claims, CounterStore counters) {
            this.standard = standard;
            this.claims = claims;
            this.counters = counters;
        }

        private ClaimStore of(Claim.Kind kind) {
            return kind == Claim.Kind.LOCK ? standard : claims;
        }

        @Override
        public Set<Claim.Kind> kinds() {
            return standard.kinds();
        }

        @Override
        public Attempt tryAcquire(Claim claim, boolean queue) {
            return of(claim.kind()).tryAcquire(claim, queue);
        }

        @Override
        public void abandon(Claim claim) {
            of(claim.kind()).abandon(claim);
        }

        @Override
        public boolean release(HeldClaim hold) {
            return of(hold.kind()).release(hold);
        }

        @Override
        public Set<HeldClaim> renew(Collection<HeldClaim> holds, Duration lease) {
            Set<HeldClaim> gone = new HashSet<>();
            for (HeldClaim h : holds) {
                gone.addAll(of(h.kind()).renew(List.of(h), lease));
            }
            return gone;
        }

        @Override
        public Subscription subscribe(LockKey key, Runnable wakeUp) {
            return claims.subscribe(key, wakeUp);
        }

        @Override
        public int available(LockKey key, Claim.Kind kind, int size) {
            return of(kind).available(key, kind, size);
        }

        @Override
        public boolean trySetCount(LockKey key, long count, Duration expiry) {
            return counters.trySetCount(key, count, expiry);
        }

        @Override
        public long countDown(LockKey key, String callId, Duration expiry) {
            return counters.countDown(key, callId, expiry);
        }

        @Override
        public long count(LockKey key) {
            return counters.count(key);
        }

        @Override
        public Subscription watchZero(LockKey key, Runnable wakeUp) {
            return counters.watchZero(key, wakeUp);
        }

        @Override
        public Optional<LockInfo> inspect(LockKey key) {
            return standard.inspect(key);
        }

        @Override
        public List<LockInfo> list(String prefix, int limit) {
            return standard.list(prefix, limit);
        }

        @Override
        public Optional<LockInfo> forceRelease(LockKey key) {
            return standard.forceRelease(key);
        }

        @Override
        public Optional<LockInfo> forceRelease(LockKey key, OwnerId owner) {
            return standard.forceRelease(key, owner);
        }

        @Override
        public void close() {}
    }
}
