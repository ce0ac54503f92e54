package io.distlock.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.distlock.bench.Harness.Result;
import io.distlock.bench.Scenarios.Timing;
import io.distlock.jdbc.JdbcLockClient;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import javax.sql.DataSource;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/*
 * Overview
 *
 * JDBC side by side (issue 4): distlock's JdbcLockClient in TABLE mode against Spring Integration's JdbcLockRegistry
 * (DefaultLockRepository over its own INT_LOCK schema, here under the table prefix DLBENCH_S_ so the run touches no
 * table of anyone else), on MariaDB and on PostgreSQL, each from one HikariCP pool. distlock's tables get the prefix
 * "dlbench_d" and are created by the client when missing (PostgreSQL folds unquoted names to lower case, so the two
 * prefixes must differ in more than case). Lock names carry a random run id.
 */
/** The JDBC benchmark: distlock TABLE mode against Spring Integration's JdbcLockRegistry on MariaDB and PostgreSQL. */
public final class JdbcBench {
    // row labels: results are looked up by label (Harness.row), so adding a row cannot shift another's place
    static final String DISTLOCK = "distlock JdbcLockClient (TABLE)";
    static final String SPRING = "Spring JdbcLockRegistry";

    private static final int THREADS = 8;
    private static final int KEYS = 10_000;

    private JdbcBench() {}

    /**
     * Runs the JDBC comparison on both databases and prints a Markdown report.
     *
     * @param mariadbUrl JDBC URL of a MariaDB/MySQL database (user root, empty password); empty to skip
     * @param postgresUrl JDBC URL of a PostgreSQL database (user postgres, trust auth); empty to skip
     * @param phase the measured duration of each phase
     */
    public static void run(String mariadbUrl, String postgresUrl, Duration phase, PrintStream out) {
        Report report = new Report(out);
        Timing timing = Timing.of(phase);
        String runId = "dlbench-" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16);
        if (!mariadbUrl.isEmpty()) {
            database(report, timing, runId, "MariaDB", mariadbUrl, "root", false);
        }
        if (!postgresUrl.isEmpty()) {
            database(report, timing, runId, "PostgreSQL", postgresUrl, "postgres", true);
        }
    }

    private static void database(
            Report report, Timing timing, String runId, String db, String url, String user, boolean postgres) {
        report.title("JDBC — " + db + " (" + url + ")");
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(url);
        hc.setUsername(user);
        hc.setPassword("");
        hc.setMaximumPoolSize(24);
        hc.setPoolName("bench-" + db);
        try (HikariDataSource ds = new HikariDataSource(hc)) {
            springSchema(ds, postgres);
            report.environment("start");
            List<LockProvider.Factory> fs = List.of(distlock(ds), spring(ds));
            report.section("Uncontended lock+unlock, 1 thread");
            List<Result> unc = new ArrayList<>();
            for (LockProvider.Factory f : fs) {
                unc.add(Scenarios.uncontended(f, runId + "-u", timing));
            }
            report.table(unc, false);
            report.section("One key, 8 threads, one client");
            List<Result> one = new ArrayList<>();
            for (LockProvider.Factory f : fs) {
                one.add(Scenarios.oneKeyOneClient(f, runId + "-k1", THREADS, timing));
            }
            report.table(one, true);
            report.section("One key, 8 threads, 8 separate clients");
            List<Result> eight = new ArrayList<>();
            for (LockProvider.Factory f : fs) {
                eight.add(Scenarios.oneKeyManyClients(f, runId + "-k8", THREADS, timing));
            }
            report.table(eight, true);
            report.section("10,000 keys, 8 threads, one client");
            List<Result> many = new ArrayList<>();
            for (LockProvider.Factory f : fs) {
                many.add(Scenarios.manyKeys(f, runId + "-m", KEYS, THREADS, timing));
            }
            report.table(many, false);
            report.environment("end");
            report.section("Ratios, distlock ÷ Spring JdbcLockRegistry (" + db + ")");
            report.line("| scenario | ops/s ratio | hand-off p50: Spring ÷ distlock |");
            report.line("| --- | ---: | ---: |");
            row(report, "uncontended", unc, false);
            row(report, "one key, 8 threads, one client", one, true);
            row(report, "one key, 8 clients", eight, true);
            row(report, "10,000 keys, 8 threads", many, false);
            cleanup(ds, runId);
        }
    }

    private static void row(Report report, String what, List<Result> rows, boolean handOff) {
        report.line("| " + what + " | "
                + Report.ratio(Harness.ops(rows, DISTLOCK) / Harness.ops(rows, SPRING)) + " | "
                + (handOff
                        ? Report.ratio(Harness.row(rows, SPRING).handOffP50Micros()
                                / Harness.row(rows, DISTLOCK).handOffP50Micros())
                        : "–")
                + " |");
    }

    static LockProvider.Factory distlock(DataSource ds) {
        return LockProvider.factory(DISTLOCK, () -> {
            JdbcLockClient c = JdbcLockClient.builder()
                    .dataSource(ds)
                    .tableName("dlbench_d")
                    .createSchemaIfMissing()
                    .build();
            return RedisBench.provider(c::lock, c::close);
        });
    }

    static LockProvider.Factory spring(DataSource ds) {
        return LockProvider.factory(SPRING, () -> {
            DefaultLockRepository repo =
                    new DefaultLockRepository(ds, UUID.randomUUID().toString());
            repo.setPrefix("DLBENCH_S_");
            repo.setTransactionManager(new DataSourceTransactionManager(ds));
            repo.afterPropertiesSet();
            repo.afterSingletonsInstantiated();
            JdbcLockRegistry registry = new JdbcLockRegistry(repo);
            return RedisBench.provider(registry::obtain, repo::close);
        });
    }

    /** Spring Integration's INT_LOCK table (its schema-mysql.sql / schema-postgresql.sql) under our own prefix. */
    private static void springSchema(DataSource ds, boolean postgres) {
        String ddl =
                "CREATE TABLE IF NOT EXISTS DLBENCH_S_LOCK (LOCK_KEY CHAR(36) NOT NULL, REGION VARCHAR(100) NOT NULL,"
                        + " CLIENT_ID CHAR(36), CREATED_DATE " + (postgres ? "TIMESTAMP" : "DATETIME(6)")
                        + " NOT NULL, constraint DLBENCH_S_LOCK_PK primary key (LOCK_KEY, REGION))"
                        + (postgres ? "" : " ENGINE=InnoDB");
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            s.execute(ddl);
            s.execute("DELETE FROM DLBENCH_S_LOCK");
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create the Spring lock table: " + e, e);
        }
    }

    private static void cleanup(DataSource ds, String runId) {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            s.execute("DELETE FROM DLBENCH_S_LOCK");
            s.execute("DELETE FROM dlbench_d_lock WHERE name LIKE '" + runId + "%'");
        } catch (SQLException e) {
            // leftovers expire with their leases; nothing else to do
        }
    }
}
