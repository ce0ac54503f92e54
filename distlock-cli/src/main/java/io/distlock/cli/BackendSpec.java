package io.distlock.cli;

import java.util.Locale;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Where the locks live, parsed from {@code --backend}: {@code redis://…} (also {@code rediss://}, {@code
 * redis-sentinel://}), {@code jdbc:…} (H2, MariaDB/MySQL, PostgreSQL), {@code zookeeper://host:port[,host:port]/root},
 * {@code etcd://host:port[,host:port]} (or {@code etcds://} for TLS), or the embedded H2 server when absent.
 *
 * @param kind which backend
 * @param uri the URI as given (for the embedded kind, a description)
 * @param user database user for JDBC, or null
 * @param password database password for JDBC, or null
 * @param table the JDBC table prefix
 */
record BackendSpec(Kind kind, String uri, @Nullable String user, @Nullable String password, String table) {

    /** The backends the command can reach. */
    enum Kind {
        EMBEDDED_H2,
        JDBC,
        REDIS,
        ZOOKEEPER,
        ETCD
    }

    static final String EMBEDDED = "embedded H2 server";

    BackendSpec {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(uri, "uri");
        Objects.requireNonNull(table, "table");
    }

    /**
     * Parses a {@code --backend} value; null means the embedded default.
     *
     * @throws IllegalArgumentException if the URI has none of the known schemes
     */
    static BackendSpec parse(@Nullable String uri, @Nullable String user, @Nullable String password, String table) {
        if (uri == null || uri.isBlank() || uri.equalsIgnoreCase("embedded")) {
            return new BackendSpec(Kind.EMBEDDED_H2, EMBEDDED, null, null, table);
        }
        String lower = uri.toLowerCase(Locale.ROOT);
        Kind kind;
        if (lower.startsWith("jdbc:")) {
            kind = Kind.JDBC;
        } else if (lower.startsWith("redis://")
                || lower.startsWith("rediss://")
                || lower.startsWith("redis-sentinel://")) {
            kind = Kind.REDIS;
        } else if (lower.startsWith("zookeeper://") || lower.startsWith("zk://")) {
            kind = Kind.ZOOKEEPER;
        } else if (lower.startsWith("etcd://") || lower.startsWith("etcds://")) {
            kind = Kind.ETCD;
        } else {
            throw new IllegalArgumentException(
                    "--backend must start with redis://, rediss://, redis-sentinel://, jdbc:,"
                            + " zookeeper:// or etcd://: '" + uri + "'");
        }
        return new BackendSpec(kind, uri, user, password, table);
    }

    /** {@code host:port[,host:port]} of a {@code zookeeper://} URI. */
    String zooKeeperConnectString() {
        String rest = afterScheme();
        int slash = rest.indexOf('/');
        String hosts = slash < 0 ? rest : rest.substring(0, slash);
        if (hosts.isBlank()) {
            throw new IllegalArgumentException("zookeeper URI needs host:port: '" + uri + "'");
        }
        return hosts;
    }

    /** The root path of a {@code zookeeper://} URI, or null for the client's default. */
    @Nullable
    String zooKeeperRoot() {
        String rest = afterScheme();
        int slash = rest.indexOf('/');
        if (slash < 0 || slash == rest.length() - 1) {
            return null;
        }
        String root = rest.substring(slash);
        return root.endsWith("/") ? root.substring(0, root.length() - 1) : root;
    }

    /** The comma-separated {@code http(s)://host:port} endpoints of an {@code etcd://} URI. */
    String etcdEndpoints() {
        String scheme = uri.toLowerCase(Locale.ROOT).startsWith("etcds://") ? "https://" : "http://";
        String rest = afterScheme();
        int slash = rest.indexOf('/');
        String hosts = slash < 0 ? rest : rest.substring(0, slash);
        if (hosts.isBlank()) {
            throw new IllegalArgumentException("etcd URI needs host:port: '" + uri + "'");
        }
        StringBuilder sb = new StringBuilder();
        for (String host : hosts.split(",", -1)) {
            if (host.isBlank()) {
                throw new IllegalArgumentException("etcd URI has an empty host: '" + uri + "'");
            }
            if (sb.length() > 0) {
                sb.append(',');
            }
            sb.append(scheme).append(host.trim());
        }
        return sb.toString();
    }

    /** The URI with any password hidden, for messages and output. */
    String display() {
        if (kind == Kind.JDBC) {
            return uri.replaceAll("(?i)(password=)[^;&]*", "$1***");
        }
        return uri.replaceAll("(://[^/@:]*:)[^/@]*@", "$1***@");
    }

    private String afterScheme() {
        return uri.substring(uri.indexOf("://") + 3);
    }
}
