package io.distlock.testkit;

import io.distlock.DistributedLock;
import io.distlock.LockClient;
import java.time.Duration;

/**
 * The whole lock contract run against the write view of read-write locks: the clients this fixture makes answer
 * {@code lock(name)} and {@code fairLock(name)} with {@code readWriteLock(name).writeLock()} of a backend client, so
 * the write lock gets every lock test for free (the approach of madelson's DistributedLock, whose lock tests run
 * against each primitive through adapters). A backend's test class implements it with {@link #createBackendClient}
 * in place of {@link #createClient}, and its usual {@link #expireHold} and {@link #residue}.
 */
public interface WriteLockAsLock extends AllLockContracts {

    /** A client of the store under test, as {@link BackendUnderTest#createClient} would make it. */
    LockClient createBackendClient(Duration watchdogLease);

    @Override
    default LockClient createClient(Duration watchdogLease) {
        return new Client(createBackendClient(watchdogLease));
    }

    /** A client whose locks are write locks. */
    final class Client extends ForwardingLockClient {
        public Client(LockClient delegate) {
            super(delegate);
        }

        @Override
        public DistributedLock lock(String name) {
            return delegate().readWriteLock(name).writeLock();
        }

        /** The write lock grants in request order across clients, as a fair lock does. */
        @Override
        public DistributedLock fairLock(String name) {
            return delegate().readWriteLock(name).writeLock();
        }
    }
}
