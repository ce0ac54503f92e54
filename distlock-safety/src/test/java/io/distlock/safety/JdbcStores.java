package io.distlock.safety;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import javax.sql.DataSource;
import org.h2.tools.Server;
import org.jspecify.annotations.Nullable;

/**
 * The databases: MariaDB and PostgreSQL (the machine's shared servers, scripts/services.sh) and an H2 TCP server in
 * this JVM. Each client connects as a database identity of its own (a MariaDB user, a PostgreSQL application name),
 * so that a fault can kill exactly the sessions of one client.
 */
final class JdbcStores {
    static final Duration LEASE = Duration.ofSeconds(2);

    private JdbcStores() {}

    enum Db {
        MARIADB,
        POSTGRESQL,
        H2
    }

    static final class Database extends Store {
        final Db db;
        final String mode;
        final HikariDataSource admin;
        private final @Nullable Server h2;
        private final int port;
        private final Set<String> users = new HashSet<>();

        /** {@code mode}: TABLE, ADVISORY or ROW_LOCK. */
        Database(Db db, String mode) {
            this(db, mode, 0);
        }

        /** As {@link #Database(Db, String)}, on a server of the suite's own on {@code ownPort} when it is not 0. */
        Database(Db db, String mode, int ownPort) {
            this.db = db;
            this.mode = mode;
            Server server = null;
            switch (db) {
                case MARIADB -> port = ownPort != 0 ? ownPort : 3306;
                case POSTGRESQL -> port = ownPort != 0 ? ownPort : 5432;
                default -> {
                    try {
                        server = Server.createTcpServer("-tcpPort", "0", "-ifNotExists")
                                .start();
                    } catch (SQLException e) {
                        throw new IllegalStateException("cannot start the H2 TCP server", e);
                    }
                    port = server.getPort();
                }
            }
            h2 = server;
            admin = pool(url(port, "admin"), adminUser(), "", "safety-admin");
        }

        private String adminUser() {
            return switch (db) {
                case MARIADB -> "root";
                case POSTGRESQL -> "postgres";
                case H2 -> "sa";
            };
        }

        private String url(int p, String application) {
            return switch (db) {
                case MARIADB -> "jdbc:mariadb://127.0.0.1:" + p + "/test";
                case POSTGRESQL -> "jdbc:postgresql://127.0.0.1:" + p + "/test?ApplicationName=" + application;
                case H2 -> "jdbc:h2:tcp://127.0.0.1:" + p + "/mem:safety;DB_CLOSE_DELAY=-1";
            };
        }

        static HikariDataSource pool(String url, String user, String password, String name) {
            HikariConfig config = new HikariConfig();
            config.setJdbcUrl(url);
            config.setUsername(user);
            config.setPassword(password);
            config.setMaximumPoolSize(4);
            config.setMinimumIdle(0);
            config.setConnectionTimeout(5_000);
            config.setPoolName(name);
            return new HikariDataSource(config);
        }

        @Override
        String name() {
            String base = db.name().toLowerCase(Locale.ROOT);
            return mode.equals("TABLE")
                    ? base
                    : base + "-" + mode.toLowerCase(Locale.ROOT).replace('_', '-');
        }

        @Override
        List<Integer> ports() {
            return List.of(port);
        }

        /** The database identity of client {@code clientId}: what {@code StoreFaults.killDatabaseSessions} takes. */
        String identity(String clientId) {
            return db == Db.H2 ? "sa" : "dlsafety_" + clientId;
        }

        @Override
        String spec(String clientId, String prefix, List<Integer> ports) {
            String user = adminUser();
            String password = "";
            if (db == Db.MARIADB) {
                user = identity(clientId);
                password = "safety";
                ensureUser(user);
            }
            return Clients.spec(
                    "kind", "jdbc",
                    "uri", url(ports.get(0), identity(clientId)),
                    "user", user,
                    "password", password,
                    "mode", mode,
                    "table", prefix,
                    "lease", Long.toString(LEASE.toMillis()),
                    "id", clientId);
        }

        private void ensureUser(String user) {
            if (!users.add(user)) {
                return;
            }
            for (String host : List.of("%", "localhost", "127.0.0.1")) {
                execute("CREATE USER IF NOT EXISTS '" + user + "'@'" + host + "' IDENTIFIED BY 'safety'");
                execute("GRANT ALL PRIVILEGES ON test.* TO '" + user + "'@'" + host + "'");
            }
        }

        void execute(String sql) {
            try (Connection c = admin.getConnection();
                    Statement st = c.createStatement()) {
                st.execute(sql);
            } catch (SQLException e) {
                throw new IllegalStateException(sql + ": " + e.getMessage(), e);
            }
        }

        private long count(String sql) {
            try (Connection c = admin.getConnection();
                    Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery(sql)) {
                return rs.next() ? rs.getLong(1) : 0;
            } catch (SQLException e) {
                return 0; // no such table: nothing left in it
            }
        }

        /** The database's clock in epoch milliseconds, as the lock table's columns use it. */
        private String nowMillis() {
            return switch (db) {
                case MARIADB -> "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(3)) DIV 1000)";
                case POSTGRESQL -> "CAST(FLOOR(EXTRACT(EPOCH FROM now()) * 1000) AS BIGINT)";
                case H2 -> "CAST(FLOOR(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000) AS BIGINT)";
            };
        }

        @Override
        String prefix(String scenarioId) {
            return "s_" + scenarioId.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]", "_");
        }

        @Override
        Duration expiry() {
            return mode.equals("TABLE") ? LEASE : Duration.ofMillis(500); // a session lock ends with its session
        }

        @Override
        Duration renewInterval() {
            return LEASE.dividedBy(3);
        }

        @Override
        Leftovers leftovers(String prefix) {
            List<String> found = new ArrayList<>();
            long n = 0;
            // expired rows are garbage the clients sweep lazily, not holds: only live ones count
            for (String[] t : List.of(
                    new String[] {"_lock", "expires_at"}, new String[] {"_queue", "deadline"}, new String[] {"_row", ""
                    })) {
                String where = t[1].isEmpty() ? "" : " WHERE " + t[1] + " > " + nowMillis();
                long rows = count("SELECT COUNT(*) FROM " + prefix + t[0] + where);
                if (rows > 0) {
                    found.add(rows + " live rows in " + prefix + t[0]);
                    n += rows;
                }
            }
            if (db == Db.POSTGRESQL && !mode.equals("TABLE")) {
                long locks = count("SELECT COUNT(*) FROM pg_locks l JOIN pg_stat_activity a ON l.pid = a.pid"
                        + " WHERE l.locktype = 'advisory' AND a.application_name LIKE 'dlsafety_%'");
                if (locks > 0) {
                    found.add(locks + " advisory locks");
                    n += locks;
                }
            }
            return new Leftovers(n, String.join(", ", found));
        }

        /** Drops the scenario's tables. */
        void drop(String prefix) {
            for (String t : List.of("_lock", "_queue", "_row", "_fence")) {
                try {
                    execute("DROP TABLE IF EXISTS " + prefix + t);
                } catch (RuntimeException e) {
                    try {
                        execute("DROP SEQUENCE IF EXISTS " + prefix + t);
                    } catch (RuntimeException again) {
                        // best effort
                    }
                }
            }
        }

        DataSource admin() {
            return admin;
        }

        @Override
        public void close() {
            admin.close();
            if (h2 != null) {
                h2.stop();
            }
        }
    }
}
