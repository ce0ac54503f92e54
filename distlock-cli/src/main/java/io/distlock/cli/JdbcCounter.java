package io.distlock.cli;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/**
 * A {@link SharedCounter} as rows of {@code <prefix>_demo_counter(id, counter_value, fence)}; the fenced write is one
 * conditional {@code UPDATE}, so the database itself refuses a stale token.
 */
final class JdbcCounter implements SharedCounter {
    private final DataSource dataSource;
    private final String table;

    JdbcCounter(DataSource dataSource, String prefix) {
        this.dataSource = dataSource;
        this.table = prefix + "_demo_counter";
        try (Connection c = dataSource.getConnection();
                Statement st = c.createStatement()) {
            st.execute("CREATE TABLE IF NOT EXISTS " + table
                    + " (id VARCHAR(100) NOT NULL PRIMARY KEY, counter_value BIGINT NOT NULL, fence BIGINT NOT NULL)");
        } catch (SQLException e) {
            throw new BackendUnreachableException("cannot create the demo table " + table + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void reset(String id) {
        delete(id);
        update("INSERT INTO " + table + " (id, counter_value, fence) VALUES (?, 0, 0)", id);
    }

    @Override
    public long read(String id) {
        return query("SELECT counter_value FROM " + table + " WHERE id = ?", id);
    }

    @Override
    public void write(String id, long value) {
        update("UPDATE " + table + " SET counter_value = ? WHERE id = ?", value, id);
    }

    @Override
    public boolean writeFenced(String id, long value, long token) {
        return update(
                        "UPDATE " + table + " SET counter_value = ?, fence = ? WHERE id = ? AND fence <= ?",
                        value,
                        token,
                        id,
                        token)
                == 1;
    }

    @Override
    public long fence(String id) {
        return query("SELECT fence FROM " + table + " WHERE id = ?", id);
    }

    @Override
    public void delete(String id) {
        update("DELETE FROM " + table + " WHERE id = ?", id);
    }

    @Override
    public void close() {}

    private long query(String sql, String id) {
        try (Connection c = dataSource.getConnection();
                PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new IllegalStateException("no demo counter '" + id + "' in " + table);
                }
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("demo counter query failed: " + e.getMessage(), e);
        }
    }

    private int update(String sql, Object... args) {
        try (Connection c = dataSource.getConnection();
                PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            return ps.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException("demo counter update failed: " + e.getMessage(), e);
        }
    }
}
