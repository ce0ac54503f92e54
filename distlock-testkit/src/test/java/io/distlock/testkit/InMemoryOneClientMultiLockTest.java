package io.distlock.testkit;

import io.distlock.LockClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;

/**
 * The whole lock contract on multi-locks over three members of one in-memory client, whose store tries and releases
 * them together (AcquiresTogether): the engine's batched path under every contract test.
 */
class InMemoryOneClientMultiLockTest implements MultiLockAsLock {
    static final InMemoryLockServer server = InMemoryLockServer.create();

    @AfterAll
    static void stop() {
        server.close();
    }

    @Override
    public List<LockClient> createMemberClients(Duration watchdogLease) {
        LockClient client = server.newClient(watchdogLease);
        return List.of(client, client, client);
    }

    @Override
    public void expireHold(String name) {
        for (int i = 0; i < 3; i++) {
            server.expireHold(MultiLockAsLock.memberName(name, i));
        }
    }

    @Override
    public List<String> residue(String name) {
        List<String> all = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            all.addAll(server.residue(MultiLockAsLock.memberName(name, i)));
        }
        return all;
    }
}
