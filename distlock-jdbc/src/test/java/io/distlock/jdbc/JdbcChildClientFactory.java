package io.distlock.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import io.distlock.DistributedLock;
import io.distlock.LockAdmin;
import io.distlock.LockClient;
import io.distlock.testkit.ClientFactory;

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
        return new LockClient() {
            @Override
            public DistributedLock lock(String name) {
                return client.lock(name);
            }

            @Override
            public DistributedLock fairLock(String name) {
                return client.fairLock(name);
            }

            @Override
            public String clientId() {
                return client.clientId();
            }

            @Override
            public LockAdmin admin() {
                return client.admin();
            }

            @Override
            public void close() {
                try {
                    client.close();
                } finally {
                    pool.close();
                }
            }
        };
    }
}
