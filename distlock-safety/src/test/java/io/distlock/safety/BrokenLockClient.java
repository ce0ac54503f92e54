package io.distlock.safety;

import io.distlock.DistributedLock;
import io.distlock.LockClient;
import io.distlock.LockHold;
import io.distlock.LockInfo;
import io.distlock.LockListener;
import io.distlock.testkit.ForwardingLockClient;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;

/**
 * A deliberately broken client, to show the suite can fail: when the lock is busy, its {@code tryAcquire} does not
 * wait but "grants" a hold anyway, carrying the current holder's token, as a store that forgot to check the holder
 * would. Everything else goes to the real client.
 */
final class BrokenLockClient extends ForwardingLockClient {
    BrokenLockClient(LockClient delegate) {
        super(delegate);
    }

    @Override
    public DistributedLock lock(String name) {
        return new BrokenLock(delegate().lock(name), delegate());
    }

    private static final class BrokenLock implements DistributedLock {
        private final DistributedLock real;
        private final LockClient client;

        BrokenLock(DistributedLock real, LockClient client) {
            this.real = real;
            this.client = client;
        }

        private Optional<LockHold> grantAnyway(Optional<LockHold> hold) {
            if (hold.isPresent()) {
                return hold;
            }
            long token = client.admin()
                    .inspect(real.name())
                    .map(LockInfo::fencingToken)
                    .orElse(0L);
            return Optional.of(new FakeHold(real.name(), token));
        }

        @Override
        public Optional<LockHold> tryAcquire(Duration wait) throws InterruptedException {
            return grantAnyway(real.tryAcquire(Duration.ZERO));
        }

        @Override
        public Optional<LockHold> tryAcquire(Duration wait, Duration lease) throws InterruptedException {
            return grantAnyway(real.tryAcquire(Duration.ZERO, lease));
        }

        @Override
        public LockHold acquire() throws InterruptedException {
            return grantAnyway(real.tryAcquire(Duration.ZERO)).orElseThrow();
        }

        @Override
        public String name() {
            return real.name();
        }

        @Override
        public void lock(long leaseTime, TimeUnit unit) {
            real.lock(leaseTime, unit);
        }

        @Override
        public boolean tryLock(long waitTime, long leaseTime, TimeUnit unit) throws InterruptedException {
            return real.tryLock(waitTime, leaseTime, unit);
        }

        @Override
        public void lock() {
            real.lock();
        }

        @Override
        public void lockInterruptibly() throws InterruptedException {
            real.lockInterruptibly();
        }

        @Override
        public boolean tryLock() {
            return real.tryLock();
        }

        @Override
        public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
            return real.tryLock(time, unit);
        }

        @Override
        public void unlock() {
            real.unlock();
        }

        @Override
        public Condition newCondition() {
            return real.newCondition();
        }

        @Override
        public long fencingToken() {
            return real.fencingToken();
        }

        @Override
        public boolean isLocked() {
            return real.isLocked();
        }

        @Override
        public boolean isHeldByCurrentThread() {
            return real.isHeldByCurrentThread();
        }

        @Override
        public int getHoldCount() {
            return real.getHoldCount();
        }

        @Override
        public CompletableFuture<LockHold> acquireAsync() {
            return real.acquireAsync();
        }

        @Override
        public CompletableFuture<Optional<LockHold>> tryAcquireAsync(Duration wait) {
            return real.tryAcquireAsync(wait);
        }

        @Override
        public CompletableFuture<Optional<LockHold>> tryAcquireAsync(Duration wait, Duration lease) {
            return real.tryAcquireAsync(wait, lease);
        }

        @Override
        public void addListener(LockListener listener) {
            real.addListener(listener);
        }

        @Override
        public void removeListener(LockListener listener) {
            real.removeListener(listener);
        }
    }

    /** A hold the store never granted. */
    private static final class FakeHold implements LockHold {
        private final String name;
        private final long token;
        private final AtomicBoolean released = new AtomicBoolean();

        FakeHold(String name, long token) {
            this.name = name;
            this.token = token;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public long fencingToken() {
            return token;
        }

        @Override
        public boolean isValid() {
            return !released.get();
        }

        @Override
        public void release() {
            if (!released.compareAndSet(false, true)) {
                throw new IllegalMonitorStateException("already released");
            }
        }

        @Override
        public CompletableFuture<Void> releaseAsync() {
            return CompletableFuture.runAsync(this::release);
        }

        @Override
        public void close() {
            released.set(true);
        }
    }
}
