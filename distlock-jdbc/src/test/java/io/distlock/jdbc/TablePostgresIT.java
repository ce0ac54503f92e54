package io.distlock.jdbc;

import io.distlock.LockClient;
import io.distlock.testkit.AllLockContracts;
import io.distlock.testkit.AsyncContract;
import io.distlock.testkit.MultiProcessContract;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.SQLException;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;

/**
 * Every contract, also across processes, mode TABLE on POSTGRESQL, as a user holding only the grants
 * docs/backends/jdbc.md lists for the mode.
 */
class TablePostgresIT extends GrantsFixture implements AllLockContracts, MultiProcessContract, AsyncContract {
    @Override
    TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }

    @Override
    JdbcLockClient.Mode mode() {
        return JdbcLockClient.Mode.TABLE;
    }

    /**
     * A client whose data source stops giving connections once the client is built (building reads the dialect): each
     * store call fails with a connection error, as with a database that went away.
     */
    @Override
    public Optional<LockClient> createUnreachableClient() {
        DataSource real = clientDataSource();
        AtomicBoolean down = new AtomicBoolean();
        DataSource failing = (DataSource) Proxy.newProxyInstance(
                DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    if (down.get() && method.getName().equals("getConnection")) {
                        throw new SQLException("connection refused: the database is unreachable", "08001");
                    }
                    try {
                        return method.invoke(real, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        LockClient client = JdbcLockClient.builder()
                .dataSource(failing)
                .tableName(env().table)
                .mode(mode())
                .build();
        down.set(true);
        return Optional.of(client);
    }
}
