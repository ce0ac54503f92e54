package io.distlock.testkit;

import io.distlock.DistributedLock;
import io.distlock.LockClient;
import io.distlock.LockHold;
import io.distlock.LockListener;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;

/**
 * Clients whose asynchronous acquisition is built the naive ways over a correct client, for {@link
 * ContractCanFailTest}: a future of their own that a cancel does not reach (the acquire goes on, and its grant is
 * never released), and a thread parked per waiter.
 */
final class NaiveAsyncClients {
    private NaiveAsyncClients() {}

    /** Copies the real future into a new one: cancelling the copy leaves the real acquire running. */
    static LockClient cancelNotPropagated(LockClient real) {
        return new ForwardingLockClient(real) {
            @Override
            public DistributedLock lock(String name) {
                return new DetachedFutures(real.lock(name));
            }

            @Override
            public DistributedLock fairLock(String name) {
                return new DetachedFutures(real.fairLock(name));
            }
        };
    }

    /** Runs the blocking acquire on a thread of its own per waiter. */
    static LockClient threadPerWaiter(LockClient real) {
        ExecutorService threads = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "naive-async-waiter");
            t.setDaemon(true);
            return t;
        });
        return new ForwardingLockClient(real) {
            @Override
            public DistributedLock lock(String name) {
                return new ThreadPerWaiter(real.lock(name), threads);
            }

            @Override
            public void close() {
                threads.shutdownNow();
                super.close();
            }
        };
    }

    private static final class DetachedFutures extends ForwardingLock {
        DetachedFutures(DistributedLock real) {
            super(real);
        }

        private static <T> CompletableFuture<T> detached(CompletableFuture<T> real) {
            CompletableFuture<T> copy = new CompletableFuture<>();
            real.whenComplete((v, e) -> {
                if (e != null) {
                    copy.completeExceptionally(e);
                } else {
                    copy.complete(v);
                }
            });
            return copy;
        }

        @Override
        public CompletableFuture<LockHold> acquireAsync() {
            return detached(real.acquireAsync());
        }

        @Override
        public CompletableFuture<Optional<LockHold>> tryAcquireAsync(Duration wait) {
            return detached(real.tryAcquireAsync(wait));
        }

        @Override
        public CompletableFuture<Optional<LockHold>> tryAcquireAsync(Duration wait, Duration lease) {
            return detached(real.tryAcquireAsync(wait, lease));
        }
    }

    private static final class ThreadPerWaiter extends ForwardingLock {
        private final ExecutorService threads;

        ThreadPerWaiter(DistributedLock real, ExecutorService threads) {
            super(real);
            this.threads = threads;
        }

        @Override
        public CompletableFuture<LockHold> acquireAsync() {
            return CompletableFuture.supplyAsync(
                    () -> {
                        try {
                            return real.acquire();
                        } catch (InterruptedException e) {
                            throw new CompletionException(e);
                        }
                    },
                    threads);
        }
    }

    /** Hands every call to the real lock. */
    private abstract static class ForwardingLock implements DistributedLock {
        final DistributedLock real;

        ForwardingLock(DistributedLock real) {
            this.real = real;
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
        public LockHold acquire() throws InterruptedException {
            return real.acquire();
        }

        @Override
        public Optional<LockHold> tryAcquire(Duration wait) throws InterruptedException {
            return real.tryAcquire(wait);
        }

        @Override
        public Optional<LockHold> tryAcquire(Duration wait, Duration lease) throws InterruptedException {
            return real.tryAcquire(wait, lease);
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

    /** Variants over the reference store: only the client's asynchronous acquisition is broken. */
    abstract static class Fixture implements AsyncContract {
        final InMemoryLockServer server = InMemoryLockServer.create();

        abstract LockClient broken(LockClient real);

        @Override
        public LockClient createClient(Duration watchdogLease) {
            return broken(InMemoryLockClient.builder()
                    .server(server)
                    .leaseTime(watchdogLease)
                    .build());
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
