package io.distlock.safety;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedLock;
import io.distlock.LockClient;
import io.distlock.LockHold;
import io.distlock.testkit.fault.FaultProxy;
import java.time.Duration;
import java.util.Optional;
import org.h2.tools.Server;
import org.junit.jupiter.api.Test;

class ClientsTest {

    /**
     * A JDBC client on H2's TCP server whose pooled connections were all cut takes the lock at once afterwards: the
     * pool must drop a connection H2 reports broken instead of handing it out again to every retry of the store step.
     */
    @Test
    void anH2ClientTakesTheLockRightAfterItsConnectionsWereCut() throws Exception {
        Server server = Server.createTcpServer("-tcpPort", "0", "-ifNotExists").start();
        try (FaultProxy proxy = FaultProxy.start(server.getPort());
                LockClient client = Clients.create(Clients.spec(
                        "kind", "jdbc",
                        "uri", "jdbc:h2:tcp://127.0.0.1:" + proxy.port() + "/mem:clients-test;DB_CLOSE_DELAY=-1",
                        "user", "sa",
                        "mode", "TABLE",
                        "table", "clients_test",
                        "lease", "2000",
                        "id", "t1"))) {
            DistributedLock lock = client.lock("k");
            for (int i = 0; i < 3; i++) {
                Optional<LockHold> hold = lock.tryAcquire(Duration.ofSeconds(5));
                assertThat(hold).isPresent();
                hold.get().release();
            }
            proxy.resetConnections();

            Optional<LockHold> hold = lock.tryAcquire(Duration.ofSeconds(5));

            assertThat(hold).isPresent();
            hold.get().release();
        } finally {
            server.stop();
        }
    }
}
