package io.distlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.distlock.jdbc.JdbcLockClient;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** status, list, force-unlock and bench against H2 in server mode (a TCP server in this JVM) over JDBC. */
class JdbcCommandsIT implements AdminCommandsContract {
    private static @Nullable EmbeddedH2 server;
    private static @Nullable HikariDataSource dataSource;
    private static @Nullable JdbcLockClient holder;
    private static String url = "";

    @BeforeAll
    static void start() {
        EmbeddedH2 s = EmbeddedH2.start("cli-it");
        server = s;
        url = s.url();
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(8);
        dataSource = new HikariDataSource(config);
        holder = JdbcLockClient.builder()
                .dataSource(dataSource)
                .createSchemaIfMissing()
                .build();
    }

    @AfterAll
    static void stop() {
        if (holder != null) {
            holder.close();
        }
        if (dataSource != null) {
            dataSource.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @Override
    public AdminCommandsChecks checks() {
        JdbcLockClient h = java.util.Objects.requireNonNull(holder, "holder");
        return new AdminCommandsChecks(h, "--backend", url);
    }

    @Test
    void forceUnlock_yesJson_reportsRemovedHold() throws InterruptedException {
        checks().forceUnlock_yesJson_reportsRemovedHold();
    }

    @Test
    void status_otherTablePrefix_seesNothing() throws InterruptedException {
        JdbcLockClient h = java.util.Objects.requireNonNull(holder, "holder");
        String name = AdminCommandsChecks.unique("cli-prefix/");
        try (var hold = h.lock(name).acquire()) {
            // a second lock space in the same database: created by another client, empty
            HikariConfig config = new HikariConfig();
            config.setJdbcUrl(url);
            try (HikariDataSource ds = new HikariDataSource(config);
                    JdbcLockClient other = JdbcLockClient.builder()
                            .dataSource(ds)
                            .tableName("cli_other")
                            .createSchemaIfMissing()
                            .build()) {
                assertThat(other.admin().inspect(name)).isEmpty();
                Cli.Result r = Cli.run("status", name, "--backend", url, "--table", "cli_other");
                assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.FAILED);
                assertThat(Cli.run("status", name, "--backend", url).code()).isZero();
            }
        }
    }

    @Test
    void bench_givenBackend_printsBothRuns() {
        Cli.Result r = Cli.run("bench", "--backend", url, "--seconds", "1", "--threads", "3");
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out())
                .contains("distlock bench: JDBC lock table " + url)
                .contains("1 thread, free key")
                .contains("3 threads, one key")
                .contains("lock+unlock p50");
        assertThat(r.err()).contains("1 thread, free key").contains("[##############################] 100%");
    }

    @Test
    void bench_embeddedDefaultJson_reportsRates() {
        Cli.Result r = Cli.run("bench", "--seconds", "1", "--threads", "2", "--json");
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out())
                .startsWith("{\"backend\":\"embedded H2 server (jdbc:h2:tcp://127.0.0.1:")
                .contains("\"name\":\"1 thread, free key\",\"threads\":1")
                .contains("\"name\":\"2 threads, one key\",\"threads\":2")
                .containsPattern("\"opsPerSecond\":[1-9]")
                .containsPattern("\"lockUnlockP50Ms\":[0-9]");
    }
}
