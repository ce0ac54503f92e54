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
import io.distlock.spi.Mode;
import io.distlock.spi.OwnerId;
import io.distlock.spi.SessionHolds;
import io.distlock.spi.Subscription;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
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
 * Pool exhaustion: see PinLimit; a hold keeps its permit until the connection goes back to the pool.
 *
 * Fencing tokens come from the same sequence as in TABLE mode, drawn on the holding session after the lock is taken;
 * every earlier holder's token was drawn while it held the lock, so the new token is greater.
 *
 * Renewal asks the database, in one statement on a pooled connection, which of the client's sessions still hold
 * their lock (pg_locks / IS_USED_LOCK for ADVISORY, pg_stat_activity / PROCESSLIST for ROW_LOCK); a killed session is
 * reported gone. Hand-off keeps the session and the lock and gives them a new owner and a new token. Fair waiters use
 * the shared queue table (FairQueue).
 *
 * Read-write locks (ADVISORY on PostgreSQL, ROW_LOCK on PostgreSQL and MariaDB; see unsupported() for the others)
 *   A write hold is pg_try_advisory_lock(key) and a read hold pg_try_advisory_lock_shared(key), on the name's key (the
 *   one a lock of the name uses, so a lock and a read-write lock of one name exclude each other), each on a session of
 *   its own, with a fencing token drawn on that session once the lock is taken, as for locks: every earlier write
 *   holder drew its token while it held the key exclusively, and every reader while it held it shared, so a write
 *   token is greater than every token before it, and a read token greater than every write token before it. The
 *   database decides who may hold; the order between waiters is the queue table's, whose entries carry the mode
 *   ("<owner>/X", "<owner>/S"; a fair lock's waiter, "<owner>", counts as exclusive): a waiting claim refreshes its
 *   entry with every attempt, and before it tries the advisory lock it reads the name's live entries in ticket order:
 *   a write claim goes only when no entry is ahead of it, a read claim only when no exclusive entry is ahead of it (a
 *   try that does not wait has every entry ahead of it). So a waiting writer holds back readers that come after it,
 *   and one that died stops doing so when its entry expires, 5 s after its last attempt. A downgrade (a read claim of
 *   an owner that holds the write lock) takes the shared lock on the write hold's own session, which PostgreSQL grants
 *   at once (a session never conflicts with itself); that session then stays pinned until both holds end (a Pin
 *   counts them). Renewal asks pg_locks for the session, key and mode of each hold; a killed session frees its read and
 *   write holds at once and is reported gone at the next renewal.
 *   ROW_LOCK works the same way with the name's row as the lock (the row a lock of the name uses): a write hold is the
 *   row locked FOR UPDATE NOWAIT and a read hold the row locked in share mode with NOWAIT, each in a transaction kept
 *   open on its own session; tokens, the queue and the downgrade's shared session are as above, and SessionLock.RowLock
 *   tells how a downgrade's write release gives the exclusive lock back on each database. Renewal asks
 *   pg_stat_activity / PROCESSLIST whether each hold's session is still connected, as for ROW_LOCK locks. The last
 *   reader to leave deletes the row if no other reader holds it.
 *
 * Semaphores are not kept in these modes (see unsupported()); count-down latches need no session and are kept in
 * tables by JdbcTableCounters, as in mode TABLE.
 */
final class JdbcSessionLockStore implements JdbcStore, HandsOff, SessionHolds, CounterStore {
    private static final Logger log = LoggerFactory.getLogger(JdbcSessionLockStore.class);
    /** How soon a waiter re-checks a lock whose holder might have died without a notification. */
    private static final Duration RECHECK = Duration.ofSeconds(1);

    private final Db db;
    private final SessionLock mechanism;
    private final FairQueue queue;
    private final PinLimit pins;
    private final @Nullable PgListener listener;
    private final JdbcTableCounters counters;
    private final Map<String, Session> sessions = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /**
     * A pinned connection and its server session id, with the number of holds on it (guarded by the pin): one, or two
     * after a downgrade (a write hold and its owner's read hold). Its pin permit and connection go back with the last.
     */
    private static final class Pin {
        final Connection connection;
        final long sessionId;
        /** What {@link Db#pinned} returned for the connection. */
        final Object driver;

        int holds = 1;

        Pin(Connection connection, long sessionId, Object driver) {
            this.connection = connection;
            this.sessionId = sessionId;
            this.driver = driver;
        }
    }

    /** A held lock, or a read or write hold of a read-write lock: its pinned session, kind, mode and token. */
    private static final class Session {
        final Pin pin;
        final Connection connection;
        final long sessionId;
        final LockKey key;
        final Claim.Kind kind;
        final Mode mode;
        volatile OwnerId owner;
        volatile long token;
        /** Set when its release's commit failed once sent (see {@link SessionLock.CommitUnknown}). */
        volatile SessionLock.@Nullable CommitUnknown commitUnknown;

        Session(Pin pin, LockKey key, Claim.Kind kind, Mode mode, OwnerId owner, long token) {
            this.pin = pin;
            this.connection = pin.connection;
            this.sessionId = pin.sessionId;
            this.key = key;
            this.kind = kind;
            this.mode = mode;
            this.owner = owner;
            this.token = token;
        }

        String id() {
            return JdbcSessionLockStore.id(key, owner, kind, mode);
        }
    }

    JdbcSessionLockStore(Db db, SessionLock mechanism, int maxPinned, String clientId) {
        this.db = db;
        this.mechanism = mechanism;
        this.queue = new FairQueue(db);
        this.pins = new PinLimit(maxPinned, mechanism.mode());
        String channel = db.table.toLowerCase(java.util.Locale.ROOT) + "_release";
        this.listener = db.dialect.notifies() ? new PgListener(db.dataSource, channel, clientId) : null;
        this.counters = new JdbcTableCounters(db, listener, listener == null ? null : channel);
    }

    /** Locks; read-write locks too where the mechanism has a shared hold (see unsupported()). */
    @Override
    public Set<Claim.Kind> kinds() {
        return mechanism.sharedHolds() ? Set.of(Claim.Kind.LOCK, Claim.Kind.READ_WRITE_LOCK) : Set.of(Claim.Kind.LOCK);
    }

    /**
     * Semaphores would need a session per permit (a ticket per permit number), which a pool of connections cannot
     * carry for any size worth having; read-write locks need a shared hold: PostgreSQL's shared advisory locks in mode
     * ADVISORY, a row locked in share mode on PostgreSQL and MariaDB in mode ROW_LOCK. GET_LOCK has no shared mode.
     */
    @Override
    public String unsupported(String primitives) {
        String mode = mechanism.mode();
        String why;
        if (primitives.startsWith("semaphore")) {
            why = "a hold pins a database session, so every permit would pin a connection of its own";
        } else if (mechanism instanceof SessionLock.Advisory) {
            why = "GET_LOCK on " + db.dialect.id() + " has no shared mode for read holds; mode ADVISORY keeps them"
                    + " on PostgreSQL only, with shared advisory locks, and mode ROW_LOCK on PostgreSQL and MariaDB,"
                    + " with rows locked in share mode";
        } else {
            why = "mode ROW_LOCK keeps read holds as rows locked in share mode with NOWAIT on PostgreSQL and MariaDB"
                    + " only";
        }
        return primitives + " are not available in mode " + mode + " on " + db.dialect.id() + " (" + why
                + "); build the client with mode(JdbcLockClient.Mode.TABLE), which keeps them in tables";
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

    /** The map key of a hold: a lock's is its name and owner, a read or write hold's has the mode too. */
    private static String id(LockKey key, OwnerId owner, Claim.Kind kind, Mode mode) {
        return kind == Claim.Kind.LOCK ? id(key, owner) : id(key, owner) + '\n' + ClaimKinds.modeCode(mode);
    }

    @Override
    public Attempt tryAcquire(Claim claim, boolean queued) {
        if (claim.kind() != Claim.Kind.LOCK) {
            return tryAcquireReadWrite(claim, queued);
        }
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
        if (!pins.take(this::heldPins)) {
            return queued ? Attempt.busy(FairQueue.refreshWithin()) : Attempt.busy(RECHECK);
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
            sessions.put(
                    id(key, owner),
                    new Session(
                            new Pin(c, sessionId, db.pinned(c)), key, Claim.Kind.LOCK, Mode.EXCLUSIVE, owner, token));
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
        return tryLockRetrying(c, name, Claim.Kind.LOCK, Mode.EXCLUSIVE);
    }

    private boolean tryLockRetrying(Connection c, String name, Claim.Kind kind, Mode mode) throws SQLException {
        for (int attempt = 1; ; attempt++) {
            try {
                if (mode == Mode.SHARED) {
                    return mechanism.tryLockShared(c, name);
                }
                return kind == Claim.Kind.LOCK ? mechanism.tryLock(c, name) : mechanism.tryLockWrite(c, name);
            } catch (SQLException e) {
                if (attempt >= Db.ATTEMPTS || !Dialect.isTransient(e) || isConnectionLost(e)) {
                    throw e;
                }
                mechanism.reset(c);
                java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5L << attempt));
            }
        }
    }

    // ---------------------------------------------------------------- read-write locks (ADVISORY, ROW_LOCK)

    /** A queue entry's owner column for a read or write claim: the owner and its mode. */
    private static String entry(OwnerId owner, Mode mode) {
        return owner.value() + '/' + ClaimKinds.modeCode(mode);
    }

    /** Whether a queue entry is a shared claim's; a fair lock's waiter (no mode) counts as exclusive. */
    private static boolean sharedEntry(String entry) {
        return entry.endsWith("/" + ClaimKinds.modeCode(Mode.SHARED));
    }

    private Attempt tryAcquireReadWrite(Claim claim, boolean queued) {
        LockKey key = claim.key();
        OwnerId owner = claim.owner();
        Mode mode = claim.mode();
        String id = id(key, owner, claim.kind(), mode);
        Session mine = sessions.get(id);
        if (mine != null) {
            return Attempt.acquired(mine.token); // granted already (the engine asks once per owner and mode)
        }
        if (mode == Mode.SHARED) {
            Session write = sessions.get(id(key, owner, claim.kind(), Mode.EXCLUSIVE));
            if (write != null) {
                Attempt downgraded = downgrade(claim, write);
                if (downgraded != null) {
                    return downgraded;
                }
            }
        }
        String hash = Names.hash(key.name());
        String me = entry(owner, mode);
        boolean clear = db.transaction("queue of '" + abbreviate(key) + "'", c -> {
            if (queued) {
                queue.enqueue(c, hash, me);
            }
            FairQueue.Live live = queue.liveEntries(c, hash);
            if (live.evicted()) {
                mechanism.notifyRelease(c, key.name()); // those behind an evicted waiter may pass now
            }
            for (String e : live.owners()) {
                if (e.equals(me)) {
                    break; // the entries ahead of this claim's place are all compatible with it
                }
                if (mode == Mode.EXCLUSIVE || !sharedEntry(e)) {
                    return false;
                }
            }
            return true;
        });
        Duration busy = queued ? FairQueue.refreshWithin() : RECHECK;
        if (!clear) {
            return Attempt.busy(busy);
        }
        if (!pins.take(this::heldPins)) {
            return Attempt.busy(busy);
        }
        Connection c = null;
        Session granted = null;
        try {
            c = db.connection();
            if (!tryLockRetrying(c, key.name(), claim.kind(), mode)) {
                closeQuietly(c);
                pins.release();
                return Attempt.busy(busy);
            }
            long token = db.dialect.nextToken(c, db.table);
            long sessionId = Dialect.queryLong(c, db.dialect.sessionIdQuery());
            granted = new Session(new Pin(c, sessionId, db.pinned(c)), key, claim.kind(), mode, owner, token);
            sessions.put(id, granted);
            if (queued) {
                db.autocommit("dequeue of '" + abbreviate(key) + "'", q -> queue.remove(q, hash, me));
            }
            return Attempt.acquired(token);
        } catch (SQLException | RuntimeException e) {
            if (granted != null && sessions.remove(id, granted)) {
                end(granted, false);
            } else if (granted == null) {
                if (c != null) {
                    discard(c);
                }
                pins.release();
            }
            if (e instanceof SQLException sql) {
                throw Db.failure("acquire of " + claim.kind().label() + " '" + abbreviate(key) + "'", sql);
            }
            throw (RuntimeException) e;
        }
    }

    /**
     * The read hold of an owner that holds the write lock, on the write hold's session, where the database grants it at
     * once; null when the write hold ended meanwhile (the claim then goes the usual way).
     */
    private @Nullable Attempt downgrade(Claim claim, Session write) {
        Pin pin = write.pin;
        synchronized (pin) {
            if (pin.holds == 0) {
                return null;
            }
            try {
                if (!mechanism.tryDowngrade(pin.connection, claim.key().name())) {
                    // only another session can refuse it: this one is no longer the one that holds the write lock
                    return Attempt.busy(RECHECK);
                }
                long token = db.dialect.nextToken(pin.connection, db.table);
                pin.holds++;
                Session read = new Session(pin, claim.key(), claim.kind(), Mode.SHARED, claim.owner(), token);
                sessions.put(read.id(), read);
                return Attempt.acquired(token);
            } catch (SQLException e) {
                throw Db.failure("downgrade of '" + abbreviate(claim.key()) + "'", e);
            }
        }
    }

    /** The connections this client's holds pin now. */
    private int heldPins() {
        Set<Pin> held = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Session s : sessions.values()) {
            held.add(s.pin);
        }
        return held.size();
    }

    private static boolean isConnectionLost(SQLException e) {
        String state = e.getSQLState();
        return state != null && (state.startsWith("08") || state.equals("57P01"));
    }

    /**
     * Ends the owner's hold and queue entry: an owner holds a lock through one session here, never two. A read or write
     * hold ends only if it is still the grant with the hold's token.
     */
    @Override
    public void abandonHold(HeldClaim hold) {
        if (hold.kind() == Claim.Kind.LOCK) {
            abandon(hold.key(), hold.owner());
            return;
        }
        var unused = endIfCurrent(hold);
    }

    @Override
    public void abandon(Claim claim) {
        if (claim.kind() == Claim.Kind.LOCK) {
            abandon(claim.key(), claim.owner());
            return;
        }
        LockKey key = claim.key();
        Session s = sessions.remove(id(key, claim.owner(), claim.kind(), claim.mode()));
        if (s != null) {
            var unused = end(s, true); // first: a hold must end even if the queue table cannot be reached
        }
        db.transaction("abandon of '" + abbreviate(key) + "'", c -> {
            if (queue.remove(c, Names.hash(key.name()), entry(claim.owner(), claim.mode()))) {
                mechanism.notifyRelease(c, key.name());
            }
            return true;
        });
    }

    /** Ends a read or write hold if it is still the grant with {@code hold}'s token; true if it was still held. */
    private boolean endIfCurrent(HeldClaim hold) {
        String id = id(hold.key(), hold.owner(), hold.kind(), hold.mode());
        Session s = sessions.get(id);
        return s != null && s.token == hold.fencingToken() && sessions.remove(id, s) && released(s);
    }

    /**
     * Ends a hold for its owner's release; true if it was still held. A release whose commit failed once sent throws
     * {@link DistributedLockException}: the commit may have been applied, and "lost" would claim the hold ended before
     * this release.
     */
    private boolean released(Session s) {
        boolean released = end(s, true);
        SessionLock.CommitUnknown unknown = s.commitUnknown;
        if (unknown != null) {
            throw new DistributedLockException(
                    "the release of '" + abbreviate(s.key) + "' lost its connection after sending its commit: the"
                            + " database ends that session and its lock with it, but whether the release itself took"
                            + " effect is unknown",
                    unknown);
        }
        return released;
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
        if (hold.kind() != Claim.Kind.LOCK) {
            return endIfCurrent(hold);
        }
        Session s = sessions.remove(id(hold.key(), hold.owner()));
        return s != null && released(s);
    }

    /**
     * Ends a session's hold, and gives its connection back when no other hold uses it (see {@link Pin}); true if the
     * lock was still held.
     */
    private boolean end(Session s, boolean unlock) {
        boolean released = false;
        Pin pin = s.pin;
        synchronized (pin) {
            boolean last = --pin.holds == 0;
            try {
                if (unlock) {
                    released = mechanism.unlockHold(
                            s.connection,
                            s.key.name(),
                            s.kind == Claim.Kind.READ_WRITE_LOCK,
                            s.mode == Mode.SHARED,
                            !last);
                }
                if (last) {
                    if (!released) {
                        mechanism.reset(s.connection);
                    }
                    // before the close: the pool may hand the connection to another thread at once
                    db.unpinned(pin.driver);
                    s.connection.close();
                }
            } catch (SQLException e) {
                // a dead session holds nothing: the database released the lock when it ended (and the other hold
                // on it, if any, which its next renewal reports gone)
                log.debug(
                        "distlock: ending the session of '{}' failed; the database releases it", abbreviate(s.key), e);
                if (last) {
                    db.unpinned(pin.driver);
                }
                discard(s.connection);
                released = false;
                if (e instanceof SessionLock.CommitUnknown u) {
                    s.commitUnknown = u;
                }
            } finally {
                if (last) {
                    pins.release();
                }
            }
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
            Session s = sessions.get(id(h.key(), h.owner(), h.kind(), h.mode()));
            if (s == null || s.token != h.fencingToken()) {
                gone.add(h);
                continue;
            }
            asked.add(new SessionLock.Held(n, s.sessionId, h.key().name(), s.mode == Mode.SHARED));
            byId.put(n++, h);
        }
        if (asked.isEmpty()) {
            return gone;
        }
        Set<Long> held = db.autocommit("renewal of " + asked.size() + " locks", c -> mechanism.stillHeld(c, asked));
        for (Map.Entry<Long, HeldClaim> e : byId.entrySet()) {
            if (!held.contains(e.getKey())) {
                HeldClaim h = e.getValue();
                gone.add(h);
                if (h.kind() != Claim.Kind.LOCK && mechanism instanceof SessionLock.RowLock) {
                    // its session is dead: end it now, which deletes the row it leaves unless others hold it
                    var unused = endIfCurrent(h);
                }
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
        if (mechanism.sharedHolds()) {
            List<SessionLock.Holder> all =
                    db.autocommit("inspect of '" + abbreviate(key) + "'", c -> mechanism.holders(c, key.name()));
            if (isReadWrite(key, all)) {
                return readWriteInfo(key, all);
            }
        }
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

    /** Whether the name is in use as a read-write lock: a shared hold, or a read or write hold of this client. */
    private boolean isReadWrite(LockKey key, List<SessionLock.Holder> all) {
        for (SessionLock.Holder h : all) {
            if (h.shared()) {
                return true;
            }
        }
        for (Session s : sessions.values()) {
            if (s.key.equals(key) && s.kind == Claim.Kind.READ_WRITE_LOCK) {
                return true;
            }
        }
        return false;
    }

    /**
     * Every hold of a read-write lock as the database shows them: this client's with their owner and token, first;
     * other sessions' as "session <pid>", token -1. No lease (0) and no count of waiters (-1), as for locks.
     */
    private Optional<LockInfo> readWriteInfo(LockKey key, List<SessionLock.Holder> all) {
        List<LockInfo.Holder> mine = new ArrayList<>();
        List<LockInfo.Holder> others = new ArrayList<>();
        for (SessionLock.Holder h : all) {
            Session s = null;
            for (Session candidate : sessions.values()) {
                if (candidate.key.equals(key)
                        && (h.sessionId() == 0 || candidate.sessionId == h.sessionId()) // 0: ROW_LOCK
                        && (candidate.mode == Mode.SHARED) == h.shared()) {
                    s = candidate;
                    break;
                }
            }
            if (s != null) {
                mine.add(new LockInfo.Holder(s.owner.value(), !h.shared(), 1, Duration.ZERO, s.token));
            } else {
                others.add(new LockInfo.Holder("session " + h.sessionId(), !h.shared(), 1, Duration.ZERO, -1));
            }
        }
        if (mine.isEmpty() && others.isEmpty()) {
            return Optional.empty();
        }
        mine.addAll(others);
        return Optional.of(LockInfo.ofHolders(key.name(), LockInfo.Kind.READ_WRITE_LOCK, mine, -1));
    }

    /** How many of a read-write lock's permits are free: 0 while a write hold lasts, less one per read hold. */
    @Override
    public int available(LockKey key, Claim.Kind kind, int size) {
        if (kind == Claim.Kind.LOCK || !mechanism.sharedHolds()) {
            return inspect(key).isPresent() ? 0 : 1;
        }
        List<SessionLock.Holder> all =
                db.autocommit("available of '" + abbreviate(key) + "'", c -> mechanism.holders(c, key.name()));
        long shared = 0;
        for (SessionLock.Holder h : all) {
            if (!h.shared()) {
                return 0;
            }
            shared++;
        }
        return (int) Math.max(0, size - shared);
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
            sessions.remove(mine.id(), mine);
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
            if (s.key.name().equals(name) && !out.contains(s.sessionId)) {
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
