package io.distlock.jdbc;

import io.distlock.spi.Claim;
import io.distlock.spi.Mode;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.jspecify.annotations.Nullable;

/** What a name is used as, across the tables of locks, claims and latches, and the codes the claim tables store. */
final class ClaimKinds {
    private ClaimKinds() {}

    /**
     * What else the name is in use as: a live lock row, a read-write lock or semaphore with live claims (unless
     * {@code claimsToo} is false), or a live latch; null when none. One statement.
     */
    static @Nullable String inUseAs(Db db, Connection c, String hash, boolean claimsToo) throws SQLException {
        String t = db.table;
        String sql = "SELECT (SELECT COUNT(*) FROM " + t + "_lock WHERE name_hash = ? AND expires_at > " + db.now
                + "), (SELECT COUNT(*) FROM " + t + "_latch WHERE name_hash = ? AND expires_at > " + db.now + "), "
                + (claimsToo
                        ? "(SELECT MAX(n.kind) FROM " + t + "_name n WHERE n.name_hash = ? AND EXISTS (SELECT 1 FROM "
                                + t + "_claim c WHERE c.name_hash = n.name_hash AND c.expires_at > " + db.now + "))"
                        : "NULL");
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, hash);
            ps.setString(2, hash);
            if (claimsToo) {
                ps.setString(3, hash);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                if (rs.getLong(1) > 0) {
                    return "lock";
                }
                if (rs.getLong(2) > 0) {
                    return "count-down latch";
                }
                String kind = rs.getString(3);
                return kind == null ? null : label(kind.charAt(0));
            }
        }
    }

    static IllegalStateException inUse(String name, String inUse, String asked) {
        return new IllegalStateException(
                "'" + JdbcTableLockStore.abbreviate(name) + "' is in use as a " + inUse + ", not as a " + asked);
    }

    static IllegalStateException sizeMismatch(String name, int stored, int asked) {
        return new IllegalStateException("semaphore '" + JdbcTableLockStore.abbreviate(name) + "' has " + stored
                + " permits in all; this client asked for a size of " + asked);
    }

    static char kindCode(Claim.Kind kind) {
        return kind == Claim.Kind.SEMAPHORE ? 'S' : 'R';
    }

    static String label(char kind) {
        return kind == 'S' ? Claim.Kind.SEMAPHORE.label() : Claim.Kind.READ_WRITE_LOCK.label();
    }

    static String modeCode(Mode mode) {
        return mode == Mode.EXCLUSIVE ? "X" : "S";
    }

    static Mode mode(String code) {
        return code.charAt(0) == 'X' ? Mode.EXCLUSIVE : Mode.SHARED;
    }
}
