package io.distlock.testkit;

import io.distlock.LockClient;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;

/**
 * The reference backend runs the read-write lock, semaphore and latch contracts, which shows they can be passed. One
 * server per test class (a subclass runs the other mode), closed after it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class InMemorySynchronizersTest implements AllSynchronizerContracts, LostReplyContract, AsyncSynchronizerContract {
    final InMemoryLockServer server = InMemoryLockServer.create();

    @AfterAll
    void stop() {
        server.close();
    }

    /** Whether clients run in strictQueue mode (as ZooKeeper and etcd). */
    boolean strictQueue() {
        return false;
    }

    @Override
    public LockClient createClient(Duration watchdogLease) {
        return InMemoryLockClient.builder()
                .server(server)
                .leaseTime(watchdogLease)
                .strictQueue(strictQueue())
                .build();
    }

    @Override
    public LockClient createClientLosingCountDownReplies(Duration watchdogLease) {
        return SyncStoreClients.losingCountDownReplies(server, watchdogLease, strictQueue());
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
