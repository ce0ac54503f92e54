package io.distlock.testkit;

import io.distlock.LockClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;

/** The whole lock contract on multi-locks over members of two separate in-memory stores. */
class InMemoryMultiLockTest implements MultiLockAsLock {
    static final InMemoryLockServer first = InMemoryLockServer.create();
    static final InMemoryLockServer second = InMemoryLockServer.create();

    @AfterAll
    static void stop() {
        first.close();
        second.close();
    }

    @Override
    public List<LockClient> createMemberClients(Duration watchdogLease) {
        return List.of(first.newClient(watchdogLease), second.newClient(watchdogLease));
    }

    @Override
    public void expireHold(String name) {
        first.expireHold(MultiLockAsLock.memberName(name, 0));
        second.expireHold(MultiLockAsLock.memberName(name, 1));
    }

    @Override
    public List<String> residue(String name) {
        List<String> all = new ArrayList<>(first.residue(MultiLockAsLock.memberName(name, 0)));
        all.addAll(second.residue(MultiLockAsLock.memberName(name, 1)));
        return all;
    }
}
