package io.distlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;

/**
 * How a session-bound mode takes and gives back one lock on its dedicated connection, and how another connection
 * sees it. Implementations: {@link RowLock} ({@code SELECT ... FOR UPDATE NOWAIT} in an open transaction) and {@link
 * Advisory} ({@code pg_try_advisory_lock}, {@code GET_LOCK}).
 */
abstract class SessionLock {
    final Db db;

    SessionLock(Db db) {
        this.db = db;
    }

    /** Tries once, without waiting, to take the lock on {@code c}; true if {@code c}'s session holds it now. */
    abstract boolean tryLock(Connection c, String name) throws SQLException;

    /** Gives the lock back on its own connection; true if it was still held. Sends NOTIFY where supported. */
    abstract boolean unlock(Connection c, String name) throws SQLException;

    /**
     * A release's commit was sent and failed: the database may have applied it and lost the answer with the
     * connection, or not applied it; either way the session ends with the connection, and its lock with it.
     */
    static final class CommitUnknown extends SQLException {
        private static final long serialVersionUID = 1L;

        CommitUnknown(SQLException cause) {
            super("the release's commit failed once sent: " + cause.getMessage(), cause.getSQLState(), cause);
        }
    }

    /** Leaves {@code c} fit to go back to a pool after a failed or unknown unlock. */
    abstract void reset(Connection c) throws SQLException;

    /** After a hold ended without its own unlock (its session died), removes what it left behind, if anything. */
    void cleanUpAfterLoss(String name) {}

    /** Of these holds, the ones whose session still holds its lock; one statement on {@code control}. */
    abstract Set<Long> stillHeld(Connection control, List<Held> holds) throws SQLException;

    /** Whether some session holds the lock, seen from {@code control}; the holder's session id if known, else 0. */
    abstract OptionalLong holder(Connection control, String name) throws SQLException;

    /**
     * Whether this mechanism has a shared hold beside the exclusive one ({@link #tryLockShared}): PostgreSQL's shared
     * advisory locks. GET_LOCK and a row locked FOR UPDATE have none.
     */
    boolean sharedHolds() {
        return false;
    }

    /** Tries once, without waiting, to take the shared hold of {@code name} on {@code c}; see {@link #sharedHolds}. */
    boolean tryLockShared(Connection c, String name) throws SQLException {
        throw new UnsupportedOperationException(mode() + " has no shared hold on " + db.dialect.id());
    }

    /** Tries once, without waiting, to take the write hold of a read-write lock; by default the exclusive hold. */
    boolean tryLockWrite(Connection c, String name) throws SQLException {
        return tryLock(c, name);
    }

    /**
     * Adds a read hold on {@code c}, whose session holds the write hold of {@code name} (a downgrade); by default the
     * shared hold, which a session never refuses itself.
     */
    boolean tryDowngrade(Connection c, String name) throws SQLException {
        return tryLockShared(c, name);
    }

    /**
     * Ends one hold on its own connection; true if it was still held. {@code othersStay}: another hold of the name (a
     * downgrade's read or write hold) stays on the same session.
     */
    boolean unlockHold(Connection c, String name, boolean readWrite, boolean shared, boolean othersStay)
            throws SQLException {
        return shared ? unlockShared(c, name) : unlock(c, name);
    }

    /** Gives one shared hold back on its own connection; true if it was still held. Sends NOTIFY where supported. */
    boolean unlockShared(Connection c, String name) throws SQLException {
        throw new UnsupportedOperationException(mode() + " has no shared hold on " + db.dialect.id());
    }

    /** Every session's hold of {@code name}, exclusive and shared, seen from {@code control}; see {@link #sharedHolds}. */
    List<Holder> holders(Connection control, String name) throws SQLException {
        OptionalLong h = holder(control, name);
        return h.isEmpty() ? List.of() : List.of(new Holder(h.getAsLong(), false));
    }

    /** A hold as {@link #stillHeld} needs it: an id to answer with, the holder's session id, the name, its mode. */
    record Held(long id, long sessionId, String name, boolean shared) {}

    /** One session's hold of a name as the database shows it: the session id (0 if unknown) and whether shared. */
    record Holder(long sessionId, boolean shared) {}

    abstract String mode();

    void notifyRelease(Connection c, String name) throws SQLException {
        if (!db.dialect.notifies()) {
            return;
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_notify(?, ?)")) {
            ps.setString(1, db.table.toLowerCase(java.util.Locale.ROOT) + "_release");
            ps.setString(2, Names.hash(name));
            ps.executeQuery().close();
        }
    }

    static String placeholders(int n) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) {
            sb.append(i == 0 ? "?" : ", ?");
        }
        return sb.toString();
    }

    /** Sessions among {@code holds} that are still connected: pg_stat_activity or the process list. */
    Set<Long> liveSessions(Connection control, List<Held> holds) throws SQLException {
        String sql = db.dialect == Dialect.POSTGRESQL
                ? "SELECT pid FROM pg_stat_activity WHERE pid IN (" + placeholders(holds.size()) + ")"
                : "SELECT ID FROM information_schema.PROCESSLIST WHERE ID IN (" + placeholders(holds.size()) + ")";
        Set<Long> live = new HashSet<>();
        try (PreparedStatement ps = control.prepareStatement(sql)) {
            int i = 1;
            for (Held h : holds) {
                ps.setLong(i++, h.sessionId());
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    live.add(rs.getLong(1));
                }
            }
        }
        Set<Long> out = new HashSet<>();
        for (Held h : holds) {
            if (live.contains(h.sessionId())) {
                out.add(h.id());
            }
        }
        return out;
    }

    /**
     * Mode ROW_LOCK: a row per name, locked FOR UPDATE NOWAIT in a transaction kept open for the hold. Read-write locks
     * (PostgreSQL and MariaDB): a read hold locks the row in share mode with NOWAIT; a write hold on PostgreSQL locks it
     * in share mode, then FOR UPDATE NOWAIT after a savepoint, so that a downgrade's read hold is the share lock already
     * there and the write release rolls back to the savepoint, which gives the exclusive lock back and keeps the share
     * lock. InnoDB keeps the row locks taken after a savepoint that is rolled back, so on MariaDB a write hold is FOR
     * UPDATE alone, and a write release that keeps a downgrade's read hold puts a guard entry at the head of the queue
     * (which holds back every writer and no reader, and which a writer that got the row meanwhile sees and backs off
     * from), commits, takes the share lock again and removes the guard.
     */
    static final class RowLock extends SessionLock {
        /** The savepoint after a read-write write hold's share lock on PostgreSQL. */
        private static final String WRITE = "distlock_write";

        private final String rows;
        private final FairQueue queue;

        RowLock(Db db) {
            super(db);
            this.rows = db.table + "_row";
            this.queue = new FairQueue(db);
        }

        @Override
        String mode() {
            return "ROW_LOCK";
        }

        @Override
        boolean sharedHolds() {
            return db.dialect == Dialect.POSTGRESQL || db.dialect == Dialect.MARIADB;
        }

        private String shareClause() {
            return db.dialect == Dialect.POSTGRESQL ? "FOR SHARE NOWAIT" : "LOCK IN SHARE MODE NOWAIT";
        }

        @Override
        boolean tryLock(Connection c, String name) throws SQLException {
            return lockRow(c, name, false);
        }

        @Override
        boolean tryLockShared(Connection c, String name) throws SQLException {
            if (!sharedHolds()) {
                return super.tryLockShared(c, name);
            }
            return lockRow(c, name, true);
        }

        @Override
        boolean tryLockWrite(Connection c, String name) throws SQLException {
            if (db.dialect != Dialect.POSTGRESQL) {
                if (!lockRow(c, name, false)) {
                    return false;
                }
                // a downgrade's write release commits, then takes the share lock again: its guard, committed before,
                // is visible here to a writer that got the row in between (this read's snapshot is newer)
                boolean guarded;
                try {
                    guarded = queue.guarded(c, Names.hash(name));
                } catch (SQLException e) {
                    c.rollback();
                    c.setAutoCommit(true);
                    throw e;
                }
                if (guarded) {
                    c.rollback();
                    c.setAutoCommit(true);
                    return false;
                }
                return true;
            }
            if (!lockRow(c, name, true)) {
                return false;
            }
            try {
                execute(c, "SAVEPOINT " + WRITE);
                if (selectLocked(c, Names.hash(name), "FOR UPDATE NOWAIT")) {
                    return true;
                }
                throw new SQLException("the row of a share-locked name is gone");
            } catch (SQLException e) {
                c.rollback();
                c.setAutoCommit(true);
                if (db.dialect.isLockNotAvailable(e)) {
                    return false; // another reader holds it too
                }
                throw e;
            }
        }

        /** Locks the name's row, exclusively or in share mode, in a transaction left open; false if it is taken. */
        private boolean lockRow(Connection c, String name, boolean share) throws SQLException {
            String hash = Names.hash(name);
            for (int attempt = 0; attempt < Db.ATTEMPTS; attempt++) {
                c.setAutoCommit(true);
                ensureRow(c, hash, name);
                c.setAutoCommit(false);
                try {
                    if (selectLocked(c, hash, share ? shareClause() : "FOR UPDATE NOWAIT")) {
                        return true; // the transaction stays open: the row lock is the hold
                    }
                } catch (SQLException e) {
                    c.rollback();
                    c.setAutoCommit(true);
                    if (db.dialect.isLockNotAvailable(e)) {
                        return false;
                    }
                    throw e;
                }
                c.rollback(); // the holder deleted the row as it released: insert it again
            }
            c.setAutoCommit(true);
            return false;
        }

        private boolean selectLocked(Connection c, String hash, String clause) throws SQLException {
            try (PreparedStatement ps =
                    c.prepareStatement("SELECT name_hash FROM " + rows + " WHERE name_hash = ? " + clause)) {
                ps.setString(1, hash);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next();
                }
            }
        }

        private static void execute(Connection c, String sql) throws SQLException {
            try (Statement st = c.createStatement()) {
                st.execute(sql);
            }
        }

        @Override
        boolean tryDowngrade(Connection c, String name) throws SQLException {
            if (db.dialect == Dialect.POSTGRESQL) {
                execute(c, "SELECT 1"); // the write hold took the share lock first: it is there if the session is
                return true;
            }
            // the transaction holds the row FOR UPDATE; it never conflicts with itself
            return selectLocked(c, Names.hash(name), shareClause());
        }

        @Override
        boolean unlockHold(Connection c, String name, boolean readWrite, boolean shared, boolean othersStay)
                throws SQLException {
            if (!readWrite) {
                return unlock(c, name);
            }
            if (othersStay) {
                return shared ? true : keepOnlyTheShareLock(c, name); // a read hold ends with its write hold's
            }
            if (!shared) {
                return unlock(c, name);
            }
            // the last reader to leave deletes the row: each reader gives its share lock back first, then tries, so of
            // readers that leave at once the last one to give it back finds no other share lock
            c.rollback();
            c.setAutoCommit(true);
            try {
                cleanUpAfterLoss(name);
            } catch (RuntimeException e) {
                // the row stays; the next holder uses it and the next write release deletes it
            }
            notifyRelease(c, name);
            return true;
        }

        /** The write release of a downgrade: the exclusive lock goes, the read hold's share lock stays. */
        private boolean keepOnlyTheShareLock(Connection c, String name) throws SQLException {
            if (db.dialect == Dialect.POSTGRESQL) {
                execute(c, "ROLLBACK TO SAVEPOINT " + WRITE);
                db.autocommit("release of '" + JdbcTableLockStore.abbreviate(name) + "'", q -> {
                    notifyRelease(q, name); // a notification in the open transaction would wait for its end
                    return true;
                });
                return true;
            }
            String hash = Names.hash(name);
            String guard = FairQueue.GUARD + java.util.UUID.randomUUID() + "/S";
            db.autocommit("downgrade of '" + JdbcTableLockStore.abbreviate(name) + "'", q -> {
                queue.enqueueFirst(q, hash, guard);
                return true;
            });
            try {
                c.commit();
                if (!selectLocked(c, hash, shareClause())) {
                    throw new SQLException("the row of a downgraded read hold is gone");
                }
                return true;
            } finally {
                db.autocommit("downgrade of '" + JdbcTableLockStore.abbreviate(name) + "'", q -> {
                    queue.remove(q, hash, guard);
                    return true;
                });
            }
        }

        private void ensureRow(Connection c, String hash, String name) throws SQLException {
            try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM " + rows + " WHERE name_hash = ?")) {
                ps.setString(1, hash); // a plain read takes no lock, so it never waits for the holder
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        return;
                    }
                }
            }
            String insert = "INSERT INTO " + rows + " (name_hash, name) VALUES (?, ?)";
            if (db.dialect == Dialect.POSTGRESQL) {
                insert += " ON CONFLICT DO NOTHING";
            } else if (db.dialect == Dialect.MARIADB) {
                insert = "SET STATEMENT innodb_lock_wait_timeout = 1 FOR " + insert; // bounded, never the hold
            }
            try (PreparedStatement ps = c.prepareStatement(insert)) {
                ps.setString(1, hash);
                ps.setString(2, Names.display(name));
                ps.executeUpdate();
            } catch (SQLException e) {
                if (!Dialect.isDuplicateKey(e) && !db.dialect.isLockNotAvailable(e)) {
                    throw e;
                }
            }
        }

        @Override
        boolean unlock(Connection c, String name) throws SQLException {
            // deleting the row leaves nothing behind; the commit is the release
            try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + rows + " WHERE name_hash = ?")) {
                ps.setString(1, Names.hash(name));
                ps.executeUpdate();
            }
            notifyRelease(c, name);
            try {
                c.commit();
            } catch (SQLException e) {
                throw new CommitUnknown(e);
            }
            c.setAutoCommit(true);
            return true;
        }

        @Override
        void cleanUpAfterLoss(String name) {
            String hash = Names.hash(name);
            // the row of a dead holder stays behind: delete it unless someone holds it again by now
            var unused = db.transaction("clean-up of the row of '" + JdbcTableLockStore.abbreviate(name) + "'", c -> {
                try (PreparedStatement ps = c.prepareStatement(
                        "SELECT name_hash FROM " + rows + " WHERE name_hash = ? FOR UPDATE NOWAIT")) {
                    ps.setString(1, hash);
                    ps.executeQuery().close();
                } catch (SQLException e) {
                    if (db.dialect.isLockNotAvailable(e)) {
                        return false;
                    }
                    throw e;
                }
                try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + rows + " WHERE name_hash = ?")) {
                    ps.setString(1, hash);
                    return ps.executeUpdate() > 0;
                }
            });
        }

        /** Whether the row is locked, and how, seen by trying it without waiting: holders' sessions are not shown. */
        @Override
        List<Holder> holders(Connection control, String name) throws SQLException {
            if (!sharedHolds() || holder(control, name).isEmpty()) {
                return super.holders(control, name);
            }
            boolean autoCommit = control.getAutoCommit();
            control.setAutoCommit(false);
            try {
                selectLocked(control, Names.hash(name), shareClause());
                return List.of(new Holder(0, true));
            } catch (SQLException e) {
                if (db.dialect.isLockNotAvailable(e)) {
                    return List.of(new Holder(0, false));
                }
                throw e;
            } finally {
                control.rollback();
                control.setAutoCommit(autoCommit);
            }
        }

        @Override
        void reset(Connection c) throws SQLException {
            if (!c.getAutoCommit()) {
                c.rollback();
                c.setAutoCommit(true);
            }
        }

        @Override
        Set<Long> stillHeld(Connection control, List<Held> holds) throws SQLException {
            return liveSessions(control, holds);
        }

        @Override
        OptionalLong holder(Connection control, String name) throws SQLException {
            boolean autoCommit = control.getAutoCommit();
            control.setAutoCommit(false);
            try (PreparedStatement ps = control.prepareStatement(
                    "SELECT name_hash FROM " + rows + " WHERE name_hash = ? FOR UPDATE NOWAIT")) {
                ps.setString(1, Names.hash(name));
                ps.executeQuery().close();
                return OptionalLong.empty(); // we could lock it (or it does not exist): nobody holds it
            } catch (SQLException e) {
                if (db.dialect.isLockNotAvailable(e)) {
                    return OptionalLong.of(0);
                }
                throw e;
            } finally {
                control.rollback();
                control.setAutoCommit(autoCommit);
            }
        }
    }

    /** Mode ADVISORY: PostgreSQL session advisory locks, MariaDB/MySQL GET_LOCK. */
    static final class Advisory extends SessionLock {
        /** How pg_locks names the mode of a shared advisory lock; an exclusive one is ExclusiveLock. */
        private static final String SHARE_LOCK = "ShareLock";

        private final boolean postgres;

        Advisory(Db db) {
            super(db);
            this.postgres = db.dialect == Dialect.POSTGRESQL;
        }

        @Override
        String mode() {
            return "ADVISORY";
        }

        @Override
        boolean sharedHolds() {
            return postgres;
        }

        @Override
        boolean tryLockShared(Connection c, String name) throws SQLException {
            if (!postgres) {
                return super.tryLockShared(c, name);
            }
            c.setAutoCommit(true);
            try (PreparedStatement ps = c.prepareStatement("SELECT pg_try_advisory_lock_shared(?)")) {
                bindKey(ps, 1, name);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        throw new SQLException("no answer to the shared advisory lock request");
                    }
                    return rs.getBoolean(1);
                }
            }
        }

        @Override
        boolean unlockShared(Connection c, String name) throws SQLException {
            if (!postgres) {
                return super.unlockShared(c, name);
            }
            boolean released;
            try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_unlock_shared(?)")) {
                bindKey(ps, 1, name);
                try (ResultSet rs = ps.executeQuery()) {
                    released = rs.next() && rs.getBoolean(1);
                }
            }
            if (released) {
                notifyRelease(c, name);
            }
            return released;
        }

        @Override
        List<Holder> holders(Connection control, String name) throws SQLException {
            if (!postgres) {
                return super.holders(control, name);
            }
            long key = Names.advisoryKey(db.table, name);
            List<Holder> out = new java.util.ArrayList<>();
            try (PreparedStatement ps = control.prepareStatement("SELECT pid, mode FROM pg_locks WHERE locktype ="
                    + " 'advisory' AND granted AND objsubid = 1 AND classid::bigint = ? AND objid::bigint = ?"
                    + " ORDER BY pid")) {
                ps.setLong(1, key >>> 32);
                ps.setLong(2, key & 0xFFFF_FFFFL);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.add(new Holder(rs.getLong(1), SHARE_LOCK.equals(rs.getString(2))));
                    }
                }
            }
            return out;
        }

        @Override
        boolean tryLock(Connection c, String name) throws SQLException {
            c.setAutoCommit(true);
            try (PreparedStatement ps =
                    c.prepareStatement(postgres ? "SELECT pg_try_advisory_lock(?)" : "SELECT GET_LOCK(?, 0)")) {
                bindKey(ps, 1, name);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        throw new SQLException("no answer to the advisory lock request");
                    }
                    if (postgres) {
                        return rs.getBoolean(1);
                    }
                    long answer = rs.getLong(1);
                    if (rs.wasNull()) {
                        throw new SQLException("GET_LOCK returned NULL (an error in the server)");
                    }
                    return answer == 1;
                }
            }
        }

        @Override
        boolean unlock(Connection c, String name) throws SQLException {
            boolean released;
            try (PreparedStatement ps =
                    c.prepareStatement(postgres ? "SELECT pg_advisory_unlock(?)" : "SELECT RELEASE_LOCK(?)")) {
                bindKey(ps, 1, name);
                try (ResultSet rs = ps.executeQuery()) {
                    // PostgreSQL answers a boolean, MariaDB 1, 0 or NULL
                    released = rs.next() && (postgres ? rs.getBoolean(1) : rs.getLong(1) == 1 && !rs.wasNull());
                }
            }
            if (released) {
                notifyRelease(c, name);
            }
            return released;
        }

        @Override
        void reset(Connection c) throws SQLException {
            try (Statement st = c.createStatement()) {
                st.execute(postgres ? "SELECT pg_advisory_unlock_all()" : "SELECT RELEASE_ALL_LOCKS()");
            }
        }

        @Override
        Set<Long> stillHeld(Connection control, List<Held> holds) throws SQLException {
            Set<Long> out = new HashSet<>();
            if (postgres) {
                Set<String> held = new HashSet<>();
                try (PreparedStatement ps = control.prepareStatement("SELECT pid, classid::bigint, objid::bigint,"
                        + " mode FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 AND pid IN ("
                        + placeholders(holds.size()) + ")")) {
                    int i = 1;
                    for (Held h : holds) {
                        ps.setLong(i++, h.sessionId());
                    }
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            held.add(rs.getLong(1) + ":" + rs.getLong(2) + ":" + rs.getLong(3) + ":"
                                    + SHARE_LOCK.equals(rs.getString(4)));
                        }
                    }
                }
                for (Held h : holds) {
                    long key = Names.advisoryKey(db.table, h.name());
                    if (held.contains(
                            h.sessionId() + ":" + (key >>> 32) + ":" + (key & 0xFFFF_FFFFL) + ":" + h.shared())) {
                        out.add(h.id());
                    }
                }
                return out;
            }
            StringBuilder sql = new StringBuilder("SELECT ");
            for (int i = 0; i < holds.size(); i++) {
                sql.append(i == 0 ? "IS_USED_LOCK(?)" : ", IS_USED_LOCK(?)");
            }
            try (PreparedStatement ps = control.prepareStatement(sql.toString())) {
                int i = 1;
                for (Held h : holds) {
                    ps.setString(i++, Names.getLockName(db.table, h.name()));
                }
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    for (int col = 1; col <= holds.size(); col++) {
                        long session = rs.getLong(col);
                        Held h = holds.get(col - 1);
                        if (!rs.wasNull() && session == h.sessionId()) {
                            out.add(h.id());
                        }
                    }
                }
            }
            return out;
        }

        @Override
        OptionalLong holder(Connection control, String name) throws SQLException {
            if (postgres) {
                long key = Names.advisoryKey(db.table, name);
                try (PreparedStatement ps = control.prepareStatement("SELECT pid FROM pg_locks WHERE locktype ="
                        + " 'advisory' AND granted AND objsubid = 1 AND classid::bigint = ? AND objid::bigint = ?")) {
                    ps.setLong(1, key >>> 32);
                    ps.setLong(2, key & 0xFFFF_FFFFL);
                    try (ResultSet rs = ps.executeQuery()) {
                        return rs.next() ? OptionalLong.of(rs.getLong(1)) : OptionalLong.empty();
                    }
                }
            }
            try (PreparedStatement ps = control.prepareStatement("SELECT IS_USED_LOCK(?)")) {
                ps.setString(1, Names.getLockName(db.table, name));
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    long session = rs.getLong(1);
                    return rs.wasNull() ? OptionalLong.empty() : OptionalLong.of(session);
                }
            }
        }

        private void bindKey(PreparedStatement ps, int index, String name) throws SQLException {
            if (postgres) {
                ps.setLong(index, Names.advisoryKey(db.table, name));
            } else {
                ps.setString(index, Names.getLockName(db.table, name));
            }
        }
    }
}
