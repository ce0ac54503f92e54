package io.distlock.spring.boot;

import io.distlock.LockClient;
import io.distlock.jdbc.JdbcLockClient;
import java.util.Locale;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;

/**
 * JDBC, on the application's {@link DataSource} bean (the unique one, or the primary one). The lock client takes its
 * own connections from it, outside the application's transactions, and never closes it.
 */
final class JdbcBackend implements DistlockBackend {
    private final DistlockProperties properties;
    private final ObjectProvider<DataSource> dataSources;
    private final ObjectProvider<LockClientBuilderCustomizer<JdbcLockClient.Builder>> customizers;

    JdbcBackend(
            DistlockProperties properties,
            ObjectProvider<DataSource> dataSources,
            ObjectProvider<LockClientBuilderCustomizer<JdbcLockClient.Builder>> customizers) {
        this.properties = properties;
        this.dataSources = dataSources;
        this.customizers = customizers;
    }

    @Override
    public DistlockProperties.Backend id() {
        return DistlockProperties.Backend.JDBC;
    }

    @Override
    public @Nullable String configuredBy() {
        return dataSources.getIfUnique() != null ? "a DataSource bean" : null;
    }

    @Override
    public LockClient create() {
        DataSource dataSource = dataSources.getIfUnique();
        if (dataSource == null) {
            throw new IllegalStateException("distlock.backend=jdbc needs one DataSource bean (or a primary one)");
        }
        DistlockProperties.Jdbc jdbc = properties.getJdbc();
        JdbcLockClient.Builder builder = JdbcLockClient.builder()
                .dataSource(dataSource)
                .tableName(jdbc.getTableName())
                .mode(mode(jdbc.getMode()));
        if (jdbc.getDialect() != null) {
            builder.dialect(jdbc.getDialect());
        }
        if (jdbc.isCreateSchema()) {
            builder.createSchemaIfMissing();
        }
        if (properties.getLeaseTime() != null) {
            builder.leaseTime(properties.getLeaseTime());
        }
        if (properties.getClientId() != null) {
            builder.clientId(properties.getClientId());
        }
        if (properties.getMaxWaiters() != null) {
            builder.maxWaiters(properties.getMaxWaiters());
        }
        customizers.orderedStream().forEach(c -> c.customize(builder));
        return builder.build();
    }

    private static JdbcLockClient.Mode mode(String value) {
        try {
            return JdbcLockClient.Mode.valueOf(
                    value.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "distlock.jdbc.mode must be table, row-lock or advisory: '" + value + "'", e);
        }
    }
}
