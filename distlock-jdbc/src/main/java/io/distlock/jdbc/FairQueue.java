package io.distlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The fair-lock queue table, shared by every mode: one row per waiting owner with a ticket from the fencing sequence
 * (so tickets order requests across clients) and a deadline on database time. A waiter refreshes its deadline with
 * every attempt; an entry past its deadline belongs to a waiter that died and is evicted by the next attempt on that
 * name when it reaches the head. Only the entry with the lowest live ticket may be granted.
 */
final class FairQueue {
    /** How long a waiter's entry lives without a new attempt, as in the reference store. */
    static final Duration WAITER_TIMEOUT = Duration.ofSeconds(5);

    private final Db db;
    private final String evict;
    private final String head;
    private final String all;
    private final String refresh;
    private final String insert;
    private final String remove;
    private final @Nullable String insertWithSequence;
    private final String guarded;

    FairQueue(Db db) {
        this.db = db;
        String q = db.table + "_queue";
        this.evict = "DELETE FROM " + q + " WHERE name_hash = ? AND owner = ? AND deadline <= " + db.now;
        this.head = "SELECT owner, CASE WHEN deadline <= " + db.now + " THEN 1 ELSE 0 END FROM " + q
                + " WHERE name_hash = ? ORDER BY ticket LIMIT 1";
        this.all = "SELECT owner, CASE WHEN deadline <= " + db.now + " THEN 1 ELSE 0 END FROM " + q
                + " WHERE name_hash = ? ORDER BY ticket";
        this.refresh = "UPDATE " + q + " SET deadline = " + db.now + " + ? WHERE name_hash = ? AND owner = ?";
        this.insert = "INSERT INTO " + q + " (name_hash, owner, ticket, deadline) VALUES (?, ?, ?, " + db.now + " + ?)";
        this.remove = "DELETE FROM " + q + " WHERE name_hash = ? AND owner = ?";
        this.guarded =
                "SELECT 1 FROM " + q + " WHERE name_hash = ? AND owner LIKE ? AND ticket = 0 AND deadline > " + db.now;
        String next = db.dialect.nextValueExpression(db.table);
        this.insertWithSequence = next == null
                ? null
                : "INSERT INTO " + q + " (name_hash, owner, ticket, deadline) VALUES (?, ?, " + next + ", " + db.now
                        + " + ?)";
    }

    /** Tells whether {@code owner} may be granted: the queue is empty or it is first (dead heads are evicted). */
    boolean mayGrant(Connection c, String hash, String owner) throws SQLException {
        String first = liveHead(c, hash);
        return first == null || first.equals(owner);
    }

    /**
     * Puts {@code owner} in the queue (or refreshes its entry) and tells whether it is first. One transaction, so a
     * waiter's place is fixed by its first round trip.
     */
    boolean joinAndCheck(Connection c, String hash, String owner) throws SQLException {
        enqueue(c, hash, owner);
        return owner.equals(liveHead(c, hash));
    }

    /**
     * The first waiter whose entry is live. A dead first entry (its waiter stopped refreshing) is deleted by its primary
     * key, which locks only that row: range deletes of many waiters at once deadlock on InnoDB.
     */
    private @Nullable String liveHead(Connection c, String hash) throws SQLException {
        for (int i = 0; i < 100; i++) {
            String owner;
            boolean dead;
            try (PreparedStatement ps = c.prepareStatement(head)) {
                ps.setString(1, hash);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        return null;
                    }
                    owner = rs.getString(1);
                    dead = rs.getInt(2) == 1;
                }
            }
            if (!dead) {
                return owner;
            }
            try (PreparedStatement ps = c.prepareStatement(evict)) {
                ps.setString(1, hash);
                ps.setString(2, owner);
                ps.executeUpdate();
            }
        }
        return null;
    }

    /** The live entries of a name in ticket order, and whether dead ones were evicted on the way. */
    record Live(List<String> owners, boolean evicted) {}

    /**
     * Every waiter of the name whose entry is live, in ticket order. Dead entries are deleted one by one by their
     * primary key, as {@link #liveHead} does.
     */
    Live liveEntries(Connection c, String hash) throws SQLException {
        List<String> live = new ArrayList<>();
        List<String> dead = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(all)) {
            ps.setString(1, hash);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    (rs.getInt(2) == 1 ? dead : live).add(rs.getString(1));
                }
            }
        }
        for (String owner : dead) {
            try (PreparedStatement ps = c.prepareStatement(evict)) {
                ps.setString(1, hash);
                ps.setString(2, owner);
                ps.executeUpdate();
            }
        }
        return new Live(live, !dead.isEmpty());
    }

    /** Puts {@code owner} in the queue, or refreshes its deadline if it is there. */
    void enqueue(Connection c, String hash, String owner) throws SQLException {
        long timeout = WAITER_TIMEOUT.toMillis();
        try (PreparedStatement ps = c.prepareStatement(refresh)) {
            ps.setLong(1, timeout);
            ps.setString(2, hash);
            ps.setString(3, owner);
            if (ps.executeUpdate() > 0) {
                return;
            }
        }
        if (insertWithSequence != null) {
            try (PreparedStatement ps = c.prepareStatement(insertWithSequence)) {
                ps.setString(1, hash);
                ps.setString(2, owner);
                ps.setLong(3, timeout);
                ps.executeUpdate();
            }
            return;
        }
        long ticket = db.dialect.nextToken(c, db.table);
        try (PreparedStatement ps = c.prepareStatement(insert)) {
            ps.setString(1, hash);
            ps.setString(2, owner);
            ps.setLong(3, ticket);
            ps.setLong(4, timeout);
            ps.executeUpdate();
        }
    }

    /**
     * Puts {@code owner} ahead of every entry of the name (ticket 0; the sequence starts at 1), with the usual deadline,
     * so that it outlives a client that dies before it removes it by {@link #WAITER_TIMEOUT} at most.
     */
    void enqueueFirst(Connection c, String hash, String owner) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(insert)) {
            ps.setString(1, hash);
            ps.setString(2, owner);
            ps.setLong(3, 0);
            ps.setLong(4, WAITER_TIMEOUT.toMillis());
            ps.executeUpdate();
        }
    }

    /** The owner prefix of {@link #enqueueFirst}'s guard entries. */
    static final String GUARD = "downgrade:";

    /** Whether a live guard entry ({@link #enqueueFirst}) of the name is in the queue. */
    boolean guarded(Connection c, String hash) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(guarded)) {
            ps.setString(1, hash);
            ps.setString(2, GUARD + "%");
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    /** Removes the owner's entry; returns whether there was one. */
    boolean remove(Connection c, String hash, String owner) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(remove)) {
            ps.setString(1, hash);
            ps.setString(2, owner);
            return ps.executeUpdate() > 0;
        }
    }

    /** How soon a queued waiter must come back to keep its place. */
    static Duration refreshWithin() {
        return WAITER_TIMEOUT.dividedBy(3);
    }
}
