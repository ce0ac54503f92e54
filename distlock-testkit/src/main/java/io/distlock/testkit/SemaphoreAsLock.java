package io.distlock.testkit;

import io.distlock.DistributedLock;
import io.distlock.DistributedSemaphore;
import io.distlock.LockClient;
import io.distlock.LockHold;
import io.distlock.LockListener;
import io.distlock.PermitHold;
import io.distlock.internal.Checks;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import org.jspecify.annotations.Nullable;

/**
 * The whole lock contract run against semaphores of size 1: the clients this fixture makes answer {@code lock(name)}
 * and {@code fairLock(name)} with a {@link DistributedLock} over {@code semaphore(name, 1)} of a backend client, so a
 * one-permit semaphore gets every lock test for free (the approach of madelson's DistributedLock). A backend's test
 * class implements it with {@link #createBackendClient} in place of {@link #createClient}, and its usual {@link
 * #expireHold} and {@link #residue}.
 *
 * <p>The lock view adds only what a semaphore does not have: a thread's ownership and re-entry count, kept per client
 * as the engine keeps them for locks. Everything that reaches the store (acquire, lease, renewal, loss, release,
 * fencing, waiting) is the semaphore's.
 */
public interface SemaphoreAsLock extends AllLockContracts {

    /** A client of the store under test, as {@link BackendUnderTest#createClient} would make it. */
    LockClient createBackendClient(Duration watchdogLease);

    @Override
    default LockClient createClient(Duration watchdogLease) {
        return new Client(createBackendClient(watchdogLease));
    }

    /** A client whose locks are semaphores of size 1. */
    final class Client extends ForwardingLockClient {
        /** Per name, each thread's hold through this client. */
        private final Map<String, Map<Thread, ThreadHold>> threadHolds = new ConcurrentHashMap<>();

        public Client(LockClient delegate) {
            super(delegate);
        }

        @Override
        public DistributedLock lock(String name) {
            DistributedSemaphore s = delegate().semaphore(name, 1);
            return new SemaphoreLock(s, threadHolds.computeIfAbsent(name, n -> new ConcurrentHashMap<>()));
        }

        /** The semaphore grants in request order across clients, as a fair lock does. */
        @Override
        public DistributedLock fairLock(String name) {
            return lock(name);
        }
    }

    /** A thread's hold: the permit and the thread's re-entries. Used by its thread only. */
    final class ThreadHold {
        final PermitHold hold;
        int count = 1;

        ThreadHold(PermitHold hold) {
            this.hold = hold;
        }
    }

    /** A lock view of a one-permit semaphore. */
    final class SemaphoreLock implements DistributedLock {
        private static final Duration FOREVER = Duration.ofNanos(Long.MAX_VALUE / 4);

        private final DistributedSemaphore semaphore;
        private final Map<Thread, ThreadHold> threadHolds;

        SemaphoreLock(DistributedSemaphore semaphore, Map<Thread, ThreadHold> threadHolds) {
            this.semaphore = semaphore;
            this.threadHolds = threadHolds;
        }

        @Override
        public String name() {
            return semaphore.name();
        }

        /** The thread's live hold; a hold found invalid (lease ended, lost) is not re-entered. */
        private @Nullable ThreadHold reenter() {
            ThreadHold t = threadHolds.get(Thread.currentThread());
            if (t == null) {
                return null;
            }
            if (t.hold.isValid()) {
                t.count++;
                return t;
            }
            threadHolds.remove(Thread.currentThread()); // acquire afresh; the loss was told to the listeners
            return null;
        }

        private boolean held(Optional<PermitHold> h) {
            h.ifPresent(p -> threadHolds.put(Thread.currentThread(), new ThreadHold(p)));
            return h.isPresent();
        }

        @Override
        public void lock() {
            acquireUninterruptibly(null);
        }

        @Override
        public void lock(long leaseTime, TimeUnit unit) {
            acquireUninterruptibly(Checks.lease(leaseTime, unit, "leaseTime"));
        }

        private void acquireUninterruptibly(@Nullable Duration lease) {
            if (reenter() != null) {
                return;
            }
            boolean interrupted = false;
            try {
                for (; ; ) {
                    try {
                        if (lease == null) {
                            threadHolds.put(Thread.currentThread(), new ThreadHold(semaphore.acquire(1)));
                            return;
                        }
                        if (held(semaphore.tryAcquire(1, FOREVER, lease))) {
                            return;
                        }
                    } catch (InterruptedException e) {
                        interrupted = true; // lock() keeps waiting and re-asserts the flag
                    }
                }
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        @Override
        public void lockInterruptibly() throws InterruptedException {
            if (reenter() == null) {
                threadHolds.put(Thread.currentThread(), new ThreadHold(semaphore.acquire(1)));
            }
        }

        @Override
        public boolean tryLock() {
            return reenter() != null || held(semaphore.tryAcquire(1));
        }

        @Override
        public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
            Duration wait = Duration.ofNanos(Checks.waitNanos(time, unit));
            return reenter() != null || held(semaphore.tryAcquire(1, wait));
        }

        @Override
        public boolean tryLock(long waitTime, long leaseTime, TimeUnit unit) throws InterruptedException {
            Duration lease = Checks.lease(leaseTime, unit, "leaseTime");
            Duration wait = Duration.ofNanos(Checks.waitNanos(waitTime, unit));
            return reenter() != null || held(semaphore.tryAcquire(1, wait, lease));
        }

        @Override
        public void unlock() {
            ThreadHold t = threadHolds.get(Thread.currentThread());
            if (t == null) {
                throw new IllegalMonitorStateException("the current thread does not hold lock '" + name() + "'");
            }
            if (t.count > 1 && t.hold.isValid()) {
                t.count--;
                return;
            }
            threadHolds.remove(Thread.currentThread());
            t.hold.release(); // throws LockLostException if the permit was lost
        }

        @Override
        public Condition newCondition() {
            throw new UnsupportedOperationException("a semaphore has no condition queue");
        }

        @Override
        public long fencingToken() {
            ThreadHold t = threadHolds.get(Thread.currentThread());
            if (t == null || !t.hold.isValid()) {
                throw new IllegalMonitorStateException("the current thread does not hold lock '" + name() + "'");
            }
            return t.hold.fencingToken();
        }

        @Override
        public boolean isLocked() {
            return isHeldByCurrentThread() || semaphore.availablePermits() == 0;
        }

        @Override
        public boolean isHeldByCurrentThread() {
            ThreadHold t = threadHolds.get(Thread.currentThread());
            return t != null && t.hold.isValid();
        }

        @Override
        public int getHoldCount() {
            ThreadHold t = threadHolds.get(Thread.currentThread());
            return t != null && t.hold.isValid() ? t.count : 0;
        }

        @Override
        public LockHold acquire() throws InterruptedException {
            return semaphore.acquire(1);
        }

        @Override
        public Optional<LockHold> tryAcquire(Duration wait) throws InterruptedException {
            return semaphore.tryAcquire(1, Objects.requireNonNull(wait, "wait")).map(p -> p);
        }

        @Override
        public Optional<LockHold> tryAcquire(Duration wait, Duration lease) throws InterruptedException {
            return semaphore.tryAcquire(1, wait, lease).map(p -> p);
        }

        @Override
        public CompletableFuture<LockHold> acquireAsync() {
            return semaphore.acquireAsync(1).thenApply(p -> p);
        }

        @Override
        public CompletableFuture<Optional<LockHold>> tryAcquireAsync(Duration wait) {
            return semaphore.tryAcquireAsync(1, wait).thenApply(h -> h.map(p -> p));
        }

        @Override
        public CompletableFuture<Optional<LockHold>> tryAcquireAsync(Duration wait, Duration lease) {
            return semaphore.tryAcquireAsync(1, wait, lease).thenApply(h -> h.map(p -> p));
        }

        @Override
        public void addListener(LockListener listener) {
            semaphore.addListener(listener);
        }

        @Override
        public void removeListener(LockListener listener) {
            semaphore.removeListener(listener);
        }

        @Override
        public String toString() {
            return "SemaphoreLock[" + semaphore + "]";
        }
    }
}
