package io.distlock.jdbc;

import io.distlock.DistributedLockException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;

/**
 * The connection discipline of every store: a pooled connection per operation, READ COMMITTED transactions, and a
 * short bounded retry of transient failures (deadlock victim, serialization failure, lock wait timeout, lost
 * connection). Work passed to {@link #transaction} must be safe to run again from the start; every store operation
 * is, because each is owner-checked and a grant found already made for the same owner is simply taken again.
 */
final class Db {
    static final int ATTEMPTS = 5;
    private static final long RETRY_BASE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    /** The drivers' own connection types on the class path, which a pool's or a framework's wrapper unwraps to. */
    private static final List<Class<?>> DRIVER_CONNECTIONS = driverConnections();

    final DataSource dataSource;
    final Dialect dialect;
    final String table;
    /** The database clock in epoch milliseconds, as a SQL expression. */
    final String now;
    /** The driver connections that holds have pinned now (session modes), by identity; see {@link #pinned}. */
    private final Map<Object, Boolean> pinnedConnections = Collections.synchronizedMap(new IdentityHashMap<>());

    Db(DataSource dataSource, Dialect dialect, String table) {
        this.dataSource = dataSource;
        this.dialect = dialect;
        this.table = table;
        this.now = dialect.nowMillis();
    }

    interface Work<T> {
        T run(Connection c) throws SQLException;
    }

    /** Runs {@code work} in one READ COMMITTED transaction, retrying transient failures a few times. */
    <T> T transaction(String what, Work<T> work) {
        return retrying(what, () -> {
            try (Connection c = connection()) {
                int isolation;
                boolean autoCommit;
                try {
                    isolation = c.getTransactionIsolation();
                    autoCommit = c.getAutoCommit();
                } catch (SQLException e) {
                    throw new BeforeWork(e);
                }
                boolean setIsolation = isolation != Connection.TRANSACTION_READ_COMMITTED;
                try {
                    if (setIsolation) {
                        c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
                    }
                    c.setAutoCommit(false);
                    T result = work.run(c);
                    c.commit();
                    return result;
                } catch (SQLException | RuntimeException e) {
                    rollbackQuietly(c, e);
                    throw e;
                } finally {
                    restore(c, autoCommit, setIsolation ? isolation : -1);
                }
            }
        });
    }

    /** Runs {@code work} on a connection in auto-commit mode, retrying transient failures a few times. */
    <T> T autocommit(String what, Work<T> work) {
        return retrying(what, () -> {
            try (Connection c = connection()) {
                if (!c.getAutoCommit()) {
                    c.setAutoCommit(true);
                }
                return work.run(c);
            }
        });
    }

    private interface Once<T> {
        T run() throws SQLException;
    }

    private <T> T retrying(String what, Once<T> once) {
        SQLException last = null;
        boolean interrupted = false;
        try {
            for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
                try {
                    return once.run();
                } catch (SQLException e) {
                    // a pool's getConnection answers an interrupt with an SQLException; store steps are short and
                    // must complete, so the step is retried and the caller sees the interrupt afterwards
                    boolean byInterrupt = Thread.interrupted();
                    interrupted |= byInterrupt;
                    if (e instanceof BeforeWork before) {
                        e = before.cause; // nothing was done yet: safe to try again
                    } else if (!byInterrupt && !Dialect.isTransient(e)) {
                        throw failure(what, e);
                    }
                    if (last != null) {
                        e.addSuppressed(last);
                    }
                    last = e;
                    long ceiling = RETRY_BASE_NANOS << attempt;
                    LockSupport.parkNanos(ThreadLocalRandom.current().nextLong(ceiling / 2, ceiling + 1));
                }
            }
            throw failure(what + " (after " + ATTEMPTS + " attempts)", Objects.requireNonNull(last));
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * A failure of a connection's settings query before any work ran, so retrying cannot repeat anything. Seen with H2
     * 2.3's TCP server: its {@code getTransactionIsolation()} reads INFORMATION_SCHEMA.SESSIONS, which races other
     * sessions' commits ("NullPointerException ... this.transaction is null", general error 50000).
     */
    private static final class BeforeWork extends SQLException {
        private static final long serialVersionUID = 1L;
        final SQLException cause;

        BeforeWork(SQLException cause) {
            super(cause.getMessage(), cause.getSQLState(), cause.getErrorCode(), cause);
            this.cause = cause;
        }
    }

    /**
     * A connection from the pool, even if the calling thread is interrupted (the interrupt is kept). Refused when the
     * DataSource hands out the driver connection of a hold (see {@link #pinned}).
     */
    Connection connection() throws SQLException {
        boolean interrupted = false;
        try {
            for (int attempt = 1; ; attempt++) {
                try {
                    Connection c = dataSource.getConnection();
                    if (!pinnedConnections.isEmpty() && pinnedConnections.containsKey(driverConnection(c))) {
                        // not closed: closing a connection the DataSource shares may end the hold's session
                        throw new SQLException(
                                "the DataSource handed out the connection that a hold of this client has pinned:"
                                        + " modes ROW_LOCK and ADVISORY need a DataSource that gives each caller a"
                                        + " connection of its own (a pool), not one that shares a connection"
                                        + " (SingleConnectionDataSource, TransactionAwareDataSourceProxy in a"
                                        + " transaction); refused rather than run on the hold's session",
                                "55000");
                    }
                    return c;
                } catch (SQLException e) {
                    if (!Thread.interrupted() || attempt >= ATTEMPTS) {
                        throw e;
                    }
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Marks {@code c} as a hold's pinned connection and returns the key to unpin it with: until {@link #unpinned},
     * {@link #connection()} refuses it. A DataSource that hands it out again (one connection shared by every caller)
     * would otherwise run the client's other statements on the hold's session, where a renewal's {@code
     * setAutoCommit(true)} commits the transaction that is a ROW_LOCK hold while the session, still alive, keeps the
     * hold "held".
     */
    Object pinned(Connection c) {
        Object driver = driverConnection(c);
        pinnedConnections.put(driver, Boolean.TRUE);
        return driver;
    }

    /** Ends {@link #pinned}: {@code driver} is what it returned (a closed wrapper may no longer unwrap). */
    void unpinned(Object driver) {
        pinnedConnections.remove(driver);
    }

    /** The driver's own connection under any wrappers (a pool's, a framework's), or {@code c} if none is known. */
    private static Object driverConnection(Connection c) {
        for (Class<?> type : DRIVER_CONNECTIONS) {
            try {
                if (c.isWrapperFor(type)) {
                    return c.unwrap(type);
                }
            } catch (SQLException | RuntimeException e) {
                // not this driver's
            }
        }
        return c;
    }

    private static List<Class<?>> driverConnections() {
        List<Class<?>> types = new ArrayList<>();
        for (String name : List.of(
                "org.postgresql.PGConnection", "org.mariadb.jdbc.Connection", "com.mysql.cj.jdbc.JdbcConnection")) {
            try {
                types.add(Class.forName(name, false, Db.class.getClassLoader()));
            } catch (ClassNotFoundException | LinkageError e) {
                // that driver is not on the class path
            }
        }
        return List.copyOf(types);
    }

    static DistributedLockException failure(String what, SQLException e) {
        return new DistributedLockException(
                what + " failed: " + e.getMessage() + " [SQLState " + e.getSQLState() + ", code " + e.getErrorCode()
                        + "]",
                e);
    }

    static void rollbackQuietly(Connection c, Throwable cause) {
        try {
            c.rollback();
        } catch (SQLException e) {
            cause.addSuppressed(e);
        }
    }

    /** Gives {@code c} back its settings; {@code isolation} -1 when it was not changed (PostgreSQL's driver asks the
     * server for the isolation level, a round trip saved on every transaction). */
    private static void restore(Connection c, boolean autoCommit, int isolation) {
        try {
            c.setAutoCommit(autoCommit);
            if (isolation != -1) {
                c.setTransactionIsolation(isolation);
            }
        } catch (SQLException e) {
            // the connection is broken; the pool discards it
        }
    }

    /** A lease as whole milliseconds, rounded up and capped so that "now + lease" cannot overflow a BIGINT. */
    static long leaseMillis(Duration lease) {
        long ms;
        try {
            ms = lease.plusNanos(999_999).toMillis();
        } catch (ArithmeticException e) {
            ms = Long.MAX_VALUE;
        }
        return Math.min(Math.max(ms, 1), TimeUnit.DAYS.toMillis(365L * 1000));
    }
}
