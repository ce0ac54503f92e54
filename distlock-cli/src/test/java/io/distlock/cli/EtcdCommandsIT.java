package io.distlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.etcd.EtcdLockClient;
import io.distlock.testkit.server.EtcdServer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** status, list, force-unlock and bench against a real etcd started on free loopback ports. */
class EtcdCommandsIT implements AdminCommandsContract {
    @RegisterExtension
    static final EtcdServer etcd = EtcdServer.onFreePort();

    private static @Nullable EtcdLockClient holder;
    private static String uri = "";

    @BeforeAll
    static void connect() {
        holder = EtcdLockClient.create(etcd.endpoints());
        uri = etcd.endpoints().replace("http://", "etcd://");
    }

    @AfterAll
    static void close() {
        if (holder != null) {
            holder.close();
        }
    }

    @Override
    public AdminCommandsChecks checks() {
        EtcdLockClient h = java.util.Objects.requireNonNull(holder, "holder");
        return new AdminCommandsChecks(h, "--backend", uri);
    }

    @Test
    void bench_etcd_printsBothRuns() {
        Cli.Result r = Cli.run("bench", "--backend", uri, "--seconds", "1", "--threads", "2");
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out()).contains("distlock bench: etcd " + uri).contains("2 threads, one key");
    }

    @Test
    void demo_etcd_noLostUpdatesUnderTheLockAndStaleWriteRejected() {
        Cli.Result r = Cli.run("demo", "--backend", uri, "--processes", "2", "--threads", "2", "--seconds", "1");
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(DemoIT.row(r.out(), "2. distlock lock").get(3)).isEqualTo("0");
        assertThat(DemoIT.row(r.out(), "3. lease lost in a pause").get(7)).isEqualTo("1");
        assertThat(r.out()).contains("rejected by the fenced counter");
    }
}
