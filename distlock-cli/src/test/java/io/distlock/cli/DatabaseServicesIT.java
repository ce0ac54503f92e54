package io.distlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.distlock.jdbc.JdbcLockClient;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The JDBC subcommands and the demo against the machine's MariaDB (127.0.0.1:3306, root, database test) and PostgreSQL
 * (127.0.0.1:5432, postgres, database test), which scripts/services.sh starts. Each test uses its own table prefix.
 */
class DatabaseServicesIT {
    static final String MARIADB = "jdbc:mariadb://127.0.0.1:3306/test";
    static final String POSTGRES = "jdbc:postgresql://127.0.0.1:5432/test";

    @Test
    void adminCommands_mariaDb() throws InterruptedException {
        adminCommands(MARIADB, "root");
    }

    @Test
    void adminCommands_postgres() throws InterruptedException {
        adminCommands(POSTGRES, "postgres");
    }

    @Test
    void demo_postgres_noLostUpdatesUnderTheLock() {
        String table = prefix();
        Cli.Result r = Cli.run(
                "demo",
                "--backend",
                POSTGRES,
                "--user",
                "postgres",
                "--table",
                table,
                "--processes",
                "2",
                "--threads",
                "2",
                "--seconds",
                "1");
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(DemoIT.row(r.out(), "2. distlock lock").get(3)).isEqualTo("0");
        assertThat(r.out()).contains("rejected by the fenced counter");
    }

    @Test
    void demo_mariaDb_noLostUpdatesUnderTheLock() {
        String table = prefix();
        Cli.Result r = Cli.run(
                "demo",
                "--backend",
                MARIADB,
                "--user",
                "root",
                "--table",
                table,
                "--processes",
                "2",
                "--threads",
                "2",
                "--seconds",
                "1");
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(DemoIT.row(r.out(), "2. distlock lock").get(3)).isEqualTo("0");
        assertThat(r.out()).contains("rejected by the fenced counter");
    }

    private static void adminCommands(String url, String user) throws InterruptedException {
        String table = prefix();
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setUsername(user);
        config.setMaximumPoolSize(4);
        try (HikariDataSource ds = new HikariDataSource(config);
                JdbcLockClient holder = JdbcLockClient.builder()
                        .dataSource(ds)
                        .tableName(table)
                        .createSchemaIfMissing()
                        .build()) {
            new AdminCommandsChecks(holder, "--backend", url, "--user", user, "--table", table).all();
        }
    }

    private static String prefix() {
        return "cli_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    }
}
