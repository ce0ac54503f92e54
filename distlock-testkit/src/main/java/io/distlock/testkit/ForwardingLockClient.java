package io.distlock.testkit;

import io.distlock.DistributedCountDownLatch;
import io.distlock.DistributedLock;
import io.distlock.DistributedReadWriteLock;
import io.distlock.DistributedSemaphore;
import io.distlock.LockAdmin;
import io.distlock.LockClient;
import java.util.Objects;

/**
 * A {@link LockClient} that hands every call to another one; override what a test needs to change (closing a pool
 * with the client, serving another primitive under {@code lock(name)}).
 */
public class ForwardingLockClient implements LockClient {
    private final LockClient delegate;

    public ForwardingLockClient(LockClient delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /** The client calls are handed to. */
    protected final LockClient delegate() {
        return delegate;
    }

    @Override
    public DistributedLock lock(String name) {
        return delegate.lock(name);
    }

    @Override
    public DistributedLock fairLock(String name) {
        return delegate.fairLock(name);
    }

    @Override
    public DistributedReadWriteLock readWriteLock(String name) {
        return delegate.readWriteLock(name);
    }

    @Override
    public DistributedSemaphore semaphore(String name, int permits) {
        return delegate.semaphore(name, permits);
    }

    @Override
    public DistributedCountDownLatch countDownLatch(String name) {
        return delegate.countDownLatch(name);
    }

    @Override
    public String clientId() {
        return delegate.clientId();
    }

    @Override
    public LockAdmin admin() {
        return delegate.admin();
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + delegate + "]";
    }
}
