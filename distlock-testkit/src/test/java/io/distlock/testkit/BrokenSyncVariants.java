package io.distlock.testkit;

import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.ClaimStore;
import io.distlock.spi.CounterStore;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.Lease;
import io.distlock.spi.LockKey;
import io.distlock.spi.Mode;
import io.distlock.spi.OwnerId;
import io.distlock.spi.Subscription;
import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Read-write lock, semaphore and latch stores with one defect each, as decorators of the in-memory store, and the
 * contract suites over them; {@link ContractCanFailTest} shows the suites catch each defect.
 */
final class BrokenSyncVariants {
    private BrokenSyncVariants() {}

    // ---------------------------------------------------------------- the defects

    /**
     * A writer is let in beside readers: an exclusive claim that finds only readers is granted as one more shared
     * hold. Writers still exclude each other and readers still wait for a writer (the decorators of all clients share
     * which writers they let in that way).
     */
    static final class WriterBesideReaders extends ForwardingClaimStore {
        /** Per name, the owners of write holds granted as shared ones. */
        private final Map<String, Set<OwnerId>> sneaked;

        WriterBesideReaders(ClaimStore delegate, Map<String, Set<OwnerId>> sneaked) {
            super(delegate);
            this.sneaked = sneaked;
        }

        @Override
        public Attempt tryAcquire(Claim claim, boolean queue) {
            String name = claim.key().name();
            Set<OwnerId> writers = sneaked.computeIfAbsent(name, n -> ConcurrentHashMap.newKeySet());
            boolean otherSneaked = writers.stream().anyMatch(o -> !o.equals(claim.owner()));
            if (claim.kind() != Claim.Kind.READ_WRITE_LOCK || otherSneaked) {
                return otherSneaked ? Attempt.busy(Duration.ofMillis(20)) : super.tryAcquire(claim, queue);
            }
            if (claim.mode() == Mode.SHARED) {
                return super.tryAcquire(claim, queue);
            }
            Attempt a = super.tryAcquire(claim, queue);
            int free = delegate.available(claim.key(), claim.kind(), claim.size());
            if (a instanceof Attempt.Acquired || free == 0 || free == claim.size()) {
                return a; // granted, or held by a writer, or free: nothing to sneak past
            }
            delegate.abandon(claim);
            Attempt shared = super.tryAcquire(asShared(claim), false);
            if (shared instanceof Attempt.Acquired) {
                writers.add(claim.owner());
            }
            return shared;
        }

        @Override
        public boolean release(HeldClaim hold) {
            if (isSneaked(hold)) {
                sneaked.getOrDefault(hold.key().name(), Set.of()).remove(hold.owner());
                return super.release(asShared(hold));
            }
            return super.release(hold);
        }

        @Override
        public Set<HeldClaim> renew(Collection<HeldClaim> holds, Duration lease) {
            Set<HeldClaim> gone = new HashSet<>();
            for (HeldClaim h : holds) {
                HeldClaim stored = isSneaked(h) ? asShared(h) : h;
                if (!super.renew(List.of(stored), lease).isEmpty()) {
                    gone.add(h);
                }
            }
            return gone;
        }

        private boolean isSneaked(HeldClaim h) {
            Set<OwnerId> writers = sneaked.get(h.key().name());
            return h.mode() == Mode.EXCLUSIVE && writers != null && writers.contains(h.owner());
        }

        private static Claim asShared(Claim c) {
            return Claim.of(c.key(), c.kind(), Mode.SHARED, c.permits(), c.size(), c.owner(), c.lease());
        }

        private static HeldClaim asShared(HeldClaim h) {
            return new HeldClaim(h.key(), h.kind(), h.owner(), Mode.SHARED, h.fencingToken());
        }
    }

    /** A writer never keeps a place in the queue, so readers that come after a waiting writer pass it. */
    static final class ReaderPastWaitingWriter extends ForwardingClaimStore {
        ReaderPastWaitingWriter(ClaimStore delegate) {
            super(delegate);
        }

        @Override
        public Attempt tryAcquire(Claim claim, boolean queue) {
            boolean writer = claim.kind() == Claim.Kind.READ_WRITE_LOCK && claim.mode() == Mode.EXCLUSIVE;
            return super.tryAcquire(claim, queue && !writer);
        }
    }

    /** Permits taken from a bare counter: the store keeps a semaphore's holds for a day, whatever their lease. */
    static final class PermitsWithoutLeases extends ForwardingClaimStore {
        private static final Duration DAY = Duration.ofDays(1);

        PermitsWithoutLeases(ClaimStore delegate) {
            super(delegate);
        }

        @Override
        public Attempt tryAcquire(Claim c, boolean queue) {
            if (c.kind() != Claim.Kind.SEMAPHORE) {
                return super.tryAcquire(c, queue);
            }
            Lease forAday = c.lease().renewed() ? Lease.renewed(DAY) : Lease.fixed(DAY);
            return super.tryAcquire(
                    Claim.of(c.key(), c.kind(), c.mode(), c.permits(), c.size(), c.owner(), forAday), queue);
        }

        @Override
        public Set<HeldClaim> renew(Collection<HeldClaim> holds, Duration lease) {
            return super.renew(holds, DAY);
        }
    }

    /** A semaphore that grants more than its size: a hold of several permits counts one less in the store. */
    static final class MoreThanTheSize extends ForwardingClaimStore {
        MoreThanTheSize(ClaimStore delegate) {
            super(delegate);
        }

        @Override
        public Attempt tryAcquire(Claim c, boolean queue) {
            return super.tryAcquire(undercounted(c), queue);
        }

        @Override
        public void abandon(Claim c) {
            super.abandon(undercounted(c));
        }

        private static Claim undercounted(Claim c) {
            if (c.kind() != Claim.Kind.SEMAPHORE || c.permits() == 1) {
                return c;
            }
            return Claim.of(c.key(), c.kind(), c.mode(), c.permits() - 1, c.size(), c.owner(), c.lease());
        }
    }

    /** Latch waiters are never told the zero: their subscriptions never deliver (they find it only by polling). */
    static final class LatchLosesTheZeroWakeUp extends ForwardingCounterStore {
        LatchLosesTheZeroWakeUp(CounterStore delegate) {
            super(delegate);
        }

        @Override
        public Subscription watchZero(LockKey key, Runnable wakeUp) {
            return () -> {};
        }
    }

    /** Count-downs are not deduplicated by call id, so a retried call counts twice. */
    static final class CountDownCountedTwice extends ForwardingCounterStore {
        CountDownCountedTwice(CounterStore delegate) {
            super(delegate);
        }

        @Override
        public long countDown(LockKey key, String callId, Duration expiry) {
            return super.countDown(key, callId + "/" + UUID.randomUUID(), expiry);
        }
    }

    // ---------------------------------------------------------------- the suites over them

    /** The in-memory backend with decorated read-write lock, semaphore and latch stores. */
    abstract static class Fixture implements AllSynchronizerContracts, LostReplyContract {
        final InMemoryLockServer server = InMemoryLockServer.create();
        private final Function<InMemoryLockStore, ClaimStore> claims;
        private final Function<InMemoryLockStore, CounterStore> counters;

        Fixture(Function<InMemoryLockStore, ClaimStore> claims, Function<InMemoryLockStore, CounterStore> counters) {
            this.claims = claims;
            this.counters = counters;
        }

        @Override
        public io.distlock.LockClient createClient(Duration watchdogLease) {
            return SyncStoreClients.client(server, watchdogLease, false, claims, counters);
        }

        @Override
        public io.distlock.LockClient createClientLosingCountDownReplies(Duration watchdogLease) {
            return SyncStoreClients.client(
                    server, watchdogLease, false, claims, s -> new LosingCountDownReplies(counters.apply(s)));
        }

        @Override
        public void expireHold(String name) {
            server.expireHold(name);
        }

        @Override
        public List<String> residue(String name) {
            return server.residue(name);
        }
    }

    static final class WriterBesideReadersVariant extends Fixture {
        private static final Map<String, Set<OwnerId>> SNEAKED = new ConcurrentHashMap<>();

        WriterBesideReadersVariant() {
            super(s -> new WriterBesideReaders(s, SNEAKED), s -> s);
        }
    }

    static final class ReaderPastWaitingWriterVariant extends Fixture {
        ReaderPastWaitingWriterVariant() {
            super(ReaderPastWaitingWriter::new, s -> s);
        }
    }

    static final class PermitsWithoutLeasesVariant extends Fixture {
        PermitsWithoutLeasesVariant() {
            super(PermitsWithoutLeases::new, s -> s);
        }
    }

    static final class MoreThanTheSizeVariant extends Fixture {
        MoreThanTheSizeVariant() {
            super(MoreThanTheSize::new, s -> s);
        }
    }

    static final class LatchLosesTheZeroWakeUpVariant extends Fixture {
        LatchLosesTheZeroWakeUpVariant() {
            super(s -> s, LatchLosesTheZeroWakeUp::new);
        }
    }

    static final class CountDownCountedTwiceVariant extends Fixture {
        CountDownCountedTwiceVariant() {
            super(s -> s, CountDownCountedTwice::new);
        }
    }

    /** A one-permit semaphore without leases, under the whole lock contract through {@link SemaphoreAsLock}. */
    static final class PermitsWithoutLeasesAsLockVariant implements SemaphoreAsLock {
        final InMemoryLockServer server = InMemoryLockServer.create();

        @Override
        public io.distlock.LockClient createBackendClient(Duration watchdogLease) {
            return SyncStoreClients.client(server, watchdogLease, false, PermitsWithoutLeases::new, s -> s);
        }

        @Override
        public void expireHold(String name) {
            server.expireHold(name);
        }

        @Override
        public List<String> residue(String name) {
            return server.residue(name);
        }
    }
}
