package io.distlock.jdbc;

import io.distlock.LockInfo;
import io.distlock.spi.LockKey;
import io.distlock.spi.Subscription;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * Count-down latches in every mode, in two tables: <table>_latch has one row per counting latch (its count and
 * expires_at, epoch milliseconds of the DATABASE clock, pushed to now + expiry by every change) and <table>_latch_call
 * the ids of the count-downs the latch has counted. A latch at zero has no row (it reads as absent); so has one past
 * its expiry, whose row the next call on it or the cleanup deletes together with its call ids.
 *
 * Each change is one READ COMMITTED transaction that first locks the latch's row (SELECT ... FOR UPDATE; a concurrent
 * insert of a new latch fails on the primary key and the transaction is made again). countDown looks up its call id
 * under that lock, so a call retried after its answer was lost is counted once; the count-down that reaches zero
 * deletes the row and the call ids and sends NOTIFY on PostgreSQL (payload "z" + the name's hash, apart from the
 * releases' payloads), which wakes the awaiting clients through their LISTEN connection; elsewhere they poll.
 *
 * A name with a live lock row, live read-write lock or semaphore claims, refuses to be a latch, and the other way
 * round (ClaimKinds.inUseAs, one statement, asked only when the latch is absent).
 */
/** Count-down latches in tables, for every mode of {@link JdbcLockClient}. */
final class JdbcTableCounters {
    private final Db db;
    private final String latches;
    private final String calls;
    private final @Nullable PgListener listener;
    private final @Nullable String channel;

    JdbcTableCounters(Db db, @Nullable PgListener listener, @Nullable String channel) {
        this.db = db;
        this.latches = db.table + "_latch";
        this.calls = db.table + "_latch_call";
        this.listener = listener;
        this.channel = channel;
    }

    /** A latch row as a change sees it: its count and the time to its expiry in milliseconds. */
    private record State(long count, long remaining) {}

    boolean trySetCount(LockKey key, long count, Duration expiry) {
        String hash = Names.hash(key.name());
        long millis = Db.leaseMillis(expiry);
        for (int race = 0; ; race++) {
            try {
                return db.transaction("trySetCount of '" + abbreviate(key) + "'", c -> {
                    State s = lockRow(c, hash);
                    if (s != null && s.remaining > 0 && s.count > 0) {
                        return false;
                    }
                    if (s == null || s.remaining <= 0) {
                        refuseOtherKind(c, key, hash);
                    }
                    if (s == null) {
                        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + latches
                                + " (name_hash, name, count_left, expires_at) VALUES (?, ?, ?, " + db.now + " + ?)")) {
                            ps.setString(1, hash);
                            ps.setString(2, Names.display(key.name()));
                            ps.setLong(3, count);
                            ps.setLong(4, millis);
                            ps.executeUpdate();
                        } catch (SQLException e) {
                            if (Dialect.isDuplicateKey(e)) {
                                throw new JdbcTableClaims.LostInsertRace(e);
                            }
                            throw e;
                        }
                        return true;
                    }
                    deleteCalls(c, hash);
                    try (PreparedStatement ps = c.prepareStatement("UPDATE " + latches + " SET count_left = ?,"
                            + " expires_at = " + db.now + " + ? WHERE name_hash = ?")) {
                        ps.setLong(1, count);
                        ps.setLong(2, millis);
                        ps.setString(3, hash);
                        ps.executeUpdate();
                    }
                    return true;
                });
            } catch (JdbcTableClaims.LostInsertRace e) {
                if (race >= 3) {
                    return false; // each lost race was another client setting the count first
                }
            }
        }
    }

    long countDown(LockKey key, String callId, Duration expiry) {
        String hash = Names.hash(key.name());
        long millis = Db.leaseMillis(expiry);
        return db.transaction("countDown of '" + abbreviate(key) + "'", c -> {
            State s = lockRow(c, hash);
            if (s == null || s.remaining <= 0 || s.count <= 0) {
                refuseOtherKind(c, key, hash);
                if (s != null) {
                    deleteLatch(c, hash); // expired: gone with its call ids
                }
                return 0L;
            }
            try (PreparedStatement ps =
                    c.prepareStatement("SELECT 1 FROM " + calls + " WHERE name_hash = ? AND call_id = ?")) {
                ps.setString(1, hash);
                ps.setString(2, callId);
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        return s.count; // counted before: a retry of a call whose answer was lost
                    }
                }
            }
            if (s.count == 1) {
                deleteLatch(c, hash);
                String ch = channel;
                if (ch != null) {
                    PgListener.send(c, ch, zeroPayload(hash));
                }
                return 0L;
            }
            try (PreparedStatement ps = c.prepareStatement("UPDATE " + latches + " SET count_left = count_left - 1,"
                    + " expires_at = " + db.now + " + ? WHERE name_hash = ?")) {
                ps.setLong(1, millis);
                ps.setString(2, hash);
                ps.executeUpdate();
            }
            try (PreparedStatement ps =
                    c.prepareStatement("INSERT INTO " + calls + " (name_hash, call_id) VALUES (?, ?)")) {
                ps.setString(1, hash);
                ps.setString(2, callId);
                ps.executeUpdate();
            }
            return s.count - 1;
        });
    }

    long count(LockKey key) {
        String hash = Names.hash(key.name());
        return db.autocommit("count of '" + abbreviate(key) + "'", c -> {
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT count_left FROM " + latches + " WHERE name_hash = ? AND expires_at > " + db.now)) {
                ps.setString(1, hash);
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        return rs.getLong(1);
                    }
                }
            }
            refuseOtherKind(c, key, hash);
            return 0L;
        });
    }

    Subscription watchZero(LockKey key, Runnable wakeUp) {
        PgListener l = listener;
        return l == null ? Subscription.none() : l.subscribe(zeroPayload(Names.hash(key.name())), wakeUp);
    }

    Optional<LockInfo> inspect(LockKey key) {
        String hash = Names.hash(key.name());
        return db.autocommit("inspect of '" + abbreviate(key) + "'", c -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT count_left, expires_at - " + db.now + " FROM "
                    + latches + " WHERE name_hash = ? AND expires_at > " + db.now)) {
                ps.setString(1, hash);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next()
                            ? Optional.of(LockInfo.ofLatch(key.name(), rs.getLong(1), Duration.ofMillis(rs.getLong(2))))
                            : Optional.<LockInfo>empty();
                }
            }
        });
    }

    /** The names of live latches that start with {@code prefix}, in name order. */
    List<String> names(String prefix, int limit) {
        return db.autocommit("list", c -> {
            List<String> out = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT name FROM " + latches + " WHERE name LIKE ? ESCAPE"
                    + " '!' AND expires_at > " + db.now + " ORDER BY name LIMIT " + Math.max(1, limit))) {
                ps.setString(1, Names.likePrefix(prefix));
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.add(rs.getString(1));
                    }
                }
            }
            return out;
        });
    }

    /** Deletes latches that expired a while ago with their call ids, each under its row lock. */
    void cleanup() {
        List<String> expired = db.autocommit("cleanup of latches", c -> {
            List<String> out = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT name_hash FROM " + latches + " WHERE expires_at < " + db.now + " - 1000 LIMIT 100")) {
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.add(rs.getString(1));
                    }
                }
            }
            return out;
        });
        for (String hash : expired) {
            db.transaction("cleanup of a latch", c -> {
                State s = lockRow(c, hash);
                if (s != null && s.remaining < -1000) {
                    deleteLatch(c, hash);
                }
                return true;
            });
        }
    }

    private @Nullable State lockRow(Connection c, String hash) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT count_left, expires_at - " + db.now + " FROM " + latches + " WHERE name_hash = ? FOR UPDATE")) {
            ps.setString(1, hash);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? new State(rs.getLong(1), rs.getLong(2)) : null;
            }
        }
    }

    private void refuseOtherKind(Connection c, LockKey key, String hash) throws SQLException {
        String other = ClaimKinds.inUseAs(db, c, hash, true);
        if (other != null && !other.equals("count-down latch")) {
            throw ClaimKinds.inUse(key.name(), other, "count-down latch");
        }
    }

    private void deleteLatch(Connection c, String hash) throws SQLException {
        deleteCalls(c, hash);
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + latches + " WHERE name_hash = ?")) {
            ps.setString(1, hash);
            ps.executeUpdate();
        }
    }

    private void deleteCalls(Connection c, String hash) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + calls + " WHERE name_hash = ?")) {
            ps.setString(1, hash);
            ps.executeUpdate();
        }
    }

    private static String zeroPayload(String hash) {
        return "z" + hash;
    }

    private static String abbreviate(LockKey key) {
        return JdbcTableLockStore.abbreviate(key.name());
    }
}
