package io.distlock.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import io.distlock.LockClient;
import io.distlock.testkit.ClientFactory;
import io.distlock.testkit.ForwardingLockClient;

/**
 * Makes a client in a child JVM for the multi-process contracts, from "url \n user \n password \n table \n mode"; the
 * client owns its own pool, as a separate process would.
 */
public final class JdbcChildClientFactory implements ClientFactory {
    @Override
    public LockClient create(String argument) {
        String[] parts = argument.split("\n", -1);
        HikariDataSource pool = TestDatabase.pool(parts[0], parts[1], parts[2], 12);
        JdbcLockClient client = JdbcLockClient.builder()
                .dataSource(pool)
                .tableName(parts[3])
                .mode(JdbcLockClient.Mode.valueOf(parts[4]))
                .build();
        return new ForwardingLockClient(client) {
            @Override
            public void close() {
                try {
                    super.close();
                } finally {
                    pool.close();
                }
            }
        };
    }
}
