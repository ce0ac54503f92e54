package io.distlock.spring.boot;

import io.distlock.LockClient;
import io.distlock.redis.RedisLockClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.properties.bind.BindResult;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Redis, from the first of: {@code distlock.redis.uri}; a Lettuce {@link RedisClient} bean (used, never shut down);
 * Spring Boot's {@code spring.data.redis.*} settings (url, or host/port/database/username/password/ssl, or sentinel,
 * or cluster nodes). It counts as configured when one of them is set, or when the application has a Spring Data
 * {@code RedisConnectionFactory}.
 */
final class RedisBackend implements DistlockBackend {
    private static final String CONNECTION_FACTORY = "org.springframework.data.redis.connection.RedisConnectionFactory";

    private final DistlockProperties properties;
    private final Environment environment;
    private final ObjectProvider<RedisClient> redisClients;
    private final ObjectProvider<LockClientBuilderCustomizer<RedisLockClient.Builder>> customizers;
    private final ListableBeanFactory beans;

    RedisBackend(
            DistlockProperties properties,
            Environment environment,
            ObjectProvider<RedisClient> redisClients,
            ObjectProvider<LockClientBuilderCustomizer<RedisLockClient.Builder>> customizers,
            ListableBeanFactory beans) {
        this.properties = properties;
        this.environment = environment;
        this.redisClients = redisClients;
        this.customizers = customizers;
        this.beans = beans;
    }

    @Override
    public DistlockProperties.Backend id() {
        return DistlockProperties.Backend.REDIS;
    }

    @Override
    public @Nullable String configuredBy() {
        if (properties.getRedis().getUri() != null) {
            return "distlock.redis.uri";
        }
        if (redisClients.getIfUnique() != null) {
            return "a RedisClient bean";
        }
        if (bootProperties().isBound()) {
            return "spring.data.redis.*";
        }
        ClassLoader loader = RedisBackend.class.getClassLoader();
        if (ClassUtils.isPresent(CONNECTION_FACTORY, loader)
                && beans.getBeanNamesForType(ClassUtils.resolveClassName(CONNECTION_FACTORY, loader)).length > 0) {
            return "a RedisConnectionFactory bean";
        }
        return null;
    }

    private BindResult<SpringDataRedisSettings> bootProperties() {
        return Binder.get(environment).bind("spring.data.redis", SpringDataRedisSettings.class);
    }

    @Override
    public LockClient create() {
        RedisLockClient.Builder builder = RedisLockClient.builder();
        String uri = properties.getRedis().getUri();
        RedisClient client = redisClients.getIfUnique();
        if (uri != null) {
            builder.uri(uri);
        } else if (client != null) {
            builder.redisClient(client);
        } else {
            SpringDataRedisSettings boot = bootProperties().orElseGet(SpringDataRedisSettings::new);
            SpringDataRedisSettings.Cluster cluster = boot.getCluster();
            if (cluster != null && !cluster.getNodes().isEmpty()) {
                builder.cluster(clusterSeeds(boot, cluster.getNodes()));
            } else {
                builder.uri(uri(boot));
            }
        }
        builder.keyPrefix(properties.getRedis().getKeyPrefix());
        Duration commandTimeout = properties.getRedis().getCommandTimeout();
        if (commandTimeout != null) {
            builder.commandTimeout(commandTimeout);
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

    /** The standalone or Sentinel server of Boot's settings. */
    static RedisURI uri(SpringDataRedisSettings boot) {
        RedisURI uri;
        SpringDataRedisSettings.Sentinel sentinel = boot.getSentinel();
        if (boot.getUrl() != null && !boot.getUrl().isBlank()) {
            uri = RedisURI.create(boot.getUrl());
        } else if (sentinel != null && sentinel.getMaster() != null) {
            RedisURI.Builder b = RedisURI.builder().withSentinelMasterId(sentinel.getMaster());
            for (String node : sentinel.getNodes()) {
                HostPort hp = HostPort.parse(node, 26379);
                if (sentinel.getPassword() == null) {
                    b.withSentinel(hp.host, hp.port);
                } else {
                    b.withSentinel(hp.host, hp.port, sentinel.getPassword());
                }
            }
            uri = b.build();
            credentials(uri, boot);
        } else {
            uri = RedisURI.builder()
                    .withHost(boot.getHost())
                    .withPort(boot.getPort())
                    .build();
            credentials(uri, boot);
            uri.setSsl(boot.getSsl().isEnabled());
        }
        if (boot.getUrl() == null || boot.getUrl().isBlank()) {
            uri.setDatabase(boot.getDatabase());
        }
        if (boot.getTimeout() != null) {
            uri.setTimeout(boot.getTimeout());
        }
        if (boot.getClientName() != null) {
            uri.setClientName(boot.getClientName());
        }
        return uri;
    }

    private static void credentials(RedisURI uri, SpringDataRedisSettings boot) {
        if (boot.getUsername() != null) {
            uri.setUsername(boot.getUsername());
        }
        if (boot.getPassword() != null) {
            uri.setPassword(boot.getPassword().toCharArray());
        }
    }

    /** Cluster seeds as URIs, with Boot's credentials and TLS. */
    static String[] clusterSeeds(SpringDataRedisSettings boot, List<String> nodes) {
        String scheme = boot.getSsl().isEnabled() ? "rediss://" : "redis://";
        String userInfo = "";
        if (boot.getPassword() != null) {
            userInfo = (boot.getUsername() == null ? "" : encode(boot.getUsername())) + ":" + encode(boot.getPassword())
                    + "@";
        }
        String[] seeds = new String[nodes.size()];
        for (int i = 0; i < seeds.length; i++) {
            HostPort hp = HostPort.parse(nodes.get(i), 6379);
            seeds[i] = scheme + userInfo + hp.host + ":" + hp.port;
        }
        return seeds;
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private static final class HostPort {
        final String host;
        final int port;

        private HostPort(String host, int port) {
            this.host = host;
            this.port = port;
        }

        static HostPort parse(String node, int defaultPort) {
            int colon = node.lastIndexOf(':');
            if (colon < 0 || node.endsWith("]")) {
                return new HostPort(node, defaultPort);
            }
            String host = node.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            try {
                return new HostPort(host, Integer.parseInt(node.substring(colon + 1)));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not a host:port Redis node: '" + node + "'", e);
            }
        }
    }
}
