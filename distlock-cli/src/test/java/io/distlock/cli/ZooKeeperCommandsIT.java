package io.distlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.zookeeper.ZooKeeperLockClient;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** status, list, force-unlock and bench against an in-process ZooKeeper server (Curator's TestingServer). */
class ZooKeeperCommandsIT implements AdminCommandsContract {
    private static @Nullable TestingServer server;
    private static @Nullable ZooKeeperLockClient holder;
    private static String uri = "";

    @BeforeAll
    static void start() throws Exception {
        TestingServer s = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, 500, -1), true);
        server = s;
        uri = "zookeeper://" + s.getConnectString() + "/cli-it";
        holder = ZooKeeperLockClient.builder()
                .connectString(s.getConnectString())
                .rootPath("/cli-it")
                .build();
    }

    @AfterAll
    static void stop() throws Exception {
        if (holder != null) {
            holder.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @Override
    public AdminCommandsChecks checks() {
        ZooKeeperLockClient h = java.util.Objects.requireNonNull(holder, "holder");
        return new AdminCommandsChecks(h, "--backend", uri);
    }

    @Test
    void bench_zooKeeper_printsBothRuns() {
        Cli.Result r = Cli.run("bench", "--backend", uri, "--seconds", "1", "--threads", "2");
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out()).contains("distlock bench: ZooKeeper " + uri).contains("2 threads, one key");
    }

    @Test
    void demo_zooKeeper_noLostUpdatesUnderTheLockAndStaleWriteRejected() {
        Cli.Result r = Cli.run("demo", "--backend", uri, "--processes", "2", "--threads", "2", "--seconds", "1");
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(DemoIT.row(r.out(), "2. distlock lock").get(3)).isEqualTo("0");
        assertThat(DemoIT.row(r.out(), "3. lease lost in a pause").get(7)).isEqualTo("1");
        assertThat(r.out()).contains("rejected by the fenced counter");
    }
}
