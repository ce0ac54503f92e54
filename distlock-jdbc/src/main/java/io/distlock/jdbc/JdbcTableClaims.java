package io.distlock.jdbc;

import io.distlock.LockInfo;
import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.LockKey;
import io.distlock.spi.Mode;
import io.distlock.spi.OwnerId;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * Tables
 *   Mode TABLE keeps read-write locks and semaphores in two tables. <table>_name has one row per name: what the name
 *   is used as (kind 'R' or 'S') and a semaphore's size, stored by its first user and kept. <table>_claim has one row
 *   per hold (granted 1, expires_at its lease end) and per queued waiter (granted 0, expires_at the deadline by which
 *   it must come back, or be evicted as a waiter that died), keyed by (name, owner, mode). Every time is epoch
 *   milliseconds of the DATABASE clock, written and compared only in SQL, as for locks.
 *
 * Acquire
 *   One READ COMMITTED transaction: SELECT ... FOR UPDATE the name's row (inserting it if absent; a concurrent insert
 *   fails on the primary key and the whole attempt is made again), which serializes every grant decision of the name;
 *   read the name's claim rows; delete the dead ones; check the kind and size; then decide in Java exactly as the
 *   reference store does: granted when, granting the live waiters ahead of it in ticket order first, the claim is
 *   still compatible with every hold (exclusive against anything; shared while no other owner holds exclusively and
 *   the permits fit the size), or at once when it is a shared claim of an owner that holds the name exclusively (a
 *   downgrade). A grant draws its fencing token from the fencing sequence while the name's row is locked, so it is
 *   greater than every token issued before for the name, shared with locks. A waiter's ticket is drawn from the same
 *   sequence when it joins the queue.
 *
 * Kinds
 *   A name with live claims refuses claims of the other kind; one with none is refused while a lock row or a latch of
 *   the name is live (one statement asks both), and takes the claim's kind otherwise.
 *
 * Release, renewal, abandon
 *   Owner-checked statements without the name's row lock: a release DELETEs the owner's live hold of that mode and
 *   token; renewal extends every hold of a batch with one UPDATE ... WHERE (name_hash, owner, fencing_token) IN (...)
 *   and looks for the missing ones only when fewer rows changed; abandon deletes the owner's waiter and hold of the
 *   mode. Each that changed something sends NOTIFY on PostgreSQL (payload: the name's hash) when it commits.
 */
/** Read-write locks and semaphores of mode TABLE; the part of {@link JdbcTableLockStore} that keeps them. */
final class JdbcTableClaims {
    private final Db db;
    private final String names;
    private final String claims;
    private final @Nullable String channel;
    private final ClaimRenewal renewal;

    /** A claim row as an acquirer reads it; {@code remaining} is the time to expires_at, in milliseconds. */
    private record Row(String owner, Mode mode, int permits, boolean granted, long remaining, long token) {}

    /** The name's row: its kind code and semaphore size (0 when never a semaphore). */
    private record Header(char kind, int size) {}

    /** Another transaction inserted the name's row first; nothing was written. */
    static final class LostInsertRace extends RuntimeException {
        private static final long serialVersionUID = 1L;

        LostInsertRace(Throwable cause) {
            super("lost an insert race", cause, false, false);
        }
    }

    JdbcTableClaims(Db db, @Nullable String channel) {
        this.db = db;
        this.names = db.table + "_name";
        this.claims = db.table + "_claim";
        this.channel = channel;
        this.renewal = new ClaimRenewal(db, claims);
    }

    // ---------------------------------------------------------------- acquire

    Attempt tryAcquire(Claim claim, boolean queued) {
        String hash = Names.hash(claim.key().name());
        long leaseMillis = Db.leaseMillis(claim.lease().length());
        for (int race = 0; ; race++) {
            try {
                return db.transaction(
                        "acquire of " + claim.kind().label() + " '"
                                + JdbcTableLockStore.abbreviate(claim.key().name()) + "'",
                        c -> acquireOnce(c, claim, hash, leaseMillis, queued));
            } catch (LostInsertRace e) {
                if (race >= 3) {
                    return Attempt.busy(Duration.ZERO); // each lost race was another acquirer of the name
                }
            }
        }
    }

    private Attempt acquireOnce(Connection c, Claim claim, String hash, long leaseMillis, boolean queued)
            throws SQLException {
        String owner = claim.owner().value();
        Header header = lockHeader(c, hash);
        List<Row> holds = new ArrayList<>();
        List<Row> waiters = new ArrayList<>(); // in ticket order
        boolean dead = false;
        boolean deadWaiter = false;
        @Nullable Row mineHeld = null;
        @Nullable Row mineWaiting = null;
        for (Row r : rows(c, hash)) {
            if (r.remaining <= 0) {
                dead = true;
                deadWaiter |= !r.granted;
                continue;
            }
            (r.granted ? holds : waiters).add(r);
            if (r.owner.equals(owner) && r.mode == claim.mode()) {
                if (r.granted) {
                    mineHeld = r;
                } else {
                    mineWaiting = r;
                }
            }
        }
        if (dead) {
            update(c, "DELETE FROM " + claims + " WHERE name_hash = ? AND expires_at <= " + db.now, hash);
        }
        checkKind(c, claim, hash, header, !holds.isEmpty() || !waiters.isEmpty());
        if (deadWaiter && !waiters.isEmpty()) {
            notify(c, hash); // the queue moved: those behind an evicted waiter may pass now
        }
        if (mineHeld != null) {
            // a retry after a commit whose answer was lost: the grant is ours already
            extend(c, hash, owner, claim.mode(), leaseMillis);
            return Attempt.acquired(mineHeld.token);
        }
        if (grantable(claim, holds, waiters, mineWaiting)) {
            long token = db.dialect.nextToken(c, db.table);
            if (mineWaiting != null) {
                try (PreparedStatement ps = c.prepareStatement("UPDATE " + claims + " SET granted = 1, expires_at = "
                        + db.now + " + ?, fencing_token = ? WHERE name_hash = ? AND owner = ? AND mode = ?")) {
                    ps.setLong(1, leaseMillis + 1);
                    ps.setLong(2, token);
                    bindOwner(ps, 3, hash, owner, claim.mode());
                    ps.executeUpdate();
                }
                if (waiters.size() > 1) {
                    notify(c, hash);
                }
            } else {
                insert(c, hash, owner, claim, 1, token, leaseMillis + 1, token);
            }
            return Attempt.acquired(token);
        }
        long refresh = FairQueue.refreshWithin().toMillis();
        long retry = Long.MAX_VALUE;
        for (Row h : holds) {
            retry = Math.min(retry, h.remaining);
        }
        if (queued) {
            long timeout = FairQueue.WAITER_TIMEOUT.toMillis();
            if (mineWaiting != null) {
                extend(c, hash, owner, claim.mode(), timeout);
            } else {
                long ticket = db.dialect.nextToken(c, db.table);
                insert(c, hash, owner, claim, 0, ticket, timeout, 0);
            }
            retry = Math.min(retry, refresh);
        } else if (!waiters.isEmpty()) {
            retry = Math.min(retry, refresh);
        }
        return Attempt.busy(Duration.ofMillis(Math.max(1, Math.min(retry, refresh * 3))));
    }

    /** The name's row, locked for this transaction; inserted (with the claim's kind) when absent. */
    private @Nullable Header lockHeader(Connection c, String hash) throws SQLException {
        try (PreparedStatement ps =
                c.prepareStatement("SELECT kind, size FROM " + names + " WHERE name_hash = ? FOR UPDATE")) {
            ps.setString(1, hash);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? new Header(rs.getString(1).charAt(0), rs.getInt(2)) : null;
            }
        }
    }

    private List<Row> rows(Connection c, String hash) throws SQLException {
        List<Row> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT owner, mode, permits, granted, expires_at - " + db.now
                + ", fencing_token FROM " + claims + " WHERE name_hash = ? ORDER BY ticket")) {
            ps.setString(1, hash);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new Row(
                            rs.getString(1),
                            ClaimKinds.mode(rs.getString(2)),
                            rs.getInt(3),
                            rs.getInt(4) == 1,
                            rs.getLong(5),
                            rs.getLong(6)));
                }
            }
        }
        return out;
    }

    /** Refuses another kind or size; records the name's kind and a semaphore's size where they are new. */
    private void checkKind(Connection c, Claim claim, String hash, @Nullable Header header, boolean live)
            throws SQLException {
        char kind = ClaimKinds.kindCode(claim.kind());
        String name = claim.key().name();
        if (header != null && header.kind != kind && live) {
            throw ClaimKinds.inUse(
                    name, ClaimKinds.label(header.kind), claim.kind().label());
        }
        if (!live) {
            String other = ClaimKinds.inUseAs(db, c, hash, false);
            if (other != null) {
                throw ClaimKinds.inUse(name, other, claim.kind().label());
            }
        }
        boolean semaphore = claim.kind() == Claim.Kind.SEMAPHORE;
        if (header == null) {
            try (PreparedStatement ps =
                    c.prepareStatement("INSERT INTO " + names + " (name_hash, name, kind, size) VALUES (?, ?, ?, ?)")) {
                ps.setString(1, hash);
                ps.setString(2, Names.display(name));
                ps.setString(3, String.valueOf(kind));
                ps.setInt(4, semaphore ? claim.size() : 0);
                ps.executeUpdate();
            } catch (SQLException e) {
                if (Dialect.isDuplicateKey(e)) {
                    throw new LostInsertRace(e);
                }
                throw e;
            }
            return;
        }
        if (semaphore && header.size != 0 && header.size != claim.size()) {
            throw ClaimKinds.sizeMismatch(name, header.size, claim.size());
        }
        int size = semaphore && header.size == 0 ? claim.size() : header.size;
        if (header.kind != kind || size != header.size) {
            try (PreparedStatement ps =
                    c.prepareStatement("UPDATE " + names + " SET kind = ?, size = ? WHERE name_hash = ?")) {
                ps.setString(1, String.valueOf(kind));
                ps.setInt(2, size);
                ps.setString(3, hash);
                ps.executeUpdate();
            }
        }
    }

    /** As the reference store decides: waiters ahead go first; a downgrade never waits for itself. */
    private static boolean grantable(Claim claim, List<Row> holds, List<Row> waiters, @Nullable Row mine) {
        if (claim.mode() == Mode.SHARED) {
            for (Row h : holds) {
                if (h.mode == Mode.EXCLUSIVE && h.owner.equals(claim.owner().value())) {
                    return true;
                }
            }
        }
        List<Row> granted = new ArrayList<>(holds);
        for (Row w : waiters) {
            if (w == mine) {
                break;
            }
            if (!compatible(granted, w.mode, w.permits, claim.size())) {
                return false;
            }
            granted.add(w);
        }
        return compatible(granted, claim.mode(), claim.permits(), claim.size());
    }

    private static boolean compatible(List<Row> granted, Mode mode, int permits, int size) {
        if (mode == Mode.EXCLUSIVE) {
            return granted.isEmpty();
        }
        long used = permits;
        for (Row h : granted) {
            if (h.mode == Mode.EXCLUSIVE) {
                return false;
            }
            used += h.permits;
        }
        return used <= size;
    }

    private void insert(
            Connection c, String hash, String owner, Claim claim, int granted, long ticket, long millis, long token)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + claims
                + " (name_hash, owner, mode, permits, granted, ticket, expires_at, fencing_token) VALUES (?, ?, ?, ?, ?,"
                + " ?, " + db.now + " + ?, ?)")) {
            ps.setString(1, hash);
            ps.setString(2, owner);
            ps.setString(3, ClaimKinds.modeCode(claim.mode()));
            ps.setInt(4, claim.permits());
            ps.setInt(5, granted);
            ps.setLong(6, ticket);
            ps.setLong(7, millis);
            ps.setLong(8, token);
            ps.executeUpdate();
        }
    }

    private void extend(Connection c, String hash, String owner, Mode mode, long millis) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + claims + " SET expires_at = " + db.now
                + " + ? WHERE name_hash = ? AND owner = ? AND mode = ?")) {
            ps.setLong(1, millis);
            bindOwner(ps, 2, hash, owner, mode);
            ps.executeUpdate();
        }
    }

    // ---------------------------------------------------------------- release, renew, abandon

    boolean release(HeldClaim hold) {
        String hash = Names.hash(hold.key().name());
        return db.autocommit(
                "release of '" + JdbcTableLockStore.abbreviate(hold.key().name()) + "'", c -> {
                    String where =
                            " WHERE name_hash = ? AND owner = ? AND mode = ? AND granted = 1 AND fencing_token = ?";
                    int live;
                    try (PreparedStatement ps =
                            c.prepareStatement("DELETE FROM " + claims + where + " AND expires_at > " + db.now)) {
                        bindHold(ps, hash, hold);
                        live = ps.executeUpdate();
                    }
                    if (live == 0) {
                        try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + claims + where)) {
                            bindHold(ps, hash, hold); // our own expired row, if any: garbage
                            ps.executeUpdate();
                        }
                        return false;
                    }
                    notify(c, hash);
                    return true;
                });
    }

    private static void bindHold(PreparedStatement ps, String hash, HeldClaim hold) throws SQLException {
        bindOwner(ps, 1, hash, hold.owner().value(), hold.mode());
        ps.setLong(4, hold.fencingToken());
    }

    void abandon(Claim claim) {
        String hash = Names.hash(claim.key().name());
        db.autocommit("abandon of '" + JdbcTableLockStore.abbreviate(claim.key().name()) + "'", c -> {
            try (PreparedStatement ps =
                    c.prepareStatement("DELETE FROM " + claims + " WHERE name_hash = ? AND owner = ? AND mode = ?")) {
                bindOwner(ps, 1, hash, claim.owner().value(), claim.mode());
                if (ps.executeUpdate() > 0) {
                    notify(c, hash);
                }
            }
            return true;
        });
    }

    Set<HeldClaim> renew(List<HeldClaim> holds, Duration lease) {
        return renewal.renew(holds, lease);
    }

    // ---------------------------------------------------------------- available, admin

    int available(LockKey key, Claim.Kind kind, int size) {
        String hash = Names.hash(key.name());
        return db.autocommit("available permits of '" + JdbcTableLockStore.abbreviate(key.name()) + "'", c -> {
            Header header = null;
            try (PreparedStatement ps =
                    c.prepareStatement("SELECT kind, size FROM " + names + " WHERE name_hash = ?")) {
                ps.setString(1, hash);
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        header = new Header(rs.getString(1).charAt(0), rs.getInt(2));
                    }
                }
            }
            List<Row> holds = new ArrayList<>();
            boolean live = false;
            for (Row r : rows(c, hash)) {
                if (r.remaining > 0) {
                    live = true;
                    if (r.granted) {
                        holds.add(r);
                    }
                }
            }
            if (header != null && live && header.kind != ClaimKinds.kindCode(kind)) {
                throw ClaimKinds.inUse(key.name(), ClaimKinds.label(header.kind), kind.label());
            }
            if (kind == Claim.Kind.SEMAPHORE && header != null && header.size != 0 && header.size != size) {
                throw ClaimKinds.sizeMismatch(key.name(), header.size, size);
            }
            if (!live) {
                String other = ClaimKinds.inUseAs(db, c, hash, false);
                if (other != null) {
                    throw ClaimKinds.inUse(key.name(), other, kind.label());
                }
                return size;
            }
            long used = 0;
            for (Row h : holds) {
                if (h.mode == Mode.EXCLUSIVE) {
                    return 0;
                }
                used += h.permits;
            }
            return (int) Math.max(0, size - used);
        });
    }

    Optional<LockInfo> inspect(LockKey key) {
        String hash = Names.hash(key.name());
        return db.autocommit("inspect of '" + JdbcTableLockStore.abbreviate(key.name()) + "'", c -> {
            String kind = null;
            try (PreparedStatement ps = c.prepareStatement("SELECT kind FROM " + names + " WHERE name_hash = ?")) {
                ps.setString(1, hash);
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        kind = rs.getString(1);
                    }
                }
            }
            if (kind == null) {
                return Optional.<LockInfo>empty();
            }
            List<LockInfo.Holder> holders = new ArrayList<>();
            int waiters = 0;
            for (Row r : rows(c, hash)) {
                if (r.remaining > 0 && r.granted) {
                    holders.add(new LockInfo.Holder(
                            r.owner, r.mode == Mode.EXCLUSIVE, r.permits, Duration.ofMillis(r.remaining), r.token));
                } else if (r.remaining > 0) {
                    waiters++;
                }
            }
            if (holders.isEmpty() && waiters == 0) {
                return Optional.<LockInfo>empty();
            }
            LockInfo.Kind k = kind.charAt(0) == 'S' ? LockInfo.Kind.SEMAPHORE : LockInfo.Kind.READ_WRITE_LOCK;
            return Optional.of(LockInfo.ofHolders(key.name(), k, holders, waiters));
        });
    }

    /** The names with live claims that start with {@code prefix}, in name order. */
    List<String> names(String prefix, int limit) {
        return db.autocommit("list", c -> {
            List<String> out = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT n.name FROM " + names + " n WHERE n.name LIKE ?"
                    + " ESCAPE '!' AND EXISTS (SELECT 1 FROM " + claims + " c WHERE c.name_hash = n.name_hash AND"
                    + " c.expires_at > " + db.now + ") ORDER BY n.name LIMIT " + Math.max(1, limit))) {
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

    /** Removes the holds of {@code owner}, or every hold when it is null; their owners learn it at renewal. */
    Optional<LockInfo> forceRelease(LockKey key, @Nullable OwnerId owner) {
        Optional<LockInfo> before = inspect(key);
        if (before.isEmpty()) {
            return before;
        }
        String hash = Names.hash(key.name());
        int removed = db.autocommit("force release of '" + JdbcTableLockStore.abbreviate(key.name()) + "'", c -> {
            String sql = "DELETE FROM " + claims + " WHERE name_hash = ? AND granted = 1"
                    + (owner == null ? "" : " AND owner = ?");
            int n;
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setString(1, hash);
                if (owner != null) {
                    ps.setString(2, owner.value());
                }
                n = ps.executeUpdate();
            }
            if (n > 0) {
                notify(c, hash);
            }
            return n;
        });
        return removed > 0 ? before : Optional.empty();
    }

    /** Deletes long-dead claim rows, and the rows of read-write lock names that have no claims. */
    void cleanup(Connection c) throws SQLException {
        try (PreparedStatement ps =
                c.prepareStatement("DELETE FROM " + claims + " WHERE expires_at < " + db.now + " - 1000")) {
            ps.executeUpdate();
        }
        // an acquirer that finds its name's row gone inserts it again: the row only serializes, the claims decide
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + names + " WHERE kind = 'R' AND size = 0 AND"
                + " NOT EXISTS (SELECT 1 FROM " + claims + " c WHERE c.name_hash = " + names + ".name_hash)")) {
            ps.executeUpdate();
        }
    }

    // ---------------------------------------------------------------- helpers

    private static void bindOwner(PreparedStatement ps, int first, String hash, String owner, Mode mode)
            throws SQLException {
        ps.setString(first, hash);
        ps.setString(first + 1, owner);
        ps.setString(first + 2, ClaimKinds.modeCode(mode));
    }

    private static void update(Connection c, String sql, String hash) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, hash);
            ps.executeUpdate();
        }
    }

    private void notify(Connection c, String payload) throws SQLException {
        String ch = channel;
        if (ch != null) {
            PgListener.send(c, ch, payload);
        }
    }
}
