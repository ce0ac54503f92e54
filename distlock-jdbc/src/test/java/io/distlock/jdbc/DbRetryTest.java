package io.distlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLockException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

/**
 * What {@link Db} retries: a failure of the connection's settings query before any work ran (seen with H2 2.3's TCP
 * server, whose isolation query races other sessions' commits) is tried again; a failure of the work is not. An
 * embedded in-memory H2 database with one injected fault; no server.
 */
class DbRetryTest {
    private final AtomicInteger isolationFailures = new AtomicInteger();

    private DataSource dataSource() {
        JdbcDataSource h2 = new JdbcDataSource();
        h2.setURL("jdbc:h2:mem:dbretry;DB_CLOSE_DELAY=-1");
        return (DataSource)
                Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {DataSource.class}, (p, m, args) -> {
                    Object result = invoke(m, h2, args);
                    return m.getName().equals("getConnection") ? faulty((Connection) result) : result;
                });
    }

    private Connection faulty(Connection real) {
        return (Connection)
                Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class}, (p, m, args) -> {
                    if (m.getName().equals("getTransactionIsolation") && isolationFailures.getAndDecrement() > 0) {
                        throw new SQLException("General error: \"java.lang.NullPointerException\"", "HY000", 50000);
                    }
                    return invoke(m, real, args);
                });
    }

    private static Object invoke(java.lang.reflect.Method m, Object target, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    @Test
    void settingsQueryFailsBeforeTheWork_isRetried() {
        isolationFailures.set(2);
        Db db = new Db(dataSource(), Dialect.H2, "t");
        AtomicInteger runs = new AtomicInteger();
        Integer answer = db.transaction("probe", c -> runs.incrementAndGet());
        assertThat(answer).isEqualTo(1);
        assertThat(runs).as("the work ran once").hasValue(1);
        assertThat(isolationFailures.get())
                .as("both injected failures were met")
                .isNegative();
    }

    @Test
    void theWorkFails_isNotRetried() {
        Db db = new Db(dataSource(), Dialect.H2, "t");
        AtomicInteger runs = new AtomicInteger();
        assertThatThrownBy(() -> db.transaction("probe", c -> {
                    runs.incrementAndGet();
                    throw new SQLException("General error", "HY000", 50000);
                }))
                .isInstanceOf(DistributedLockException.class)
                .hasMessageContaining("probe failed");
        assertThat(runs).hasValue(1);
    }
}
