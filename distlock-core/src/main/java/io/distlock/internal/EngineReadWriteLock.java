package io.distlock.internal;

import io.distlock.DistributedLock;
import io.distlock.DistributedReadWriteLock;
import io.distlock.spi.Claim;
import io.distlock.spi.Mode;

/** A read-write lock: two {@link ClaimLock} views of one name, shared and exclusive, on a {@link ClaimEngine}. */
final class EngineReadWriteLock implements DistributedReadWriteLock {
    /** A read-write lock's size: readers are not counted against a limit, and a writer excludes them all. */
    static final int SIZE = Integer.MAX_VALUE;

    private final String name;
    private final ClaimLock read;
    private final ClaimLock write;

    EngineReadWriteLock(LockEngine host, ClaimEngine engine, String name) {
        this.name = name;
        this.read = new ClaimLock(host, engine, new ClaimView(name, Claim.Kind.READ_WRITE_LOCK, Mode.SHARED, SIZE));
        this.write = new ClaimLock(host, engine, new ClaimView(name, Claim.Kind.READ_WRITE_LOCK, Mode.EXCLUSIVE, SIZE));
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public DistributedLock readLock() {
        return read;
    }

    @Override
    public DistributedLock writeLock() {
        return write;
    }

    @Override
    public String toString() {
        return "ReadWriteLock[" + name + "]";
    }
}
