package io.distlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedLock;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Mode ROW_LOCK on PostgreSQL with a DataSource that hands every caller the same physical connection (as Spring's
 * {@code SingleConnectionDataSource} with suppressClose, or a {@code TransactionAwareDataSourceProxy} inside a
 * transaction): the hold's open transaction would then also be the one the client's other statements run in, and a
 * renewal's {@code setAutoCommit(true)} would commit it while the session, still alive, keeps the hold "held". The
 * client refuses to use a hold's pinned connection for anything else, so the renewal fails and the hold is reported
 * lost at the end of its lease. Checked: the holder never believes it holds while another client has the lock.
 */
class SharedConnectionPostgresIT {
    static TestDatabase.Env env;
    static Connection physical;

    @BeforeAll
    static void start() throws SQLException {
        env = TestDatabase.POSTGRESQL.start(SharedConnectionPostgresIT.class);
        physical = DriverManager.getConnection(env.url, env.user, env.password);
    }

    @AfterAll
    static void stop() throws SQLException {
        physical.close();
        env.close();
    }

    /** A DataSource that returns {@link #physical} each time, its close() a no-op. */
    static DataSource sameConnection() {
        Connection shared = (Connection) Proxy.newProxyInstance(
                Connection.class.getClassLoader(), new Class<?>[] {Connection.class}, (proxy, m, args) -> {
                    if (m.getName().equals("close")) {
                        return null;
                    }
                    try {
                        return m.invoke(physical, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        return new DataSource() {
            @Override
            public Connection getConnection() {
                return shared;
            }

            @Override
            public Connection getConnection(String u, String p) {
                return shared;
            }

            @Override
            public PrintWriter getLogWriter() {
                return new PrintWriter(System.err);
            }

            @Override
            public void setLogWriter(PrintWriter out) {}

            @Override
            public void setLoginTimeout(int seconds) {}

            @Override
            public int getLoginTimeout() {
                return 0;
            }

            @Override
            public Logger getParentLogger() throws SQLFeatureNotSupportedException {
                throw new SQLFeatureNotSupportedException();
            }

            @Override
            public <T> T unwrap(Class<T> iface) throws SQLException {
                throw new SQLException("not a wrapper");
            }

            @Override
            public boolean isWrapperFor(Class<?> iface) {
                return false;
            }
        };
    }

    @Test
    void aHoldOnASharedConnectionIsNotLostSilently() throws Exception {
        try (JdbcLockClient a = JdbcLockClient.builder()
                        .dataSource(sameConnection())
                        .tableName(env.table)
                        .mode(JdbcLockClient.Mode.ROW_LOCK)
                        .leaseTime(Duration.ofMillis(600))
                        .createSchemaIfMissing()
                        .clientId("a")
                        .build();
                JdbcLockClient b = JdbcLockClient.builder()
                        .dataSource(env.pool)
                        .tableName(env.table)
                        .mode(JdbcLockClient.Mode.ROW_LOCK)
                        .createSchemaIfMissing()
                        .clientId("b")
                        .build()) {
            DistributedLock la = a.lock("k");
            boolean aGot;
            try {
                aGot = la.tryLock();
            } catch (RuntimeException e) {
                aGot = false; // refusing the shared connection is a correct answer
            }
            if (!aGot) {
                return;
            }
            Thread.sleep(2_000); // a few renewals
            boolean aHeld = la.isHeldByCurrentThread();
            DistributedLock lb = b.lock("k");
            boolean bGot = lb.tryLock();
            System.out.println("SHARED a held in its view: " + aHeld + ", b acquired: " + bGot);
            if (bGot) {
                lb.unlock();
            }
            assertThat(aHeld && bGot)
                    .as("a believes it holds 'k' while b acquired it")
                    .isFalse();
        }
    }
}
