package io.distlock.testkit;

import io.distlock.LockClient;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;

/** The in-memory backend over a deliberately broken store, to show the contract catches the defect. */
abstract class BrokenStoreFixture implements AllLockContracts {
    final InMemoryLockServer server = InMemoryLockServer.create();
    private final Function<InMemoryLockServer, InMemoryLockStore> broken;

    BrokenStoreFixture(Function<InMemoryLockServer, InMemoryLockStore> broken) {
        this.broken = broken;
    }

    @Override
    public LockClient createClient(Duration watchdogLease) {
        return InMemoryLockClient.builder()
                .server(server)
                .leaseTime(watchdogLease)
                .build(broken.apply(server));
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
