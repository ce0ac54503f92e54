package io.distlock.spring.boot;

import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.core.Ordered;

/** The {@code distlock.*} properties. */
@ConfigurationProperties("distlock")
public class DistlockProperties {

    /** The backends the starter can configure. */
    public enum Backend {
        REDIS,
        JDBC,
        ZOOKEEPER,
        ETCD,
        /** The in-process client of distlock-testkit, for tests: locks shared by the contexts of one JVM only. */
        IN_MEMORY
    }

    /** Whether to configure a LockClient and the annotation support. */
    private boolean enabled = true;

    /**
     * The backend to use; by default the one whose module is on the class path and whose connection is configured,
     * and it must be only one.
     */
    private @Nullable Backend backend;

    /** The watchdog lease of holds without a fixed lease; the backend's default (30 s) when unset. */
    private @Nullable Duration leaseTime;

    /** The client's identity in the store; a random id with the process id when unset. */
    private @Nullable String clientId;

    /** How many acquires of the client may wait at once; the backend's default (10,000) when unset. */
    private @Nullable Integer maxWaiters;

    private final Redis redis = new Redis();
    private final Jdbc jdbc = new Jdbc();
    private final ZooKeeper zookeeper = new ZooKeeper();
    private final Etcd etcd = new Etcd();
    private final Annotation annotation = new Annotation();
    private final Actuator actuator = new Actuator();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public @Nullable Backend getBackend() {
        return backend;
    }

    public void setBackend(@Nullable Backend backend) {
        this.backend = backend;
    }

    public @Nullable Duration getLeaseTime() {
        return leaseTime;
    }

    public void setLeaseTime(@Nullable Duration leaseTime) {
        this.leaseTime = leaseTime;
    }

    public @Nullable String getClientId() {
        return clientId;
    }

    public void setClientId(@Nullable String clientId) {
        this.clientId = clientId;
    }

    public @Nullable Integer getMaxWaiters() {
        return maxWaiters;
    }

    public void setMaxWaiters(@Nullable Integer maxWaiters) {
        this.maxWaiters = maxWaiters;
    }

    public Redis getRedis() {
        return redis;
    }

    public Jdbc getJdbc() {
        return jdbc;
    }

    public ZooKeeper getZookeeper() {
        return zookeeper;
    }

    public Etcd getEtcd() {
        return etcd;
    }

    public Annotation getAnnotation() {
        return annotation;
    }

    public Actuator getActuator() {
        return actuator;
    }

    /** Redis: a URI of its own, or else a Lettuce {@code RedisClient} bean, or else {@code spring.data.redis.*}. */
    public static class Redis {
        /** The server (redis://, rediss://, redis-sentinel://); wins over the application's Redis settings. */
        private @Nullable String uri;

        /** The prefix of every key the client writes. */
        private String keyPrefix = "distlock:";

        /**
         * How long any one Redis command may take before its call fails; unset: the watchdog's renewal interval, at
         * least 1 s (see RedisLockClient.Builder#commandTimeout).
         */
        private @Nullable Duration commandTimeout;

        public @Nullable String getUri() {
            return uri;
        }

        public void setUri(@Nullable String uri) {
            this.uri = uri;
        }

        public String getKeyPrefix() {
            return keyPrefix;
        }

        public void setKeyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
        }

        public @Nullable Duration getCommandTimeout() {
            return commandTimeout;
        }

        public void setCommandTimeout(@Nullable Duration commandTimeout) {
            this.commandTimeout = commandTimeout;
        }
    }

    /** JDBC, on the application's DataSource. */
    public static class Jdbc {
        /** The prefix of the lock tables. */
        private String tableName = "distlock";

        /** How holds are kept: TABLE, ROW_LOCK or ADVISORY. */
        private String mode = "TABLE";

        /** The dialect (postgresql, mariadb, mysql, h2); detected when unset. */
        private @Nullable String dialect;

        /** Whether to create the lock tables when they are missing. */
        private boolean createSchema = true;

        public String getTableName() {
            return tableName;
        }

        public void setTableName(String tableName) {
            this.tableName = tableName;
        }

        public String getMode() {
            return mode;
        }

        public void setMode(String mode) {
            this.mode = mode;
        }

        public @Nullable String getDialect() {
            return dialect;
        }

        public void setDialect(@Nullable String dialect) {
            this.dialect = dialect;
        }

        public boolean isCreateSchema() {
            return createSchema;
        }

        public void setCreateSchema(boolean createSchema) {
            this.createSchema = createSchema;
        }
    }

    /** ZooKeeper: a CuratorFramework bean, or else a connect string. */
    public static class ZooKeeper {
        /** The ensemble, host:port[,host:port][/chroot]. */
        private @Nullable String connectString;

        /** The node under which lock nodes live. */
        private String rootPath = "/distlock";

        /** The session timeout asked for. */
        private Duration sessionTimeout = Duration.ofSeconds(30);

        /** How long an operation waits for a connection. */
        private Duration connectionTimeout = Duration.ofSeconds(10);

        public @Nullable String getConnectString() {
            return connectString;
        }

        public void setConnectString(@Nullable String connectString) {
            this.connectString = connectString;
        }

        public String getRootPath() {
            return rootPath;
        }

        public void setRootPath(String rootPath) {
            this.rootPath = rootPath;
        }

        public Duration getSessionTimeout() {
            return sessionTimeout;
        }

        public void setSessionTimeout(Duration sessionTimeout) {
            this.sessionTimeout = sessionTimeout;
        }

        public Duration getConnectionTimeout() {
            return connectionTimeout;
        }

        public void setConnectionTimeout(Duration connectionTimeout) {
            this.connectionTimeout = connectionTimeout;
        }
    }

    /** etcd: a jetcd Client bean, or else endpoints. */
    public static class Etcd {
        /** Comma-separated http(s)://host:port endpoints. */
        private @Nullable String endpoints;

        /** The prefix of every key the client writes. */
        private String namespace = "distlock/";

        /** How long one request may take. */
        private Duration requestTimeout = Duration.ofSeconds(5);

        /** The user, for a cluster with authentication. */
        private @Nullable String user;

        /** The user's password. */
        private @Nullable String password;

        public @Nullable String getEndpoints() {
            return endpoints;
        }

        public void setEndpoints(@Nullable String endpoints) {
            this.endpoints = endpoints;
        }

        public String getNamespace() {
            return namespace;
        }

        public void setNamespace(String namespace) {
            this.namespace = namespace;
        }

        public Duration getRequestTimeout() {
            return requestTimeout;
        }

        public void setRequestTimeout(Duration requestTimeout) {
            this.requestTimeout = requestTimeout;
        }

        public @Nullable String getUser() {
            return user;
        }

        public void setUser(@Nullable String user) {
            this.user = user;
        }

        public @Nullable String getPassword() {
            return password;
        }

        public void setPassword(@Nullable String password) {
            this.password = password;
        }
    }

    /** {@code @DistributedLock}. */
    public static class Annotation {
        /** Whether {@code @DistributedLock} methods are advised. */
        private boolean enabled = true;

        /** The wait of annotations without a waitTime; unset waits as long as it takes. */
        private @Nullable Duration waitTime;

        /**
         * Whether a lock taken inside a transaction is released after the transaction completes rather than when
         * the method returns.
         */
        private boolean transactionAware = true;

        /**
         * The order of the advice; by default just before the transaction advice, so the lock is taken before the
         * transaction begins.
         */
        private int order = Ordered.LOWEST_PRECEDENCE - 100;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public @Nullable Duration getWaitTime() {
            return waitTime;
        }

        public void setWaitTime(@Nullable Duration waitTime) {
            this.waitTime = waitTime;
        }

        public boolean isTransactionAware() {
            return transactionAware;
        }

        public void setTransactionAware(boolean transactionAware) {
            this.transactionAware = transactionAware;
        }

        public int getOrder() {
            return order;
        }

        public void setOrder(int order) {
            this.order = order;
        }
    }

    /** The actuator endpoint. */
    public static class Actuator {
        /** Whether DELETE /actuator/distlock/{name} may force-unlock a lock, whoever holds it. */
        private boolean forceUnlockEnabled;

        public boolean isForceUnlockEnabled() {
            return forceUnlockEnabled;
        }

        public void setForceUnlockEnabled(boolean forceUnlockEnabled) {
            this.forceUnlockEnabled = forceUnlockEnabled;
        }
    }
}
