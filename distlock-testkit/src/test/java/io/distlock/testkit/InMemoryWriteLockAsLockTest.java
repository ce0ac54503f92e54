package io.distlock.testkit;

import io.distlock.LockClient;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;

/** The whole lock contract on the in-memory backend, through {@link WriteLockAsLock}. */
class InMemoryWriteLockAsLockTest implements WriteLockAsLock {
    static final InMemoryLockServer server = InMemoryLockServer.create();

    @AfterAll
    static void stop() {
        server.close();
    }

    @Override
    public LockClient createBackendClient(Duration watchdogLease) {
        return server.newClient(watchdogLease);
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
