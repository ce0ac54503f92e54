package io.distlock.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * A DataSource over a real one whose connections can lose the answer of one commit: once {@link #loseNext()} was
 * called, the next {@code commit()} runs on the real connection and then fails with a transient error (SQLState
 * 08006), as a connection reset after the commit was sent does.
 */
final class LostCommitAnswers {
    private final AtomicBoolean loseNext = new AtomicBoolean();
    private final AtomicInteger lost = new AtomicInteger();
    final DataSource dataSource;

    LostCommitAnswers(DataSource real) {
        this.dataSource = (DataSource)
                Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {DataSource.class}, (p, m, args) -> {
                    Object result = invoke(m, real, args);
                    return m.getName().equals("getConnection") ? faulty((Connection) result) : result;
                });
    }

    /** The next commit of any connection loses its answer. */
    void loseNext() {
        loseNext.set(true);
    }

    /** How many commit answers were lost. */
    int lost() {
        return lost.get();
    }

    private Connection faulty(Connection real) {
        return (Connection)
                Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class}, (p, m, args) -> {
                    Object result = invoke(m, real, args);
                    if (m.getName().equals("commit") && loseNext.compareAndSet(true, false)) {
                        lost.incrementAndGet();
                        throw new SQLException("connection reset after the commit was sent", "08006");
                    }
                    return result;
                });
    }

    private static Object invoke(Method m, Object target, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
