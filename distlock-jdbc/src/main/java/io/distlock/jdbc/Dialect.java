package io.distlock.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * What differs between databases: the database clock in SQL, the fencing sequence, error classification, session ids
 * and the DDL. Every clock expression yields epoch milliseconds of the database server, rounded down.
 */
enum Dialect {
    POSTGRESQL("postgresql") {
        @Override
        String nowMillis() {
            return "CAST(FLOOR(EXTRACT(EPOCH FROM now()) * 1000) AS BIGINT)";
        }

        @Override
        long nextToken(Connection c, String table) throws SQLException {
            return queryLong(c, "SELECT nextval('" + table + "_fence')");
        }

        @Override
        String sessionIdQuery() {
            return "SELECT pg_backend_pid()";
        }

        @Override
        boolean isLockNotAvailable(SQLException e) {
            return "55P03".equals(e.getSQLState());
        }

        @Override
        boolean notifies() {
            return true;
        }
    },
    MARIADB("mariadb") {
        @Override
        String nowMillis() {
            // UTC_TIMESTAMP does not depend on the session time zone; the difference is plain arithmetic
            return "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(3)) DIV 1000)";
        }

        @Override
        long nextToken(Connection c, String table) throws SQLException {
            return queryLong(c, "SELECT NEXT VALUE FOR " + table + "_fence");
        }

        @Override
        String sessionIdQuery() {
            return "SELECT CONNECTION_ID()";
        }

        @Override
        boolean isLockNotAvailable(SQLException e) {
            return e.getErrorCode() == 1205 || e.getErrorCode() == 3572 || e.getErrorCode() == 1969;
        }
    },
    MYSQL("mysql") {
        @Override
        String nowMillis() {
            return MARIADB.nowMillis();
        }

        @Override
        long nextToken(Connection c, String table) throws SQLException {
            try (PreparedStatement ps = c.prepareStatement(
                    "INSERT INTO " + table + "_fence (id) VALUES (NULL)", Statement.RETURN_GENERATED_KEYS)) {
                ps.executeUpdate();
                try (ResultSet rs = ps.getGeneratedKeys()) {
                    if (!rs.next()) {
                        throw new SQLException("no generated key from " + table + "_fence");
                    }
                    long token = rs.getLong(1);
                    try (PreparedStatement del = c.prepareStatement("DELETE FROM " + table + "_fence WHERE id < ?")) {
                        del.setLong(1, token); // the AUTO_INCREMENT counter stays; old rows are not needed
                        del.executeUpdate();
                    }
                    return token;
                }
            }
        }

        @Override
        String sessionIdQuery() {
            return "SELECT CONNECTION_ID()";
        }

        @Override
        @Nullable
        String nextValueExpression(String table) {
            return null;
        }

        @Override
        boolean isLockNotAvailable(SQLException e) {
            return MARIADB.isLockNotAvailable(e);
        }
    },
    H2("h2") {
        @Override
        String nowMillis() {
            return "CAST(FLOOR(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000) AS BIGINT)";
        }

        @Override
        long nextToken(Connection c, String table) throws SQLException {
            return queryLong(c, "SELECT NEXT VALUE FOR " + table + "_fence");
        }

        @Override
        String sessionIdQuery() {
            return "SELECT SESSION_ID()";
        }

        @Override
        boolean isLockNotAvailable(SQLException e) {
            return e.getErrorCode() == 50200 || "HYT00".equals(e.getSQLState());
        }
    };

    private final String id;

    Dialect(String id) {
        this.id = id;
    }

    /** The name used by {@code JdbcLockClient.Builder#dialect} and in the schema resource. */
    String id() {
        return id;
    }

    /** SQL for the database's current time in epoch milliseconds, rounded down. */
    abstract String nowMillis();

    /** Draws the next fencing token (also used as queue ticket); strictly increasing across sessions. */
    abstract long nextToken(Connection c, String table) throws SQLException;

    /** The next value of the fencing sequence as a SQL expression, or null where there is no sequence (MySQL). */
    @Nullable
    String nextValueExpression(String table) {
        return this == POSTGRESQL ? "nextval('" + table + "_fence')" : "NEXT VALUE FOR " + table + "_fence";
    }

    /** SQL returning the id of the connection's server session. */
    abstract String sessionIdQuery();

    /** Whether {@code e} says a {@code NOWAIT} lock request found the row locked. */
    abstract boolean isLockNotAvailable(SQLException e);

    /** Whether the database has LISTEN/NOTIFY. */
    boolean notifies() {
        return false;
    }

    static boolean isDuplicateKey(SQLException e) {
        String state = e.getSQLState();
        return "23505".equals(state) // PostgreSQL, H2
                || e.getErrorCode() == 1062 // MariaDB/MySQL ER_DUP_ENTRY
                || e.getErrorCode() == 23505;
    }

    /**
     * Whether retrying {@code e} in a new transaction may succeed: deadlock victim, serialization failure, lock wait
     * timeout, lost connection.
     */
    static boolean isTransient(SQLException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLException s) {
                String state = s.getSQLState();
                if (state != null
                        && (state.startsWith("08")
                                || state.equals("40001")
                                || state.equals("40P01")
                                || state.equals("57P01"))) {
                    return true;
                }
                int code = s.getErrorCode();
                if (code == 1213 || code == 1205 || code == 40001 || code == 90131 || code == 50200) {
                    return true; // MariaDB deadlock / lock wait timeout; H2 concurrent update / lock timeout
                }
                if (s instanceof java.sql.SQLTransientException || s instanceof java.sql.SQLRecoverableException) {
                    return true;
                }
            }
        }
        return false;
    }

    static Dialect named(String id) {
        String lower = id.toLowerCase(Locale.ROOT);
        for (Dialect d : values()) {
            if (d.id.equals(lower)) {
                return d;
            }
        }
        if (lower.equals("postgres")) {
            return POSTGRESQL;
        }
        throw new IllegalArgumentException("dialect must be one of postgresql, mariadb, mysql, h2: '" + id + "'");
    }

    static Dialect detect(DatabaseMetaData md) throws SQLException {
        String product = md.getDatabaseProductName().toLowerCase(Locale.ROOT);
        String version = md.getDatabaseProductVersion().toLowerCase(Locale.ROOT);
        if (product.contains("postgres")) {
            return POSTGRESQL;
        }
        if (product.contains("mariadb") || version.contains("mariadb")) {
            return MARIADB;
        }
        if (product.contains("mysql")) {
            return MYSQL;
        }
        if (product.contains("h2")) {
            return H2;
        }
        throw new IllegalArgumentException("unsupported database '" + md.getDatabaseProductName() + " "
                + md.getDatabaseProductVersion() + "'; supported: PostgreSQL, MariaDB, MySQL, H2");
    }

    /** The DDL statements of this dialect's schema resource, with the table prefix filled in. */
    List<String> schema(String table) {
        String resource = "schema-" + id + ".sql";
        String text;
        try (InputStream in = Dialect.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("missing schema resource: " + resource);
            }
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> statements = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : text.split("\n", -1)) {
            String trimmed = line.strip();
            if (trimmed.isEmpty() || trimmed.startsWith("--")) {
                continue;
            }
            int comment = line.indexOf("--");
            current.append(comment >= 0 ? line.substring(0, comment) : line).append('\n');
            if (trimmed.endsWith(";")
                    || (comment >= 0 && line.substring(0, comment).strip().endsWith(";"))) {
                String sql = current.toString().strip();
                statements.add(sql.substring(0, sql.length() - 1).replace("${table}", table));
                current.setLength(0);
            }
        }
        return statements;
    }

    static long queryLong(Connection c, String sql) throws SQLException {
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            if (!rs.next()) {
                throw new SQLException("no row from: " + sql);
            }
            return rs.getLong(1);
        }
    }
}
