package io.distlock.jdbc;

import io.distlock.DistributedLockException;
import io.distlock.LockInfo;
import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.CounterStore;
import io.distlock.spi.HandOff;
import io.distlock.spi.HandsOff;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import io.distlock.spi.SessionHolds;
import io.distlock.spi.Subscription;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Modes ROW_LOCK and ADVISORY: a hold is a database lock owned by a server session, so each hold pins one connection
 * from the DataSource for its whole life (a Session here). The database releases the lock when the session ends:
 * at release, or when the connection, the client process or the server session dies. There is no lease in the
 * database, so the store has SessionHolds and the engine releases fixed-lease holds itself when their
 * lease ends.
 *
 * Pool exhaustion: a hold takes a permit of a per-client semaphore (maxPinnedConnections) before it asks the pool for
 * a connection; with no permit left, the acquire fails at once with a DistributedLockException naming the limit, instead
 * of blocking in the pool while the connections that would be returned are the ones this client pins.
 *
 * Fencing tokens come from the same sequence as in TABLE mode, drawn on the holding session after the lock is taken;
 * every earlier holder's token was drawn while it held the lock, so the new token is greater.
 *
 * Renewal asks the database, in one statement on a pooled connection, which of the client's sessions still hold
 * their lock (pg_locks / IS_USED_LOCK for ADVISORY, pg_stat_activity / PROCESSLIST for ROW_LOCK); a killed session is
 * reported gone. Hand-off keeps the session and the lock and gives them a new owner and a new token. Fair waiters use
 * the shared queue table (FairQueue).
 *
 * Read-write locks and semaphores are not kept in these modes (kinds() is LOCK only; see unsupported() for why);
 * count-down latches need no session and are kept in tables by JdbcTableCounters, as in mode TABLE.
 */
final class JdbcSessionLockStore implements JdbcStore, HandsOff, SessionHolds, CounterStore {
    private static final Logger log = LoggerFactory.getLogger(JdbcSessionLockStore.class);
    /** How soon a waiter re-checks a lock whose holder might have died without a notification. */
    private static final Duration RECHECK = Duration.ofSeconds(1);

    private final Db db;
    private final SessionLock mechanism;
    private final FairQueue queue;
    private final int maxPinned;
    private final Semaphore pins;
    private final @Nullable PgListener listener;
    private final JdbcTableCounters counters;
    private final Map<String, Session> sessions = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /** A held lock: the pinned connection, its server session id and the hold's token. */
    private static final class Session {
        final Connection connection;
        final long sessionId;
        final LockKey key;
        volatile OwnerId owner;
        volatile long token;

        Session(Connection connection, long sessionId, LockKey key, OwnerId owner, long token) {
            this.connection = connection;
            this.sessionId = sessionId;
            this.key = key;
            this.owner = owner;
            this.token = token;
        }
    }

    JdbcSessionLockStore(Db db, SessionLock mechanism, int maxPinned, String clientId) {
        this.db = db;
        this.mechanism = mechanism;
        this.queue = new FairQueue(db);
        this.maxPinned = maxPinned;
        this.pins = new Semaphore(maxPinned);
        String channel = db.table.toLowerCase(java.util.Locale.ROOT) + "_release";
        this.listener = db.dialect.notifies() ? new PgListener(db.dataSource, channel, clientId) : null;
        this.counters = new JdbcTableCounters(db, listener, listener == null ? null : channel);
    }

    /**
     * A read-write lock's or semaphore's holds would each pin a session, and neither mode can carry them on every
     * database: MariaDB's GET_LOCK and a row's FOR UPDATE have no shared mode, and permits would need a session each.
     */
    @Override
    public String unsupported(String primitives) {
        return primitives + " are not available in mode " + mechanism.mode() + " (a hold pins a session, and "
                + mechanism.mode() + " has no shared hold that every database carries); build the client with "
                + "mode(JdbcLockClient.Mode.TABLE), which keeps them in tables";
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

    private static String id(LockKey key, OwnerId owner) {
        return Names.hash(key.name()) + '\n' + owner.value();
    }

    @Override
    public Attempt tryAcquire(Claim claim, boolean queued) {
        LockKey key = claim.key();
        OwnerId owner = claim.owner();
        Duration lease = claim.lease().length();
        String hash = Names.hash(key.name());
        if (queued) {
            boolean first = db.transaction(
                    "queue of '" + abbreviate(key) + "'", c -> queue.joinAndCheck(c, hash, owner.value()));
            if (!first) {
                return Attempt.busy(FairQueue.refreshWithin());
            }
        }
        if (sessions.containsKey(id(key, owner))) {
            // the owner holds it already (a hand-off to it raced with its own attempt): busy, as in the reference
            return Attempt.busy(RECHECK);
        }
        if (!pins.tryAcquire()) {
            throw new DistributedLockException(
                    mechanism.mode() + " mode pins one connection per held lock, and this client already pins "
                            + maxPinned + " (maxPinnedConnections); release a lock, raise maxPinnedConnections(..) "
                            + "within your pool's size, or use Mode.TABLE, which pins none",
                    new SQLException("too many pinned connections"));
        }
        Connection c = null;
        try {
            c = db.connection();
            if (!tryLockRetrying(c, key.name())) {
                closeQuietly(c);
                pins.release();
                return queued ? Attempt.busy(FairQueue.refreshWithin()) : Attempt.busy(RECHECK);
            }
            long token = db.dialect.nextToken(c, db.table);
            long sessionId = Dialect.queryLong(c, db.dialect.sessionIdQuery());
            sessions.put(id(key, owner), new Session(c, sessionId, key, owner, token));
            if (queued) {
                db.autocommit("dequeue of '" + abbreviate(key) + "'", q -> queue.remove(q, hash, owner.value()));
            }
            return Attempt.acquired(token);
        } catch (SQLException | RuntimeException e) {
            Session s = sessions.remove(id(key, owner));
            if (s != null) {
                end(s, false);
            } else {
                if (c != null) {
                    discard(c);
                }
                pins.release();
            }
            if (e instanceof SQLException sql) {
                throw Db.failure("acquire of '" + abbreviate(key) + "'", sql);
            }
            throw (RuntimeException) e;
        }
    }

    /** One lock attempt, repeated a few times when a deadlock or serialization failure interrupts it. */
    private boolean tryLockRetrying(Connection c, String name) throws SQLException {
        for (int attempt = 1; ; attempt++) {
            try {
                return mechanism.tryLock(c, name);
            } catch (SQLException e) {
                if (attempt >= Db.ATTEMPTS || !Dialect.isTransient(e) || isConnectionLost(e)) {
                    throw e;
                }
                mechanism.reset(c);
                java.util.concurrent.locks.LockSupport.parkNanos(
                        java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(5L << attempt));
            }
        }
    }

    private static boolean isConnectionLost(SQLException e) {
        String state = e.getSQLState();
        return state != null && (state.startsWith("08") || state.equals("57P01"));
    }

    /** Ends the owner's hold and queue entry: an owner holds through one session here, never two. */
    @Override
    public void abandonHold(HeldClaim hold) {
        abandon(hold.key(), hold.owner());
    }

    @Override
    public void abandon(Claim claim) {
        abandon(claim.key(), claim.owner());
    }

    private void abandon(LockKey key, OwnerId owner) {
        Session s = sessions.remove(id(key, owner));
        if (s != null) {
            var unused = end(s, true); // first: a hold must end even if the queue table cannot be reached
        }
        db.transaction("abandon of '" + abbreviate(key) + "'", c -> {
            if (queue.remove(c, Names.hash(key.name()), owner.value())) {
                mechanism.notifyRelease(c, key.name());
            }
            return true;
        });
    }

    @Override
    public boolean release(HeldClaim hold) {
        Session s = sessions.remove(id(hold.key(), hold.owner()));
        return s != null && end(s, true);
    }

    /** Ends a session's hold and gives its connection back; true if the lock was still held. */
    private boolean end(Session s, boolean unlock) {
        boolean released = false;
        try {
            if (unlock) {
                released = mechanism.unlock(s.connection, s.key.name());
            }
            if (!released) {
                mechanism.reset(s.connection);
            }
            s.connection.close();
        } catch (SQLException e) {
            // a dead session holds nothing: the database released the lock when it ended
            log.debug("distlock: ending the session of '{}' failed; the database releases it", abbreviate(s.key), e);
            discard(s.connection);
            released = false;
        } finally {
            pins.release();
        }
        if (unlock && !released) {
            try {
                mechanism.cleanUpAfterLoss(s.key.name());
            } catch (RuntimeException e) {
                log.debug("distlock: clean-up after the lost hold of '{}' failed", abbreviate(s.key), e);
            }
        }
        return released;
    }

    @Override
    public Set<HeldClaim> renew(Collection<HeldClaim> holds, Duration lease) {
        Set<HeldClaim> gone = new HashSet<>();
        List<SessionLock.Held> asked = new ArrayList<>();
        Map<Long, HeldClaim> byId = new HashMap<>();
        long n = 0;
        for (HeldClaim h : holds) {
            Session s = sessions.get(id(h.key(), h.owner()));
            if (s == null || s.token != h.fencingToken()) {
                gone.add(h);
                continue;
            }
            asked.add(new SessionLock.Held(n, s.sessionId, h.key().name()));
            byId.put(n++, h);
        }
        if (asked.isEmpty()) {
            return gone;
        }
        Set<Long> held = db.autocommit("renewal of " + asked.size() + " locks", c -> mechanism.stillHeld(c, asked));
        for (Map.Entry<Long, HeldClaim> e : byId.entrySet()) {
            if (!held.contains(e.getKey())) {
                gone.add(e.getValue());
            }
        }
        return gone;
    }

    @Override
    public HandOff handOff(Claim claim, OwnerId from) {
        LockKey key = claim.key();
        OwnerId to = claim.owner();
        Duration lease = claim.lease().length();
        Session s = sessions.remove(id(key, from));
        if (s == null) {
            log.warn("distlock: hand-off of '{}' from {} found no session", abbreviate(key), from);
            return HandOff.notHeld();
        }
        long token;
        try {
            token = db.dialect.nextToken(s.connection, db.table); // also proves the session is alive
        } catch (SQLException e) {
            log.warn("distlock: hand-off of '{}' found the holding session dead", abbreviate(key), e);
            var unused = end(s, true);
            return HandOff.notHeld();
        }
        s.owner = to;
        s.token = token;
        sessions.put(id(key, to), s);
        return HandOff.granted(token);
    }

    @Override
    public Subscription subscribe(LockKey key, Runnable wakeUp) {
        PgListener l = listener;
        return l == null ? Subscription.none() : l.subscribe(Names.hash(key.name()), wakeUp);
    }

    @Override
    public Optional<LockInfo> inspect(LockKey key) {
        Session mine = local(key);
        if (mine != null) {
            return Optional.of(new LockInfo(key.name(), mine.owner.value(), Duration.ZERO, mine.token, -1));
        }
        OptionalLong holder =
                db.autocommit("inspect of '" + abbreviate(key) + "'", c -> mechanism.holder(c, key.name()));
        if (holder.isEmpty()) {
            return Optional.empty();
        }
        String owner = holder.getAsLong() == 0 ? "another session" : "session " + holder.getAsLong();
        return Optional.of(new LockInfo(key.name(), owner, Duration.ZERO, -1, -1));
    }

    private @Nullable Session local(LockKey key) {
        for (Session s : sessions.values()) {
            if (s.key.equals(key)) {
                return s;
            }
        }
        return null;
    }

    /** The sessions of this client only: another client's names are not readable from its locks. */
    @Override
    public List<LockInfo> list(String prefix, int limit) {
        List<LockInfo> out = new ArrayList<>();
        for (Session s : sessions.values()) {
            if (s.key.name().startsWith(prefix)) {
                out.add(new LockInfo(s.key.name(), s.owner.value(), Duration.ZERO, s.token, -1));
            }
        }
        out.sort(Comparator.comparing(LockInfo::name));
        return out.size() > limit ? new ArrayList<>(out.subList(0, limit)) : out;
    }

    @Override
    public Optional<LockInfo> forceRelease(LockKey key) {
        Session mine = local(key);
        if (mine != null) {
            sessions.remove(id(key, mine.owner));
            LockInfo info = new LockInfo(key.name(), mine.owner.value(), Duration.ZERO, mine.token, -1);
            end(mine, true);
            return Optional.of(info);
        }
        Optional<LockInfo> info = inspect(key);
        if (info.isEmpty()) {
            return info;
        }
        OptionalLong holder =
                db.autocommit("inspect of '" + abbreviate(key) + "'", c -> mechanism.holder(c, key.name()));
        if (holder.isEmpty()) {
            return Optional.empty();
        }
        if (holder.getAsLong() == 0) {
            throw new DistributedLockException(
                    "force release of '" + abbreviate(key) + "': " + mechanism.mode()
                            + " mode cannot tell which session holds it; end that session in the database",
                    new SQLException("holder unknown"));
        }
        terminate(holder.getAsLong());
        return info;
    }

    /** Ends another server session, the only way to take a session lock from its holder. */
    void terminate(long sessionId) {
        db.autocommit("termination of session " + sessionId, c -> {
            String sql = db.dialect == Dialect.POSTGRESQL ? "SELECT pg_terminate_backend(?)" : "KILL CONNECTION ?";
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setLong(1, sessionId);
                ps.execute();
            }
            return true;
        });
    }

    /** The server session ids of this client's holds of {@code name}; for tests that kill them. */
    List<Long> sessionIds(String name) {
        List<Long> out = new ArrayList<>();
        for (Session s : sessions.values()) {
            if (s.key.name().equals(name)) {
                out.add(s.sessionId);
            }
        }
        return out;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (String id : new ArrayList<>(sessions.keySet())) {
            Session s = sessions.remove(id);
            if (s != null) {
                end(s, true);
            }
        }
        PgListener l = listener;
        if (l != null) {
            l.close();
        }
    }

    @Override
    public String toString() {
        return "JdbcSessionLockStore[" + mechanism.mode() + ", " + db.dialect.id() + ", " + db.table + "]";
    }

    private static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (SQLException e) {
            // nothing was held on it
        }
    }

    /** Closes a connection whose state is unknown so that a pool does not hand it out with a lock on it. */
    private static void discard(Connection c) {
        try {
            c.abort(Runnable::run);
        } catch (SQLException | RuntimeException e) {
            // already dead
        }
        closeQuietly(c);
    }

    private static String abbreviate(LockKey key) {
        return JdbcTableLockStore.abbreviate(key.name());
    }
}
