package io.distlock.testkit;

import io.distlock.spi.CounterStore;
import io.distlock.spi.LockKey;
import io.distlock.spi.Subscription;
import java.time.Duration;

/** A {@link CounterStore} that forwards every call; decorators override what they change. */
class ForwardingCounterStore implements CounterStore {
    final CounterStore delegate;

    ForwardingCounterStore(CounterStore delegate) {
        this.delegate = delegate;
    }

    @Override
    public boolean trySetCount(LockKey key, long count, Duration expiry) {
        return delegate.trySetCount(key, count, expiry);
    }

    @Override
    public long countDown(LockKey key, String callId, Duration expiry) {
        return delegate.countDown(key, callId, expiry);
    }

    @Override
    public long count(LockKey key) {
        return delegate.count(key);
    }

    @Override
    public Subscription watchZero(LockKey key, Runnable wakeUp) {
        return delegate.watchZero(key, wakeUp);
    }

    @Override
    public void close() {
        delegate.close();
    }
}
