package io.distlock.spring.boot;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The {@code spring.data.redis.*} settings that the Redis backend reads, bound by distlock itself. Spring Boot's own
 * holder of them moved with Boot 4 ({@code org.springframework.boot.autoconfigure.data.redis.RedisProperties} in 3.x,
 * {@code org.springframework.boot.data.redis.autoconfigure.DataRedisProperties} in 4.x, in a module an application
 * need not have); the names and defaults of the settings did not change, so one class reads them on both.
 */
final class SpringDataRedisSettings {
    private @Nullable String url;
    private String host = "localhost";
    private int port = 6379;
    private int database;
    private @Nullable String username;
    private @Nullable String password;
    private @Nullable Duration timeout;
    private @Nullable String clientName;
    private final Ssl ssl = new Ssl();
    private @Nullable Sentinel sentinel;
    private @Nullable Cluster cluster;

    public @Nullable String getUrl() {
        return url;
    }

    public void setUrl(@Nullable String url) {
        this.url = url;
    }

    public String getHost() {
        return host;
    }

    public void setHost(String host) {
        this.host = host;
    }

    public int getPort() {
        return port;
    }

    public void setPort(int port) {
        this.port = port;
    }

    public int getDatabase() {
        return database;
    }

    public void setDatabase(int database) {
        this.database = database;
    }

    public @Nullable String getUsername() {
        return username;
    }

    public void setUsername(@Nullable String username) {
        this.username = username;
    }

    public @Nullable String getPassword() {
        return password;
    }

    public void setPassword(@Nullable String password) {
        this.password = password;
    }

    public @Nullable Duration getTimeout() {
        return timeout;
    }

    public void setTimeout(@Nullable Duration timeout) {
        this.timeout = timeout;
    }

    public @Nullable String getClientName() {
        return clientName;
    }

    public void setClientName(@Nullable String clientName) {
        this.clientName = clientName;
    }

    public Ssl getSsl() {
        return ssl;
    }

    public @Nullable Sentinel getSentinel() {
        return sentinel;
    }

    public void setSentinel(@Nullable Sentinel sentinel) {
        this.sentinel = sentinel;
    }

    public @Nullable Cluster getCluster() {
        return cluster;
    }

    public void setCluster(@Nullable Cluster cluster) {
        this.cluster = cluster;
    }

    /** {@code ssl.enabled}, or on when an SSL bundle is named (as in Boot). */
    public static final class Ssl {
        private @Nullable Boolean enabled;
        private @Nullable String bundle;

        public boolean isEnabled() {
            return enabled != null ? enabled : bundle != null;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public @Nullable String getBundle() {
            return bundle;
        }

        public void setBundle(@Nullable String bundle) {
            this.bundle = bundle;
        }
    }

    public static final class Sentinel {
        private @Nullable String master;
        private List<String> nodes = new ArrayList<>();
        private @Nullable String password;

        public @Nullable String getMaster() {
            return master;
        }

        public void setMaster(@Nullable String master) {
            this.master = master;
        }

        public List<String> getNodes() {
            return nodes;
        }

        public void setNodes(List<String> nodes) {
            this.nodes = nodes;
        }

        public @Nullable String getPassword() {
            return password;
        }

        public void setPassword(@Nullable String password) {
            this.password = password;
        }
    }

    public static final class Cluster {
        private List<String> nodes = new ArrayList<>();

        public List<String> getNodes() {
            return nodes;
        }

        public void setNodes(List<String> nodes) {
            this.nodes = nodes;
        }
    }
}
