package io.distlock.jdbc;

import io.distlock.LockInfo;
import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.CounterStore;
import io.distlock.spi.HandOff;
import io.distlock.spi.HandsOff;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import io.distlock.spi.Subscription;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Mode TABLE: a hold is a row of <table>_lock (name_hash, name, owner, expires_at, fencing_token). expires_at is epoch
 * milliseconds of the DATABASE clock, written and compared only in SQL, so clients whose clocks disagree never judge
 * expiry differently. A row whose expires_at has passed is free: the next acquirer takes it over, and the renew tick
 * deletes old ones (no cron). A lock that nobody holds has no row.
 *
 * Acquire is one short READ COMMITTED transaction:
 *   SELECT ... FOR UPDATE the name's row (serializes every acquirer of the name on that row);
 *   busy if a live row of another owner exists; otherwise
 *   UPDATE it (take over an expired row) or INSERT it (a concurrent INSERT of the same name fails on the primary key
 *   and the transaction is retried, finding the winner's row);
 *   only then draw the fencing token from the sequence and write it.
 * The token is drawn while this transaction holds the row (locked or freshly inserted), and every earlier grant for
 * the name happened before that row lock was free, so the token is greater than every token issued for the name
 * before, also after rows were deleted (the sequence never goes back). Expired rows are taken over with a new token.
 *
 * Fair waiters (queue=true) go through <table>_queue in the same transaction: dead entries are evicted, and only the
 * first live entry may take a free lock; otherwise the waiter's entry is inserted or refreshed.
 *
 * Renewal extends every hold of the client in one UPDATE ... WHERE (name_hash, owner) IN (...) AND expires_at > now;
 * only when fewer rows than holds were updated does a SELECT find which ones are gone. Release and abandon are
 * owner-checked DELETEs. A release retried after an attempt that failed once its work had run (its commit sent, the
 * answer lost) and that finds no row of the owner cannot tell a hold it released from one that expired and went: it
 * fails with DistributedLockException instead of reporting the hold lost. Hand-off is one UPDATE guarded by the old owner and a live lease: for it to succeed, nobody
 * can have been granted the name since the token was drawn.
 *
 * On PostgreSQL the statement that deletes a hold also sends NOTIFY <table>_release with the name hash as payload;
 * waiters listen through PgListener. Elsewhere waiters poll with back-off bounded by the holder's remaining lease.
 *
 * Read-write locks and semaphores are kept by JdbcTableClaims and count-down latches by JdbcTableCounters, in tables
 * of their own; this class hands each step to the part that keeps the claim's kind.
 */
final class JdbcTableLockStore implements JdbcStore, HandsOff, CounterStore {
    private static final Logger log = LoggerFactory.getLogger(JdbcTableLockStore.class);
    private static final long CLEANUP_EVERY_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final int RENEW_BATCH = 500;

    private final Db db;
    private final String t;
    private final FairQueue queue;
    private final @Nullable PgListener listener;
    private final String channel;
    private final JdbcTableClaims claims;
    private final JdbcTableCounters counters;
    /** A client's first clean-up comes one interval after it starts, never on its first acquire. */
    private final AtomicLong lastCleanup = new AtomicLong(System.nanoTime());

    JdbcTableLockStore(Db db, String clientId) {
        this.db = db;
        this.t = db.table + "_lock";
        this.queue = new FairQueue(db);
        this.channel = db.table.toLowerCase(java.util.Locale.ROOT) + "_release";
        this.listener = db.dialect.notifies() ? new PgListener(db.dataSource, channel, clientId) : null;
        this.claims = new JdbcTableClaims(db, listener == null ? null : channel);
        this.counters = new JdbcTableCounters(db, listener, listener == null ? null : channel);
    }

    @Override
    public Set<Claim.Kind> kinds() {
        return Set.of(Claim.Kind.LOCK, Claim.Kind.READ_WRITE_LOCK, Claim.Kind.SEMAPHORE);
    }

    private enum RowState {
        ABSENT,
        FREE,
        HELD
    }

    @Override
    public Attempt tryAcquire(Claim claim, boolean queued) {
        LockKey key = claim.key();
        OwnerId owner = claim.owner();
        Duration lease = claim.lease().length();
        maybeCleanup();
        if (claim.kind() != Claim.Kind.LOCK) {
            return claims.tryAcquire(claim, queued);
        }
        String hash = Names.hash(key.name());
        long leaseMillis = Db.leaseMillis(lease);
        for (int race = 0; ; race++) {
            try {
                return acquireOnce(key, owner, hash, leaseMillis, queued);
            } catch (JdbcTableClaims.LostInsertRace e) {
                if (race >= 3) {
                    // each lost race was another owner's insert winning: the lock was held, by someone else
                    return Attempt.busy(Duration.ZERO);
                }
            }
        }
    }

    private Attempt acquireOnce(LockKey key, OwnerId owner, String hash, long leaseMillis, boolean queued) {
        int[] runs = {0};
        return db.transaction("acquire of '" + abbreviate(key.name()) + "'", c -> {
            // a retry may follow an attempt whose commit went through unseen: then our own row is our grant
            boolean retry = runs[0]++ > 0;
            long remaining = 0;
            RowState state = RowState.ABSENT;
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT owner, expires_at - " + db.now + " FROM " + t + " WHERE name_hash = ? FOR UPDATE")) {
                ps.setString(1, hash);
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        remaining = rs.getLong(2);
                        state = remaining > 0 && !(retry && owner.value().equals(rs.getString(1)))
                                ? RowState.HELD
                                : RowState.FREE;
                    }
                }
            }
            if (queued) {
                boolean first = state != RowState.HELD && queue.mayGrant(c, hash, owner.value());
                if (!first) {
                    queue.enqueue(c, hash, owner.value());
                    Duration refresh = FairQueue.refreshWithin();
                    Duration left = Duration.ofMillis(Math.max(1, remaining));
                    return Attempt.busy(state == RowState.HELD && left.compareTo(refresh) < 0 ? left : refresh);
                }
            } else if (state == RowState.HELD) {
                return Attempt.busy(Duration.ofMillis(remaining));
            }
            if (state == RowState.FREE) {
                try (PreparedStatement ps = c.prepareStatement("UPDATE " + t + " SET owner = ?, expires_at = " + db.now
                        + " + ?, fencing_token = 0 WHERE name_hash = ?")) {
                    ps.setString(1, owner.value());
                    ps.setLong(2, leaseMillis + 1);
                    ps.setString(3, hash);
                    ps.executeUpdate();
                }
            } else {
                // a concurrent insert of the same name fails here on the primary key; the retry finds its row
                try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + t
                        + " (name_hash, name, owner, expires_at, fencing_token) VALUES (?, ?, ?, " + db.now
                        + " + ?, 0)")) {
                    ps.setString(1, hash);
                    ps.setString(2, Names.display(key.name()));
                    ps.setString(3, owner.value());
                    ps.setLong(4, leaseMillis + 1);
                    ps.executeUpdate();
                } catch (SQLException e) {
                    if (Dialect.isDuplicateKey(e)) {
                        throw new JdbcTableClaims.LostInsertRace(e);
                    }
                    throw e;
                }
            }
            long token = db.dialect.nextToken(c, db.table); // drawn while we hold the row: see the overview
            try (PreparedStatement ps =
                    c.prepareStatement("UPDATE " + t + " SET fencing_token = ? WHERE name_hash = ?")) {
                ps.setLong(1, token);
                ps.setString(2, hash);
                ps.executeUpdate();
            }
            if (queued) {
                queue.remove(c, hash, owner.value());
            }
            return Attempt.acquired(token);
        });
    }

    @Override
    public void abandon(Claim claim) {
        if (claim.kind() != Claim.Kind.LOCK) {
            claims.abandon(claim);
            return;
        }
        LockKey key = claim.key();
        OwnerId owner = claim.owner();
        String hash = Names.hash(key.name());
        db.transaction("abandon of '" + abbreviate(key.name()) + "'", c -> {
            boolean changed = queue.remove(c, hash, owner.value());
            try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + t + " WHERE name_hash = ? AND owner = ?")) {
                ps.setString(1, hash);
                ps.setString(2, owner.value());
                changed |= ps.executeUpdate() > 0;
            }
            if (changed) {
                notify(c, hash);
            }
            return true;
        });
    }

    @Override
    public boolean release(HeldClaim hold) {
        if (hold.kind() != Claim.Kind.LOCK) {
            return claims.release(hold);
        }
        LockKey key = hold.key();
        OwnerId owner = hold.owner();
        String hash = Names.hash(key.name());
        boolean[] ranBefore = {false};
        return db.transaction("release of '" + abbreviate(key.name()) + "'", c -> {
            // an attempt that ran before and failed may have committed its delete: only its answer was lost
            boolean retry = ranBefore[0];
            ranBefore[0] = true;
            int live;
            try (PreparedStatement ps = c.prepareStatement(
                    "DELETE FROM " + t + " WHERE name_hash = ? AND owner = ? AND expires_at > " + db.now)) {
                ps.setString(1, hash);
                ps.setString(2, owner.value());
                live = ps.executeUpdate();
            }
            if (live == 0) {
                // not ours, or ours but expired: clear our own garbage, report the hold as gone
                try (PreparedStatement ps =
                        c.prepareStatement("DELETE FROM " + t + " WHERE name_hash = ? AND owner = ?")) {
                    ps.setString(1, hash);
                    ps.setString(2, owner.value());
                    if (ps.executeUpdate() == 0 && retry) {
                        // no row of ours at all: an earlier attempt may have deleted it (released) or it expired and
                        // went (lost); "lost" would claim the hold ended before the release, which is not known
                        // not transient: Db fails the release with it (a DistributedLockException), no retry
                        throw new SQLException("an attempt whose answer was lost may have released the hold, which"
                                + " is gone; whether it was released or had been lost is unknown");
                    }
                }
                return false;
            }
            notify(c, hash);
            return true;
        });
    }

    @Override
    public Set<HeldClaim> renew(Collection<HeldClaim> holds, Duration lease) {
        maybeCleanup();
        List<HeldClaim> all = new ArrayList<>();
        List<HeldClaim> others = new ArrayList<>();
        for (HeldClaim h : holds) {
            (h.kind() == Claim.Kind.LOCK ? all : others).add(h);
        }
        Set<HeldClaim> gone = others.isEmpty() ? new HashSet<>() : claims.renew(others, lease);
        long leaseMillis = Db.leaseMillis(lease);
        for (int from = 0; from < all.size(); from += RENEW_BATCH) {
            List<HeldClaim> batch = all.subList(from, Math.min(all.size(), from + RENEW_BATCH));
            gone.addAll(renewBatch(batch, leaseMillis));
        }
        return gone;
    }

    private Set<HeldClaim> renewBatch(List<HeldClaim> batch, long leaseMillis) {
        StringBuilder pairs = new StringBuilder();
        for (int i = 0; i < batch.size(); i++) {
            pairs.append(i == 0 ? "(?, ?)" : ", (?, ?)");
        }
        String where = " WHERE expires_at > " + db.now + " AND (name_hash, owner) IN (" + pairs + ")";
        return db.autocommit("renewal of " + batch.size() + " locks", c -> {
            int updated;
            try (PreparedStatement ps =
                    c.prepareStatement("UPDATE " + t + " SET expires_at = " + db.now + " + ?" + where)) {
                ps.setLong(1, leaseMillis + 1);
                bindPairs(ps, 2, batch);
                updated = ps.executeUpdate();
            }
            if (updated == batch.size()) {
                return Set.of();
            }
            Map<String, HeldClaim> byKey = new HashMap<>();
            for (HeldClaim h : batch) {
                byKey.put(Names.hash(h.key().name()) + '\n' + h.owner().value(), h);
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT name_hash, owner FROM " + t + where)) {
                bindPairs(ps, 1, batch);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        byKey.remove(rs.getString(1) + '\n' + rs.getString(2));
                    }
                }
            }
            return new HashSet<>(byKey.values());
        });
    }

    private static void bindPairs(PreparedStatement ps, int first, List<HeldClaim> batch) throws SQLException {
        int i = first;
        for (HeldClaim h : batch) {
            ps.setString(i++, Names.hash(h.key().name()));
            ps.setString(i++, h.owner().value());
        }
    }

    @Override
    public HandOff handOff(Claim claim, OwnerId from) {
        LockKey key = claim.key();
        OwnerId to = claim.owner();
        Duration lease = claim.lease().length();
        String hash = Names.hash(key.name());
        long leaseMillis = Db.leaseMillis(lease);
        long token = db.autocommit("hand-off of '" + abbreviate(key.name()) + "'", c -> {
            long drawn = db.dialect.nextToken(c, db.table);
            // guarded by the old owner and a live lease: no grant of this name can have happened since the draw
            try (PreparedStatement ps = c.prepareStatement("UPDATE " + t + " SET owner = ?, expires_at = " + db.now
                    + " + ?, fencing_token = ? WHERE name_hash = ? AND owner = ? AND expires_at > " + db.now)) {
                ps.setString(1, to.value());
                ps.setLong(2, leaseMillis + 1);
                ps.setLong(3, drawn);
                ps.setString(4, hash);
                ps.setString(5, from.value());
                return ps.executeUpdate() == 1 ? drawn : -1L;
            }
        });
        return token < 0 ? HandOff.notHeld() : HandOff.granted(token);
    }

    @Override
    public Subscription subscribe(LockKey key, Runnable wakeUp) {
        PgListener l = listener;
        return l == null ? Subscription.none() : l.subscribe(Names.hash(key.name()), wakeUp);
    }

    @Override
    public Optional<LockInfo> inspect(LockKey key) {
        Optional<LockInfo> lock = inspectLock(key);
        if (lock.isPresent()) {
            return lock;
        }
        Optional<LockInfo> claim = claims.inspect(key);
        return claim.isPresent() ? claim : counters.inspect(key);
    }

    @Override
    public int available(LockKey key, Claim.Kind kind, int size) {
        return kind == Claim.Kind.LOCK ? (inspectLock(key).isPresent() ? 0 : 1) : claims.available(key, kind, size);
    }

    private Optional<LockInfo> inspectLock(LockKey key) {
        String hash = Names.hash(key.name());
        return db.autocommit("inspect of '" + abbreviate(key.name()) + "'", c -> {
            try (PreparedStatement ps = c.prepareStatement(infoQuery() + " AND l.name_hash = ?")) {
                ps.setString(1, hash);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? Optional.of(info(rs, key.name())) : Optional.<LockInfo>empty();
                }
            }
        });
    }

    @Override
    public List<LockInfo> list(String prefix, int limit) {
        java.util.TreeMap<String, LockInfo> all = new java.util.TreeMap<>();
        for (LockInfo i : listLocks(prefix, limit)) {
            all.put(i.name(), i);
        }
        List<String> more = new ArrayList<>(claims.names(prefix, limit));
        more.addAll(counters.names(prefix, limit));
        for (String name : more) {
            if (!all.containsKey(name)) {
                inspect(new LockKey(name)).ifPresent(i -> all.put(name, i));
            }
        }
        List<LockInfo> out = new ArrayList<>(all.values());
        return out.size() > limit ? new ArrayList<>(out.subList(0, Math.max(0, limit))) : out;
    }

    private List<LockInfo> listLocks(String prefix, int limit) {
        return db.autocommit("list", c -> {
            List<LockInfo> out = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement(
                    infoQuery() + " AND l.name LIKE ? ESCAPE '!' ORDER BY l.name LIMIT " + Math.max(1, limit))) {
                ps.setString(1, Names.likePrefix(prefix));
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.add(info(rs, rs.getString(5)));
                    }
                }
            }
            return out;
        });
    }

    private String infoQuery() {
        return "SELECT l.owner, l.expires_at - " + db.now + ", l.fencing_token, (SELECT COUNT(*) FROM " + db.table
                + "_queue q WHERE q.name_hash = l.name_hash AND q.deadline > " + db.now + "), l.name FROM " + t
                + " l WHERE l.expires_at > " + db.now;
    }

    private static LockInfo info(ResultSet rs, String name) throws SQLException {
        return new LockInfo(
                name, rs.getString(1), Duration.ofMillis(Math.max(0, rs.getLong(2))), rs.getLong(3), rs.getInt(4));
    }

    @Override
    public Optional<LockInfo> forceRelease(LockKey key) {
        String hash = Names.hash(key.name());
        for (int attempt = 0; attempt < Db.ATTEMPTS; attempt++) {
            Optional<LockInfo> info = inspectLock(key);
            if (info.isEmpty()) {
                return claims.forceRelease(key, null);
            }
            boolean deleted = db.autocommit("force release of '" + abbreviate(key.name()) + "'", c -> {
                try (PreparedStatement ps = c.prepareStatement(
                        "DELETE FROM " + t + " WHERE name_hash = ? AND owner = ? AND fencing_token = ?")) {
                    ps.setString(1, hash);
                    ps.setString(2, info.get().owner());
                    ps.setLong(3, info.get().fencingToken());
                    if (ps.executeUpdate() == 0) {
                        return false; // it changed hands meanwhile: look again
                    }
                }
                notify(c, hash);
                return true;
            });
            if (deleted) {
                return info;
            }
        }
        throw new io.distlock.DistributedLockException(
                "force release of '" + abbreviate(key.name()) + "' kept racing with acquirers", new SQLException());
    }

    @Override
    public Optional<LockInfo> forceRelease(LockKey key, OwnerId owner) {
        Optional<LockInfo> info = inspectLock(key);
        if (info.isPresent()) {
            return release(HeldClaim.lock(key, owner, 0)) ? info : Optional.empty();
        }
        return claims.forceRelease(key, owner);
    }

    @Override
    public boolean trySetCount(LockKey key, long count, Duration expiry) {
        return counters.trySetCount(key, count, expiry);
    }

    @Override
    public long countDown(LockKey key, String callId, Duration expiry) {
        return counters.countDown(key, callId, expiry);
    }

    @Override
    public long count(LockKey key) {
        return counters.count(key);
    }

    @Override
    public Subscription watchZero(LockKey key, Runnable wakeUp) {
        return counters.watchZero(key, wakeUp);
    }

    @Override
    public void close() {
        PgListener l = listener;
        if (l != null) {
            l.close();
        }
    }

    @Override
    public String toString() {
        return "JdbcTableLockStore[" + db.dialect.id() + ", " + t + "]";
    }

    /** Sends NOTIFY on PostgreSQL; delivered when the surrounding transaction commits. */
    private void notify(Connection c, String hash) throws SQLException {
        if (listener != null) {
            PgListener.send(c, channel, hash);
        }
    }

    /** Deletes long-expired rows and dead queue entries, at most once per interval per client. */
    private void maybeCleanup() {
        long last = lastCleanup.get();
        long now = System.nanoTime();
        if (now - last < CLEANUP_EVERY_NANOS || !lastCleanup.compareAndSet(last, now)) {
            return;
        }
        try {
            db.autocommit("cleanup", c -> {
                try (PreparedStatement ps =
                        c.prepareStatement("DELETE FROM " + t + " WHERE expires_at < " + db.now + " - 1000")) {
                    ps.executeUpdate();
                }
                try (PreparedStatement ps = c.prepareStatement(
                        "DELETE FROM " + db.table + "_queue WHERE deadline < " + db.now + " - 1000")) {
                    ps.executeUpdate();
                }
                claims.cleanup(c);
                return true;
            });
            counters.cleanup();
        } catch (RuntimeException e) {
            log.debug("distlock: cleanup of expired rows failed; the next one retries", e);
        }
    }

    static String abbreviate(String name) {
        return name.length() <= 100 ? name : name.substring(0, 100) + "…";
    }
}
