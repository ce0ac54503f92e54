package io.distlock.spring.boot;

/**
 * Adjusts the builder of the auto-configured client before it is built, after the {@code distlock.*} properties
 * were applied. The type argument chooses the backend: {@code LockClientBuilderCustomizer<RedisLockClient.Builder>}
 * applies to Redis only, and so on for {@code JdbcLockClient.Builder}, {@code ZooKeeperLockClient.Builder}, {@code
 * EtcdLockClient.Builder} and {@code InMemoryLockClient.Builder}.
 *
 * <pre>{@code
 * @Bean
 * LockClientBuilderCustomizer<RedisLockClient.Builder> replicaAcks() {
 *     return builder -> builder.replicaAcks(1, Duration.ofMillis(200));
 * }
 * }</pre>
 *
 * @param <B> the builder type
 */
@FunctionalInterface
public interface LockClientBuilderCustomizer<B> {

    /** Changes the builder. */
    void customize(B builder);
}
