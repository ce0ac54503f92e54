package io.distlock.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.h2.tools.Server;
import org.jspecify.annotations.Nullable;

/**
 * The databases the tests run on: H2 in this JVM, H2 as a TCP server (shared by child processes), and the MariaDB and
 * PostgreSQL servers running on this machine (scripts/services.sh). Each test class uses its own table prefix.
 */
enum TestDatabase {
    H2_MEM,
    H2_SERVER,
    MARIADB,
    POSTGRESQL;

    /** A started database for one test class: its pool, URL and table prefix. */
    static final class Env implements AutoCloseable {
        final TestDatabase db;
        final String table;
        final String url;
        final String user;
        final String password;
        final HikariDataSource pool;
        private final @Nullable Server h2Server;

        Env(TestDatabase db, String table, String url, String user, String password, @Nullable Server h2Server) {
            this.db = db;
            this.table = table;
            this.url = url;
            this.user = user;
            this.password = password;
            this.h2Server = h2Server;
            this.pool = pool(url, user, password, 40);
        }

        void execute(String sql) {
            try (Connection c = pool.getConnection();
                    Statement st = c.createStatement()) {
                st.execute(sql);
            } catch (SQLException e) {
                throw new IllegalStateException(sql + ": " + e.getMessage(), e);
            }
        }

        @Override
        public void close() {
            for (String t : List.of("_lock", "_queue", "_row", "_name", "_claim", "_latch", "_latch_call")) {
                try {
                    execute("DROP TABLE IF EXISTS " + table + t);
                } catch (RuntimeException e) {
                    // best effort
                }
            }
            try {
                execute(
                        db == MARIADB || db == POSTGRESQL || db == H2_MEM || db == H2_SERVER
                                ? "DROP SEQUENCE IF EXISTS " + table + "_fence"
                                : "DROP TABLE IF EXISTS " + table + "_fence");
            } catch (RuntimeException e) {
                // best effort
            }
            pool.close();
            if (h2Server != null) {
                h2Server.stop();
            }
        }
    }

    static HikariDataSource pool(String url, String user, String password, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setUsername(user);
        config.setPassword(password);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(0);
        config.setConnectionTimeout(5_000);
        config.setPoolName("distlock-test-" + url.hashCode());
        return new HikariDataSource(config);
    }

    /** Starts (H2) or connects to the database, with a table prefix unique to {@code owner}. */
    Env start(Class<?> owner) {
        String table = tableFor(owner);
        switch (this) {
            case H2_MEM:
                return new Env(this, table, "jdbc:h2:mem:" + table + ";DB_CLOSE_DELAY=-1", "sa", "", null);
            case H2_SERVER:
                try {
                    Server server = Server.createTcpServer("-tcpPort", "0", "-ifNotExists")
                            .start();
                    String url = "jdbc:h2:tcp://127.0.0.1:" + server.getPort() + "/mem:" + table + ";DB_CLOSE_DELAY=-1";
                    return new Env(this, table, url, "sa", "", server);
                } catch (SQLException e) {
                    throw new IllegalStateException("could not start the H2 TCP server", e);
                }
            case MARIADB:
                return new Env(this, table, "jdbc:mariadb://127.0.0.1:3306/test", "root", "", null);
            case POSTGRESQL:
                return new Env(this, table, "jdbc:postgresql://127.0.0.1:5432/test", "postgres", "", null);
            default:
                throw new AssertionError(this);
        }
    }

    private static String tableFor(Class<?> owner) {
        String simple = owner.getSimpleName().toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z0-9]", "");
        if (simple.length() > 24) {
            simple = simple.substring(0, 24);
        }
        return "dl_" + simple + "_" + Long.toHexString(System.nanoTime() & 0xFFFFFF);
    }
}
