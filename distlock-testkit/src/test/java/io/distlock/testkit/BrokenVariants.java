package io.distlock.testkit;

import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.HandOff;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import io.distlock.spi.Subscription;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/** Stores with one defect each, as the seed articles and the peers have them. */
final class BrokenVariants {
    private BrokenVariants() {}

    /** Release deletes whatever hold the name has (seed 000's unchecked release). */
    static final class ReleaseWithoutOwnerCheck extends InMemoryLockStore {
        ReleaseWithoutOwnerCheck(InMemoryLockServer server) {
            super(server);
        }

        @Override
        public boolean release(HeldClaim hold) {
            var unused = server.forceRelease(hold.key().name());
            return true;
        }
    }

    /** Every grant carries the same token. */
    static final class NoFencing extends InMemoryLockStore {
        NoFencing(InMemoryLockServer server) {
            super(server);
        }

        @Override
        public Attempt tryAcquire(Claim claim, boolean queue) {
            Attempt a = super.tryAcquire(claim, queue);
            return a instanceof Attempt.Acquired ? Attempt.acquired(1) : a;
        }

        @Override
        public HandOff handOff(Claim to, OwnerId from) {
            HandOff answer = super.handOff(to, from);
            return answer instanceof HandOff.Granted ? HandOff.granted(1) : answer;
        }
    }

    /** Subscriptions that never deliver a wake-up (a waiter that subscribes after the release it needed). */
    static final class LostWakeUp extends InMemoryLockStore {
        LostWakeUp(InMemoryLockServer server) {
            super(server);
        }

        @Override
        public Subscription subscribe(LockKey key, Runnable wakeUp) {
            return () -> {};
        }
    }

    /** Renewals keep running after the release, like seed 000's timer that unlock never cancels. */
    static final class RenewalAfterRelease extends InMemoryLockStore {
        private final Map<HeldClaim, Duration> renewed = new ConcurrentHashMap<>();
        private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "uncancelled-renewal");
            t.setDaemon(true);
            return t;
        });

        RenewalAfterRelease(InMemoryLockServer server) {
            super(server);
            timer.scheduleWithFixedDelay(
                    () -> renewed.forEach((h, lease) -> {
                        var unused = server.renew(h.key().name(), h.owner(), lease.toNanos());
                    }),
                    100,
                    100,
                    TimeUnit.MILLISECONDS);
        }

        @Override
        public Set<HeldClaim> renew(Collection<HeldClaim> holds, Duration lease) {
            for (HeldClaim h : holds) {
                renewed.put(new HeldClaim(h.key(), h.kind(), h.owner(), h.mode(), 0), lease);
            }
            return super.renew(holds, lease);
        }

        @Override
        public void close() {
            timer.shutdownNow();
        }
    }

    /** Renewal extends the name's hold whoever owns it (seed 004). */
    static final class RenewalWithoutOwnerCheck extends InMemoryLockStore {
        RenewalWithoutOwnerCheck(InMemoryLockServer server) {
            super(server);
        }

        @Override
        public Set<HeldClaim> renew(Collection<HeldClaim> holds, Duration lease) {
            Set<HeldClaim> gone = new java.util.HashSet<>();
            for (HeldClaim h : holds) {
                if (!server.renewWhoeverHolds(h.key().name(), lease.toNanos())) {
                    gone.add(h);
                }
            }
            return gone;
        }
    }

    /** A waiter that gives up stays in the fair queue. */
    static final class TimeoutLeavesWaiter extends InMemoryLockStore {
        TimeoutLeavesWaiter(InMemoryLockServer server) {
            super(server);
        }

        @Override
        public void abandon(Claim claim) {}
    }
}
