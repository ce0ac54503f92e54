package io.distlock.testkit;

import io.distlock.LockClient;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;

/** The reference backend runs the whole single-JVM contract, which shows the contract can be passed. */
class InMemoryLockClientTest implements AllLockContracts, AsyncContract {
    static final InMemoryLockServer server = InMemoryLockServer.create();

    @AfterAll
    static void stop() {
        server.close();
    }

    @Override
    public LockClient createClient(Duration watchdogLease) {
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

    @Override
    public Optional<LockClient> createUnreachableClient() {
        return Optional.of(InMemoryLockClient.builder().server(server).build(new UnreachableStore(server)));
    }
}
