package io.distlock.etcd;

import io.distlock.LockClient;
import io.distlock.testkit.AllLockContracts;
import io.distlock.testkit.AsyncContract;
import io.distlock.testkit.MultiProcessContract;
import io.distlock.testkit.server.EtcdServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The whole contract suite, in one JVM and across processes, on an etcd this class starts. */
class EtcdLockIT implements AllLockContracts, MultiProcessContract, AsyncContract {
    @RegisterExtension
    static final EtcdServer etcd = EtcdServer.onFreePort();

    private static EtcdFixture fixture;

    @BeforeAll
    static void connect() {
        fixture = new EtcdFixture(etcd.endpoints(), "distlock/");
    }

    @AfterAll
    static void disconnect() {
        fixture.close();
    }

    @Override
    public LockClient createClient(Duration watchdogLease) {
        return EtcdLockClient.builder()
                .endpoints(etcd.endpoints())
                .leaseTtl(watchdogLease)
                .build();
    }

    @Override
    public void expireHold(String name) {
        fixture.expireHold(name);
    }

    @Override
    public List<String> residue(String name) {
        return fixture.residue(name);
    }

    @Override
    public Optional<ChildClient> childClient() {
        return Optional.of(new ChildClient(EtcdChildClientFactory.class, etcd.endpoints()));
    }

    /** A client of a port nothing listens on: each request fails after its 500 ms timeout. */
    @Override
    public Optional<LockClient> createUnreachableClient() {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort(); // closed again: nothing listens there
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Optional.of(EtcdLockClient.builder()
                .endpoints("http://127.0.0.1:" + port)
                .requestTimeout(Duration.ofMillis(500))
                .build());
    }
}
