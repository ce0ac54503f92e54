package io.distlock.jdbc;

import io.distlock.DistributedLockException;
import io.distlock.LockAdmin;
import io.distlock.LockClient;
import io.distlock.internal.Checks;
import io.distlock.internal.EngineClient;
import io.distlock.internal.EngineConfig;
import io.distlock.internal.LockEngine;
import io.distlock.spi.OwnerId;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * A {@link LockClient} whose locks live in a relational database reached through a {@link DataSource}: PostgreSQL
 * 10+, MariaDB 10.3+, MySQL 8.0+ or H2 2.x. The dialect is detected from the connection's metadata.
 *
 * <!-- sample: jdbc-client -->
 * <pre>{@code
 * try (JdbcLockClient client = JdbcLockClient.create(dataSource)) { // mode TABLE, tables distlock_*
 *     DistributedLock lock = client.lock("order:123");
 *     lock.lock();
 *     try {
 *         // ... guarded work ...
 *     } finally {
 *         lock.unlock();
 *     }
 *     try (LockHold hold = lock.acquire()) {
 *         // UPDATE orders SET ..., fence = ? WHERE id = ? AND fence <= ?   (bind hold.fencingToken())
 *     }
 * }
 * }</pre>
 *
 * <p>The client needs its tables (see {@code docs/backends/jdbc.md} for the DDL of each database, or call {@link
 * Builder#createSchemaIfMissing()}). Give it a pooled {@code DataSource}: every store operation borrows a connection
 * for one short statement or transaction, and the session modes pin one connection per held lock.
 *
 * <h2>Modes</h2>
 *
 * <p><b>{@link Mode#TABLE}</b> (default): a hold is a row {@code (name, owner, expires_at, fencing_token)} in {@code
 * <table>_lock}.
 *
 * <ul>
 *   <li><i>Guarantees:</i> every contract of {@link LockClient}. Expiry is judged by the database's clock only, in SQL,
 *       so clients whose clocks disagree (by minutes, or jumping) never disagree about who holds a lock; a client's
 *       own clock is used only as a monotonic ticker to stop trusting its hold before the database would expire it.
 *       Fencing tokens come from a database sequence and stay increasing after rows are deleted and across restarts
 *       that keep the data. All holds of a client are renewed with one statement per watchdog tick. A hold survives
 *       the loss of any connection: it lives in the table until its lease ends. On PostgreSQL a release wakes
 *       waiters through {@code LISTEN/NOTIFY}; elsewhere waiters poll with jittered back-off bounded by the holder's
 *       remaining lease.
 *   <li><i>Failure modes:</i> when the database cannot be reached, operations throw {@link DistributedLockException}
 *       (after a short retry of transient errors such as deadlock victims, serialization failures and lost
 *       connections); held locks stay valid until their last confirmed lease ends and are then reported lost. A
 *       failover to a replica that missed the last writes may forget holds and, on PostgreSQL and MariaDB, sequence
 *       values: use synchronous replication if that matters, and fence the protected resource. If the database
 *       server's wall clock is stepped forward, leases end early by that much (reported as lost holds).
 *   <li><i>Requirements:</i> the tables and sequence of the schema; the database user may SELECT, INSERT, UPDATE,
 *       DELETE them and use the sequence. PostgreSQL sequences must keep {@code CACHE 1} (the default).
 * </ul>
 *
 * <p><b>{@link Mode#ROW_LOCK}</b>: a hold is {@code SELECT ... FOR UPDATE NOWAIT} on a row of {@code <table>_row} in
 * a transaction kept open on a dedicated connection for the whole hold; release deletes the row and commits.
 *
 * <ul>
 *   <li><i>Guarantees:</i> mutual exclusion, owner checks, re-entry, fencing (from the same sequence), waiting and fair
 *       locks as in TABLE mode. The database releases the lock the moment the holder's session dies (process crash,
 *       killed connection), with no lease to wait out; the holder's next renewal reports the hold lost.
 *   <li><i>Failure modes:</i> each hold pins a connection: a client pins at most {@link Builder#maxPinnedConnections
 *       maxPinnedConnections} (default 8) and fails an acquire beyond that at once with a {@link
 *       DistributedLockException} naming the limit, instead of waiting for a pool it is itself exhausting. A long
 *       hold is a long transaction (it holds back PostgreSQL's vacuum and MariaDB's purge). There is no lease in the
 *       database: a holder that is alive but stuck keeps the lock until its client's fixed lease ends (the client
 *       then releases it) or its session is killed. {@link LockAdmin#list} shows this client's holds only, and
 *       {@link LockAdmin#forceUnlock} of another client's hold is refused (end its session in the database).
 *   <li><i>Requirements:</i> PostgreSQL, or MariaDB 10.3+/MySQL 8.0+ ({@code NOWAIT}); not H2. A pool larger than
 *       {@code maxPinnedConnections} plus the connections of other work.
 * </ul>
 *
 * <p><b>{@link Mode#ADVISORY}</b>: a hold is a session-level {@code pg_try_advisory_lock(bigint)} on PostgreSQL or
 * {@code GET_LOCK(name, 0)} on MariaDB/MySQL, on a dedicated connection for the whole hold.
 *
 * <ul>
 *   <li><i>Guarantees:</i> as ROW_LOCK, without a transaction kept open. Names are hashed: to 64 bits on PostgreSQL
 *       (two distinct names contend only if their SHA-256 digests share 64 bits) and to a 63-character lowercase
 *       digest on MariaDB/MySQL, within {@code GET_LOCK}'s 64-character, case-insensitive names.
 *   <li><i>Failure modes:</i> as ROW_LOCK (one pinned connection per hold, bounded by {@code maxPinnedConnections});
 *       {@link LockAdmin#forceUnlock} of another client's hold terminates the holding session.
 *   <li><i>Kinds:</i> on PostgreSQL also read-write locks, a read hold being {@code pg_try_advisory_lock_shared} and
 *       a write hold {@code pg_try_advisory_lock} on the name's key, each on a pinned session of its own, with waiters
 *       ordered by the queue table (a waiting writer holds back later readers). Read-write locks on MariaDB/MySQL
 *       ({@code GET_LOCK} has no shared mode) and semaphores everywhere are refused with an {@link
 *       UnsupportedOperationException} naming {@link Mode#TABLE}, as they are in ROW_LOCK.
 *   <li><i>Requirements:</i> PostgreSQL, or MariaDB 10.0.2+/MySQL 5.7+ plus a sequence (MariaDB 10.3+) or the MySQL
 *       token table; not H2. Advisory locks are not replicated: after a failover every hold is gone.
 * </ul>
 */
public final class JdbcLockClient extends EngineClient {

    /** How a hold is represented in the database; see {@link JdbcLockClient}. */
    public enum Mode {
        /** A row with a lease judged by the database clock (default). */
        TABLE,
        /** {@code SELECT ... FOR UPDATE} on a row, in a transaction kept open for the hold. */
        ROW_LOCK,
        /** PostgreSQL advisory locks or MariaDB/MySQL {@code GET_LOCK}, on a session kept for the hold. */
        ADVISORY
    }

    private final JdbcStore store;
    private final Mode mode;

    private JdbcLockClient(LockEngine engine, JdbcStore store, Mode mode) {
        super(engine);
        this.store = store;
        this.mode = mode;
    }

    /**
     * A client in mode TABLE on the tables {@code distlock_*}, which must exist, with a 30 s watchdog lease.
     *
     * @throws NullPointerException if {@code dataSource} is null
     * @throws DistributedLockException if the database cannot be reached to detect its dialect
     * @throws IllegalArgumentException if the database is not one of PostgreSQL, MariaDB, MySQL, H2
     */
    public static JdbcLockClient create(DataSource dataSource) {
        return builder().dataSource(dataSource).build();
    }

    /** A builder; {@link Builder#dataSource} is required. */
    public static Builder builder() {
        return new Builder();
    }

    /** The mode this client's locks use. */
    public Mode mode() {
        return mode;
    }

    @Override
    public String toString() {
        return "JdbcLockClient[" + OwnerId.redact(clientId()) + ", " + store + "]";
    }

    /** The store, for tests in this package. */
    JdbcStore store() {
        return store;
    }

    /** Builds a {@link JdbcLockClient}. Not thread-safe; reusable. */
    public static final class Builder {
        private @Nullable DataSource dataSource;
        private String tableName = "distlock";
        private @Nullable String dialect;
        private Duration leaseTime = EngineConfig.DEFAULT_LEASE;
        private Mode mode = Mode.TABLE;
        private boolean createSchema;
        private @Nullable String clientId;
        private int maxWaiters = EngineConfig.DEFAULT_MAX_WAITERS;
        private int maxPinnedConnections = 8;
        private Duration latchExpiry = EngineConfig.DEFAULT_LATCH_EXPIRY;
        private @Nullable Executor asyncExecutor;
        private @Nullable EngineConfig config;

        private Builder() {}

        /** The database; required. A pooled DataSource is strongly recommended. */
        public Builder dataSource(DataSource value) {
            this.dataSource = Objects.requireNonNull(value, "dataSource");
            return this;
        }

        /**
         * The prefix of the tables and sequence ({@code <prefix>_lock}, {@code _queue}, {@code _row}, {@code
         * _fence}); default {@code distlock}. Several prefixes in one database are independent lock spaces.
         *
         * @throws IllegalArgumentException unless it is a letter or underscore followed by up to 39 letters, digits
         *     or underscores
         */
        public Builder tableName(String value) {
            this.tableName = Names.tableName(Objects.requireNonNull(value, "tableName"));
            return this;
        }

        /**
         * Overrides the detected dialect: {@code postgresql}, {@code mariadb}, {@code mysql} or {@code h2}.
         *
         * @throws IllegalArgumentException for any other value
         */
        public Builder dialect(String value) {
            this.dialect =
                    Dialect.named(Objects.requireNonNull(value, "dialect")).id();
            return this;
        }

        /**
         * The watchdog lease of holds taken without a lease argument, renewed every third of it; default 30 s.
         *
         * @throws IllegalArgumentException if not positive
         */
        public Builder leaseTime(Duration value) {
            Objects.requireNonNull(value, "leaseTime");
            if (value.isNegative() || value.isZero()) {
                throw new IllegalArgumentException("leaseTime must be positive: " + value);
            }
            this.leaseTime = value;
            return this;
        }

        /** How holds are kept; default {@link Mode#TABLE}. */
        public Builder mode(Mode value) {
            this.mode = Objects.requireNonNull(value, "mode");
            return this;
        }

        /** Creates the tables and sequence when they do not exist, from the dialect's DDL, when the client is built. */
        public Builder createSchemaIfMissing() {
            this.createSchema = true;
            return this;
        }

        /**
         * The label of the client's identity in the store; default {@code pid<process id>}. The client id, the prefix
         * of every owner it writes, is the label followed by a fresh 128-bit secret, so owner ids cannot be guessed.
         *
         * @throws IllegalArgumentException if blank, longer than 100 characters, or containing ':'
         */
        public Builder clientId(String value) {
            Objects.requireNonNull(value, "clientId");
            if (value.isBlank() || value.length() > 100 || value.indexOf(':') >= 0) {
                throw new IllegalArgumentException(
                        "clientId must be non-blank, at most 100 characters, without ':': '" + value + "'");
            }
            this.clientId = value;
            return this;
        }

        /**
         * How many connections the ROW_LOCK and ADVISORY modes may pin at once for held locks (default 8); an acquire
         * beyond it fails at once. Keep it below the pool's size. Ignored in mode TABLE.
         *
         * @throws IllegalArgumentException if not positive
         */
        public Builder maxPinnedConnections(int value) {
            if (value <= 0) {
                throw new IllegalArgumentException("maxPinnedConnections must be positive: " + value);
            }
            this.maxPinnedConnections = value;
            return this;
        }

        /**
         * How many acquires of this client may wait at once; one more is refused at once with {@link
         * java.util.concurrent.RejectedExecutionException}, so a flood of callers cannot grow the client's memory
         * without bound. Default 10,000.
         *
         * @throws IllegalArgumentException if not positive
         */
        public Builder maxWaiters(int maxWaiters) {
            this.maxWaiters = Checks.positive(maxWaiters, "maxWaiters");
            return this;
        }

        /**
         * How long a count-down latch's row stays in the database after its last change (set or count-down) when it
         * does not reach zero; default one day. A latch past it reads as absent (count 0).
         *
         * @throws IllegalArgumentException if the expiry is not positive or too large
         */
        public Builder latchExpiry(Duration value) {
            this.latchExpiry = Checks.lease(value, "latchExpiry");
            return this;
        }

        /** Replaces the engine configuration (ticker, metrics); for tests in this package. */
        /**
         * Where asynchronous acquires run their steps and complete their futures, so user callbacks never run on a
         * store's I/O thread; default: the client's own small pool of daemon threads, shut down with the client. A
         * given executor is left running when the client closes.
         *
         * @throws NullPointerException if {@code asyncExecutor} is null
         */
        public Builder asyncExecutor(Executor asyncExecutor) {
            this.asyncExecutor = Objects.requireNonNull(asyncExecutor, "asyncExecutor");
            return this;
        }

        Builder engineConfig(EngineConfig value) {
            this.config = value;
            return this;
        }

        /**
         * Builds the client: detects the dialect (one connection), creates the schema if asked to.
         *
         * @throws IllegalStateException if no data source was given
         * @throws IllegalArgumentException if the database or the mode is not supported on it
         * @throws DistributedLockException if the database cannot be reached
         */
        public JdbcLockClient build() {
            DataSource ds = dataSource;
            if (ds == null) {
                throw new IllegalStateException("dataSource(..) is required");
            }
            Dialect d;
            try (Connection c = ds.getConnection()) {
                d = dialect != null ? Dialect.named(dialect) : Dialect.detect(c.getMetaData());
                if (createSchema) {
                    createSchema(c, d, tableName);
                }
            } catch (SQLException e) {
                throw Db.failure("connecting to the lock database", e);
            }
            if (mode != Mode.TABLE && d == Dialect.H2) {
                throw new IllegalArgumentException("mode " + mode + " needs PostgreSQL, MariaDB or MySQL, not H2");
            }
            EngineConfig base = config != null ? config : EngineConfig.defaults();
            EngineConfig cfg = base.withWatchdogLease(leaseTime)
                    .withMaxWaiters(maxWaiters)
                    .withLatchExpiry(latchExpiry)
                    .withAsyncExecutor(asyncExecutor);
            if (clientId != null) {
                cfg = cfg.withClientId(clientId);
            }
            Db db = new Db(ds, d, tableName);
            JdbcStore store =
                    switch (mode) {
                        case TABLE -> new JdbcTableLockStore(db, cfg.clientId());
                        case ROW_LOCK ->
                            new JdbcSessionLockStore(
                                    db, new SessionLock.RowLock(db), maxPinnedConnections, cfg.clientId());
                        case ADVISORY ->
                            new JdbcSessionLockStore(
                                    db, new SessionLock.Advisory(db), maxPinnedConnections, cfg.clientId());
                    };
            return new JdbcLockClient(LockEngine.create(store, cfg), store, mode);
        }

        /**
         * Runs the dialect's DDL, each statement {@code CREATE ... IF NOT EXISTS}. On MariaDB and MySQL a statement
         * whose object exists already is skipped: {@code CREATE SEQUENCE IF NOT EXISTS} on an existing sequence still
         * waits for an exclusive metadata lock, and a ROW_LOCK hold keeps the transaction that took its token from
         * the sequence open for the whole hold, so a client built while another client holds a lock would wait up
         * to {@code lock_wait_timeout} (a day by default). The catalog query takes no such lock.
         */
        private static void createSchema(Connection c, Dialect d, String table) throws SQLException {
            List<String> ddl = d.schema(table);
            boolean autoCommit = c.getAutoCommit();
            c.setAutoCommit(true);
            try {
                for (String sql : ddl) {
                    if ((d == Dialect.MARIADB || d == Dialect.MYSQL) && exists(c, createdObject(sql))) {
                        continue;
                    }
                    for (int attempt = 0; ; attempt++) {
                        try (Statement st = c.createStatement()) {
                            st.execute(sql);
                            break;
                        } catch (SQLException e) {
                            // two clients creating the schema at once can collide in the catalog: try again
                            if (attempt >= 2) {
                                throw e;
                            }
                        }
                    }
                }
            } finally {
                c.setAutoCommit(autoCommit);
            }
        }

        private static final Pattern CREATE_IF_NOT_EXISTS = Pattern.compile(
                "^\\s*CREATE\\s+(?:TABLE|SEQUENCE)\\s+IF\\s+NOT\\s+EXISTS\\s+([A-Za-z0-9_]+)",
                Pattern.CASE_INSENSITIVE);

        /** The table or sequence a {@code CREATE TABLE|SEQUENCE IF NOT EXISTS} statement creates, or null. */
        static @Nullable String createdObject(String sql) {
            Matcher m = CREATE_IF_NOT_EXISTS.matcher(sql);
            return m.find() ? m.group(1) : null;
        }

        /** Whether the current database has a table or sequence {@code name}, from the catalog. */
        private static boolean exists(Connection c, @Nullable String name) throws SQLException {
            if (name == null) {
                return false;
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM information_schema.TABLES"
                    + " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?")) {
                ps.setString(1, name);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() && rs.getLong(1) > 0;
                }
            }
        }
    }
}
