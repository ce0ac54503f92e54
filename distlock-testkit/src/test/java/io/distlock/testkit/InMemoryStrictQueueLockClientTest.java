package io.distlock.testkit;

import io.distlock.LockClient;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;

/**
 * The reference backend in the mode of ZooKeeper and etcd, whose queue is the only order: waiting attempts queue,
 * hand-offs may answer "queued". The whole contract holds there too.
 */
class InMemoryStrictQueueLockClientTest implements AllLockContracts, AsyncContract {
    static final InMemoryLockServer server = InMemoryLockServer.create();

    @AfterAll
    static void stop() {
        server.close();
    }

    @Override
    public LockClient createClient(Duration watchdogLease) {
        return InMemoryLockClient.builder()
                .server(server)
                .leaseTime(watchdogLease)
                .strictQueue(true)
                .build();
    }

    @Override
    public void expireHold(String name) {
        server.expireHold(name);
    }

    @Override
    public List<String> residue(String name) {
        return server.residue(name);
    }

    @Override
    public Optional<LockClient> createUnreachableClient() {
        return Optional.of(
                InMemoryLockClient.builder().server(server).strictQueue(true).build(new UnreachableStore(server)));
    }
}
