package io.distlock.cli;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.distlock.LockClient;
import io.distlock.etcd.EtcdLockClient;
import io.distlock.jdbc.JdbcLockClient;
import io.distlock.redis.RedisLockClient;
import io.distlock.zookeeper.ZooKeeperLockClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * An opened backend: the lock client, and on demand the demo's {@link SharedCounter} in the same store. Closing it
 * closes everything it opened, the lock client first.
 */
final class Backend implements AutoCloseable {
    private final BackendSpec spec;
    private final LockClient client;
    private final @Nullable HikariDataSource dataSource;
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private @Nullable SharedCounter counter;
    private boolean embedded;

    private Backend(BackendSpec spec, LockClient client, @Nullable HikariDataSource dataSource) {
        this.spec = spec;
        this.client = client;
        this.dataSource = dataSource;
    }

    /**
     * Connects to a backend that is not the embedded default.
     *
     * @param poolSize the most JDBC connections to open (ignored by the other backends)
     * @param createSchema whether to create the JDBC lock tables when missing
     * @throws IllegalArgumentException if the URI is malformed for its backend
     * @throws BackendUnreachableException if the backend cannot be reached
     */
    static Backend open(BackendSpec spec, int poolSize, boolean createSchema) {
        try {
            return switch (spec.kind()) {
                case JDBC -> openJdbc(spec, poolSize, createSchema);
                case REDIS -> new Backend(spec, RedisLockClient.create(spec.uri()), null);
                case ZOOKEEPER -> {
                    ZooKeeperLockClient.Builder b = ZooKeeperLockClient.builder()
                            .connectString(spec.zooKeeperConnectString())
                            .connectionTimeout(Duration.ofSeconds(5));
                    String root = spec.zooKeeperRoot();
                    if (root != null) {
                        b.rootPath(root);
                    }
                    yield new Backend(spec, b.build(), null);
                }
                case ETCD ->
                    new Backend(
                            spec,
                            EtcdLockClient.builder()
                                    .endpoints(spec.etcdEndpoints())
                                    .build(),
                            null);
                case EMBEDDED_H2 -> throw new IllegalStateException("start the embedded server first");
            };
        } catch (IllegalArgumentException | IllegalStateException | BackendUnreachableException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new BackendUnreachableException("cannot reach " + spec.display() + ": " + rootMessage(e), e);
        }
    }

    /**
     * Like {@link #open}, and for the embedded default first starts an H2 TCP server on a free loopback port, which
     * closes with the backend. Creates the JDBC lock tables when missing.
     */
    static Backend openForRun(BackendSpec spec, int poolSize) {
        if (spec.kind() != BackendSpec.Kind.EMBEDDED_H2) {
            return open(spec, poolSize, true);
        }
        EmbeddedH2 h2 = EmbeddedH2.start("distlock");
        try {
            Backend b = open(BackendSpec.parse(h2.url(), null, null, spec.table()), poolSize, true);
            b.embedded = true;
            b.closeLater(h2);
            return b;
        } catch (RuntimeException e) {
            h2.close();
            throw e;
        }
    }

    /** What the output calls this backend. */
    String describe() {
        String what =
                switch (spec.kind()) {
                    case JDBC -> "JDBC lock table";
                    case REDIS -> "Redis";
                    case ZOOKEEPER -> "ZooKeeper";
                    case ETCD -> "etcd";
                    case EMBEDDED_H2 -> "embedded H2";
                };
        if (embedded) {
            String url = spec.display();
            int semicolon = url.indexOf(';');
            return "embedded H2 server (" + (semicolon < 0 ? url : url.substring(0, semicolon)) + "), JDBC lock table";
        }
        return what + " " + spec.display();
    }

    boolean embedded() {
        return embedded;
    }

    private static Backend openJdbc(BackendSpec spec, int poolSize, boolean createSchema) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(spec.uri());
        if (spec.user() != null) {
            config.setUsername(spec.user());
        }
        if (spec.password() != null) {
            config.setPassword(spec.password());
        }
        config.setMaximumPoolSize(poolSize);
        config.setMinimumIdle(1);
        config.setConnectionTimeout(10_000);
        config.setPoolName("distlock-cli");
        HikariDataSource ds;
        try {
            ds = new HikariDataSource(config);
        } catch (RuntimeException e) {
            throw new BackendUnreachableException("cannot reach " + spec.display() + ": " + rootMessage(e), e);
        }
        try {
            JdbcLockClient.Builder b = JdbcLockClient.builder().dataSource(ds).tableName(spec.table());
            if (createSchema) {
                b.createSchemaIfMissing();
            }
            return new Backend(spec, b.build(), ds);
        } catch (RuntimeException e) {
            ds.close();
            throw e;
        }
    }

    BackendSpec spec() {
        return spec;
    }

    LockClient client() {
        return client;
    }

    /** The demo counter in this backend's store, opened on first use. */
    synchronized SharedCounter counter() {
        SharedCounter c = counter;
        if (c == null) {
            c = switch (spec.kind()) {
                case JDBC -> new JdbcCounter(requireDataSource(), spec.table());
                case REDIS -> new RedisCounter(spec.uri());
                case ZOOKEEPER -> new ZooKeeperCounter(spec.zooKeeperConnectString());
                case ETCD -> new EtcdCounter(spec.etcdEndpoints());
                case EMBEDDED_H2 -> throw new IllegalStateException("start the embedded server first");
            };
            counter = c;
        }
        return c;
    }

    private HikariDataSource requireDataSource() {
        HikariDataSource ds = dataSource;
        if (ds == null) {
            throw new IllegalStateException("not a JDBC backend: " + spec.kind());
        }
        return ds;
    }

    /** Registers something to close with the backend, after the client and counter. */
    void closeLater(AutoCloseable closeable) {
        closeables.add(closeable);
    }

    @Override
    public void close() {
        try {
            client.close();
        } catch (RuntimeException e) {
            // best effort: the command is ending anyway
        }
        SharedCounter c = counter;
        if (c != null) {
            c.close();
        }
        HikariDataSource ds = dataSource;
        if (ds != null) {
            ds.close();
        }
        for (AutoCloseable a : closeables) {
            try {
                a.close();
            } catch (Exception e) {
                // best effort
            }
        }
    }

    static String rootMessage(Throwable e) {
        Throwable t = e;
        String message = String.valueOf(e.getMessage());
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
            if (t.getMessage() != null) {
                message = t.getMessage();
            }
        }
        return message;
    }
}
