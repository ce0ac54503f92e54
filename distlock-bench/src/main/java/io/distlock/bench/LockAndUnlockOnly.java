package io.distlock.bench;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import org.jspecify.annotations.Nullable;

/**
 * A {@link Lock}-shaped view for the harness, which calls {@code lock()} and {@code unlock()} only: the benchmarks'
 * adapters of other libraries' locks and of the references extend it and implement those two.
 */
abstract class LockAndUnlockOnly implements Lock {
    @Override
    public void lockInterruptibly() {
        lock();
    }

    @Override
    public boolean tryLock() {
        throw new UnsupportedOperationException("the benchmark uses lock() and unlock() only");
    }

    @Override
    public boolean tryLock(long time, @Nullable TimeUnit unit) {
        throw new UnsupportedOperationException("the benchmark uses lock() and unlock() only");
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("the benchmark uses lock() and unlock() only");
    }
}
