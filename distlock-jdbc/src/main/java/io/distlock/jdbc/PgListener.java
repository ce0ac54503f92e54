package io.distlock.jdbc;

import io.distlock.DistributedLockException;
import io.distlock.spi.OwnerId;
import io.distlock.spi.Subscription;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * One LISTEN connection per client, taken from the DataSource when the first waiter subscribes and kept until the
 * store closes. A daemon thread polls it with PGConnection.getNotifications(timeout) and calls the wake-ups registered
 * for the payload (the name's hash). Releases send NOTIFY in the same statement or transaction that ends the hold, so a
 * notification is delivered exactly when the release commits.
 *
 * subscribe() returns only once LISTEN is in force, so an attempt made after it cannot miss a release. When the
 * connection breaks, notifications sent meanwhile are lost: after LISTEN is back, every subscriber is woken to
 * re-check. Waiters also come back within the holder's remaining lease in any case.
 */
final class PgListener implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PgListener.class);
    private static final int POLL_MILLIS = 250;

    private final DataSource dataSource;
    private final String channel;
    private final String threadName;
    private final Map<String, List<Runnable>> subscribers = new ConcurrentHashMap<>();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition listening = lock.newCondition();
    private @Nullable Thread thread;
    private boolean active;
    private @Nullable SQLException lastFailure;
    private volatile boolean closed;

    PgListener(DataSource dataSource, String channel, String clientId) {
        this.dataSource = dataSource;
        this.channel = channel;
        this.threadName = "distlock-pg-listen-" + OwnerId.redact(clientId);
    }

    /** Sends NOTIFY {@code channel} with {@code payload} on {@code c}; delivered when its transaction commits. */
    static void send(Connection c, String channel, String payload) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_notify(?, ?)")) {
            ps.setString(1, channel);
            ps.setString(2, payload);
            ps.executeQuery().close();
        }
    }

    /** Registers a wake-up for a name's hash; LISTEN is in force when this returns. */
    Subscription subscribe(String hash, Runnable wakeUp) {
        awaitListening();
        List<Runnable> list = subscribers.computeIfAbsent(hash, h -> new CopyOnWriteArrayList<>());
        list.add(wakeUp);
        return () -> subscribers.computeIfPresent(hash, (h, l) -> {
            l.remove(wakeUp);
            return l.isEmpty() ? null : l;
        });
    }

    private void awaitListening() {
        lock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("the store is closed");
            }
            if (thread == null) {
                Thread t = new Thread(this::run, threadName);
                t.setDaemon(true);
                thread = t;
                t.start();
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            boolean interrupted = false;
            try {
                while (!active) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0 || closed) {
                        SQLException failure = lastFailure;
                        throw new DistributedLockException(
                                "could not LISTEN on channel " + channel + " within 10 s"
                                        + (failure == null ? "" : ": " + failure.getMessage()),
                                failure == null ? new SQLException("timeout") : failure);
                    }
                    try {
                        var unused = listening.awaitNanos(left);
                    } catch (InterruptedException e) {
                        interrupted = true; // bounded wait; the caller sees the interrupt right after
                    }
                }
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        } finally {
            lock.unlock();
        }
    }

    private void run() {
        long backoffMillis = 50;
        while (!closed) {
            try (Connection c = dataSource.getConnection()) {
                if (!c.getAutoCommit()) {
                    c.setAutoCommit(true);
                }
                try (Statement st = c.createStatement()) {
                    st.execute("LISTEN " + channel);
                }
                PGConnection pg = c.unwrap(PGConnection.class);
                setActive(true, null);
                wakeAll(); // anything sent while we were not listening is lost: everyone re-checks
                backoffMillis = 50;
                while (!closed) {
                    PGNotification[] batch = pg.getNotifications(POLL_MILLIS);
                    if (batch == null) {
                        continue;
                    }
                    for (PGNotification n : batch) {
                        List<Runnable> list = subscribers.get(n.getParameter());
                        if (list != null) {
                            for (Runnable r : list) {
                                runQuietly(r);
                            }
                        }
                    }
                }
                try (Statement st = c.createStatement()) {
                    st.execute("UNLISTEN " + channel); // the connection goes back to a pool
                }
            } catch (SQLException | RuntimeException e) {
                if (closed) {
                    break;
                }
                setActive(false, e instanceof SQLException s ? s : new SQLException(e));
                log.warn("distlock: LISTEN connection on {} failed; reconnecting", channel, e);
                try {
                    Thread.sleep(backoffMillis);
                } catch (InterruptedException ie) {
                    break;
                }
                backoffMillis = Math.min(2000, backoffMillis * 2);
            }
        }
        setActive(false, null);
    }

    private void setActive(boolean value, @Nullable SQLException failure) {
        lock.lock();
        try {
            active = value;
            if (failure != null) {
                lastFailure = failure;
            }
            listening.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private void wakeAll() {
        for (List<Runnable> list : subscribers.values()) {
            for (Runnable r : list) {
                runQuietly(r);
            }
        }
    }

    private static void runQuietly(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException e) {
            log.warn("distlock: a wake-up failed", e);
        }
    }

    @Override
    public void close() {
        Thread t;
        lock.lock();
        try {
            closed = true;
            t = thread;
            listening.signalAll();
        } finally {
            lock.unlock();
        }
        if (t != null) {
            try {
                t.join(TimeUnit.SECONDS.toMillis(2));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
