package io.distlock.zookeeper;

import io.distlock.DistributedLockException;
import io.distlock.LockClient;
import io.distlock.internal.Checks;
import io.distlock.internal.EngineClient;
import io.distlock.internal.EngineConfig;
import io.distlock.internal.LockEngine;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.imps.DefaultACLProvider;
import org.apache.curator.retry.BoundedExponentialBackoffRetry;
import org.apache.curator.utils.PathUtils;
import org.apache.zookeeper.ClientCnxnSocketNetty;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.common.ClientX509Util;
import org.apache.zookeeper.data.ACL;
import org.jspecify.annotations.Nullable;

/**
 * A {@link LockClient} over Apache ZooKeeper, through Apache Curator.
 *
 * <!-- sample: zookeeper-client -->
 * <pre>{@code
 * try (LockClient client = ZooKeeperLockClient.create("zk1:2181,zk2:2181,zk3:2181")) {
 *     DistributedLock lock = client.lock("order:123");
 *     lock.lock();
 *     try {
 *         // ... guarded work ...
 *     } finally {
 *         lock.unlock();
 *     }
 *     try (LockHold hold = lock.acquire()) {
 *         resource.write(hold.fencingToken(), data);
 *     }
 * }
 * }</pre>
 *
 * <p>Read-write locks, semaphores and count-down latches live under {@code <rootPath>/sync} in the same way (one
 * ephemeral sequential node per holder or waiter, whose name carries its mode or permits; a latch is a persistent
 * counter node).
 *
 * <p>Each lock name is a node under {@code <rootPath>/locks}; each owner that holds or waits has one ephemeral
 * sequential child there, and the child with the lowest sequence holds the lock. Waiters are granted in the order they
 * asked, so {@link #lock} and {@link #fairLock} are the same lock here.
 *
 * <h2>Guarantees</h2>
 *
 * <ul>
 *   <li>Mutual exclusion rests on ZooKeeper's linearizable writes: at most one owner's node is first in the queue, on
 *       every server of a quorum, also across leader changes.
 *   <li>A hold lasts as long as the client's ZooKeeper session. No clocks are compared: the session timeout is
 *       measured by the server, and the client's checks use its monotonic clock.
 *   <li>The fencing token comes from the {@code czxid} of the holder's node, the ZooKeeper transaction id that
 *       created it: {@code czxid * 16} plus the number of the local succession (a thread of this client that took
 *       the hold over without a round trip, at most 15 in a row), strictly greater than every token issued before for
 *       the name, also across client and server restarts that keep the data directory.
 *   <li>Waiting uses one ZooKeeper watch per name and client; no polling. A wait that times out or is interrupted
 *       deletes its node, also when the delete has to wait for a reconnect (Curator's guaranteed delete).
 *   <li>A node created with an answer lost to a connection failure is found again (Curator's protected mode) or
 *       deleted, never left as an orphan that blocks the queue for the rest of the session.
 * </ul>
 *
 * <h2>Failure modes</h2>
 *
 * <ul>
 *   <li>Connection suspended or session lost: every hold of the client is presumed lost, because the server may
 *       expire the session and grant the lock to a waiter while the client cannot hear about it. Holds are checked
 *       every third of {@link Builder#leaseTime} (by default a ninth of the session timeout): they turn invalid,
 *       listeners are told, {@code unlock()} throws {@link io.distlock.LockLostException}, and the node, if the
 *       session survived, is deleted after the reconnect.
 *   <li>Leader change: clients are disconnected until a new leader is elected, which counts as a suspended connection
 *       (holds are reported lost). Waiters keep waiting; their nodes survive if their sessions do.
 *   <li>A holder that is paused (GC, VM freeze) for longer than the session timeout loses the lock to the next waiter
 *       before it can notice; fence the protected resource with the token.
 *   <li>A hold taken with an explicit lease time is released when that lease ends; during it, a lost session is
 *       noticed only at the next release, which then throws {@code LockLostException}.
 *   <li>ZooKeeper unreachable: operations fail with {@link DistributedLockException} after the connection timeout.
 * </ul>
 *
 * <h2>Requirements</h2>
 *
 * <p>ZooKeeper 3.6 or later (persistent watches, read-only multi). The lock nodes are containers, reaped by the server
 * once empty ({@code znode.container.checkIntervalMs}, one minute by default). The client needs create, delete, read
 * and watch permission under the root path.
 *
 * <h2>Security</h2>
 *
 * <p>With {@link Builder#digest} the client authenticates its session with ZooKeeper's {@code digest} scheme, and
 * every node it creates (the root path, the lock nodes, the queue entries) gets {@link ZooDefs.Ids#CREATOR_ALL_ACL}:
 * only sessions authenticated as the same user may read, create, change or delete them, so another identity can
 * neither delete a hold (which needs delete permission on its lock node) nor queue under a lock. All clients that
 * share locks use the same user. Nodes made before without ACLs keep theirs: create the root path with the
 * authenticated client first, or set its ACL by hand. {@link Builder#aclProvider} replaces the default ACLs.
 * {@link Builder#tls} makes the client speak TLS (Netty) to the servers' {@code secureClientPort}, optionally with a
 * client certificate ({@link Builder#tlsClientCertificate}) that servers with {@code authProvider.x509} also take as
 * the session's identity.
 */
public final class ZooKeeperLockClient extends EngineClient {
    /** The default session timeout. */
    public static final Duration DEFAULT_SESSION_TIMEOUT = Duration.ofSeconds(30);
    /** The default connection timeout. */
    public static final Duration DEFAULT_CONNECTION_TIMEOUT = Duration.ofSeconds(10);
    /** The default root path of the lock nodes. */
    public static final String DEFAULT_ROOT_PATH = "/distlock";

    private final CuratorFramework curator;

    private ZooKeeperLockClient(LockEngine engine, CuratorFramework curator) {
        super(engine);
        this.curator = curator;
    }

    /**
     * A client connected to the ensemble at {@code connectString} with the defaults.
     *
     * @param connectString {@code host:port[,host:port...][/chroot]}
     * @throws NullPointerException if {@code connectString} is null
     * @throws IllegalArgumentException if {@code connectString} is blank
     * @throws DistributedLockException if ZooKeeper cannot be reached within the connection timeout
     */
    public static ZooKeeperLockClient create(String connectString) {
        return builder().connectString(connectString).build();
    }

    /** A builder for a client with settings other than the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Releases the client's holds, closes its watches, and closes the Curator client if this client created it (a
     * Curator client given to the builder stays open). Idempotent.
     */
    @Override
    public String toString() {
        return "ZooKeeperLockClient[" + engine() + "]";
    }

    /** Tests only: the Curator client the lock client works through, its own or the one given to the builder. */
    CuratorFramework curator() {
        return curator;
    }

    /** Settings of a {@link ZooKeeperLockClient}. Not thread-safe. */
    public static final class Builder {
        private @Nullable String connectString;
        private String rootPath = DEFAULT_ROOT_PATH;
        private Duration sessionTimeout = DEFAULT_SESSION_TIMEOUT;
        private Duration connectionTimeout = DEFAULT_CONNECTION_TIMEOUT;
        private @Nullable CuratorFramework curator;
        private @Nullable ACLProvider aclProvider;
        private @Nullable Duration leaseTime;
        private @Nullable String clientId;
        private int maxWaiters = EngineConfig.DEFAULT_MAX_WAITERS;
        private byte @Nullable [] digest;
        private @Nullable Path trustStore;
        private String trustStorePassword = "";
        private @Nullable Path keyStore;
        private String keyStorePassword = "";
        private Duration latchExpiry = EngineConfig.DEFAULT_LATCH_EXPIRY;
        private @Nullable Executor asyncExecutor;

        private Builder() {}

        /**
         * The ensemble to connect to, {@code host:port[,host:port...][/chroot]}. Required unless {@link #curator} is
         * set.
         *
         * @throws IllegalArgumentException if {@code connectString} is blank
         */
        public Builder connectString(String connectString) {
            Objects.requireNonNull(connectString, "connectString");
            if (connectString.isBlank()) {
                throw new IllegalArgumentException("connectString must not be blank: '" + connectString + "'");
            }
            this.connectString = connectString;
            return this;
        }

        /**
         * The node under which lock nodes live; {@code /distlock} by default.
         *
         * @throws IllegalArgumentException if {@code rootPath} is not a valid absolute ZooKeeper path
         */
        public Builder rootPath(String rootPath) {
            Objects.requireNonNull(rootPath, "rootPath");
            try {
                PathUtils.validatePath(rootPath);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("rootPath is not a valid ZooKeeper path: '" + rootPath + "'", e);
            }
            this.rootPath = rootPath;
            return this;
        }

        /**
         * The ZooKeeper session timeout the client asks for (the server bounds it to 2 to 20 ticks); 30 s by default.
         * Holds live as long as the session, and a holder cut off from the ensemble loses its hold after this time.
         *
         * @throws IllegalArgumentException if it is not between 1 ms and {@link Integer#MAX_VALUE} ms
         */
        public Builder sessionTimeout(Duration sessionTimeout) {
            this.sessionTimeout = millis(sessionTimeout, "sessionTimeout");
            return this;
        }

        /**
         * How long an operation waits for a connection before it fails; 10 s by default.
         *
         * @throws IllegalArgumentException if it is not between 1 ms and {@link Integer#MAX_VALUE} ms
         */
        public Builder connectionTimeout(Duration connectionTimeout) {
            this.connectionTimeout = millis(connectionTimeout, "connectionTimeout");
            return this;
        }

        /**
         * An existing, started Curator client to use instead of making one. The lock client does not close it, and
         * the connect string, timeouts and ACL provider of this builder do not apply: configure them on the Curator
         * client.
         */
        public Builder curator(CuratorFramework curator) {
            this.curator = Objects.requireNonNull(curator, "curator");
            return this;
        }

        /**
         * The ACLs of the nodes the client creates; by default creator-only ({@link ZooDefs.Ids#CREATOR_ALL_ACL}) with
         * {@link #digest}, Curator's default (open) ACL without.
         */
        public Builder aclProvider(ACLProvider aclProvider) {
            this.aclProvider = Objects.requireNonNull(aclProvider, "aclProvider");
            return this;
        }

        /**
         * Authenticates the session as {@code user} with ZooKeeper's {@code digest} scheme, and makes the nodes the
         * client creates readable and writable by that user only (unless an {@link #aclProvider} says otherwise).
         *
         * @throws IllegalArgumentException if {@code user} is blank or contains {@code ':'}, or the password is empty
         */
        public Builder digest(String user, String password) {
            Objects.requireNonNull(user, "user");
            Objects.requireNonNull(password, "password");
            if (user.isBlank() || user.indexOf(':') >= 0) {
                throw new IllegalArgumentException("user must be non-blank and contain no ':': '" + user + "'");
            }
            if (password.isEmpty()) {
                throw new IllegalArgumentException("password must not be empty");
            }
            this.digest = (user + ":" + password).getBytes(StandardCharsets.UTF_8);
            return this;
        }

        /**
         * Connects with TLS (the servers' {@code secureClientPort}), trusting the certificates in {@code trustStore}: a
         * JKS ({@code .jks}), PKCS#12 ({@code .p12}, {@code .pfx}) or else PEM file. The server's certificate must name
         * the host connected to.
         *
         * @param trustStorePassword the trust store's password; empty for PEM or none
         */
        public Builder tls(Path trustStore, String trustStorePassword) {
            this.trustStore = Objects.requireNonNull(trustStore, "trustStore");
            this.trustStorePassword = Objects.requireNonNull(trustStorePassword, "trustStorePassword");
            return this;
        }

        /**
         * With {@link #tls}, the client's own certificate and key, for servers that ask for one ({@code ssl.clientAuth}):
         * JKS ({@code .jks}), PKCS#12 ({@code .p12}, {@code .pfx}) or else a PEM file with the PKCS#8 key and the
         * certificate chain.
         *
         * @param keyStorePassword the key store's password; empty for an unencrypted PEM key
         */
        public Builder tlsClientCertificate(Path keyStore, String keyStorePassword) {
            this.keyStore = Objects.requireNonNull(keyStore, "keyStore");
            this.keyStorePassword = Objects.requireNonNull(keyStorePassword, "keyStorePassword");
            return this;
        }

        /**
         * The watchdog lease of holds taken without a lease argument. ZooKeeper keeps a hold for the session, so this
         * is how often the client checks its holds: every third of it. By default a third of the session timeout.
         *
         * <p>A lease given to an acquire ({@code tryLock(wait, lease, unit)}, a semaphore's {@code tryAcquire(n,
         * wait, lease)}) is ended by this client's timer, which deletes the hold's node: a holder whose process is
         * stopped (SIGSTOP, a long GC pause) keeps the hold until the server expires its session, so on this backend a
         * lease is bounded below by the {@link #sessionTimeout}, not by its own length.
         *
         * @throws IllegalArgumentException if it is not positive
         */
        public Builder leaseTime(Duration leaseTime) {
            Objects.requireNonNull(leaseTime, "leaseTime");
            if (leaseTime.isNegative() || leaseTime.isZero()) {
                throw new IllegalArgumentException("leaseTime must be positive: " + leaseTime);
            }
            this.leaseTime = leaseTime;
            return this;
        }

        /**
         * How many acquires of this client may wait at once; one more is refused at once with {@link
         * java.util.concurrent.RejectedExecutionException}, so a flood of callers cannot grow the client's memory
         * without bound. Default 10,000.
         *
         * @throws IllegalArgumentException if not positive
         */
        public Builder maxWaiters(int maxWaiters) {
            this.maxWaiters = Checks.positive(maxWaiters, "maxWaiters");
            return this;
        }

        /**
         * How long a count-down latch stays in ZooKeeper after its last change, by the server's clock; one day by
         * default. An expired latch reads as absent (count 0), and clients that use latches delete expired ones in
         * the background.
         *
         * @throws IllegalArgumentException if it is not positive
         */
        public Builder latchExpiry(Duration latchExpiry) {
            this.latchExpiry = Checks.lease(latchExpiry, "latchExpiry");
            return this;
        }

        /**
         * Where asynchronous acquires run their steps and complete their futures, so user callbacks never run on a
         * store's I/O thread; default: the client's own small pool of daemon threads, shut down with the client. A
         * given executor is left running when the client closes.
         *
         * @throws NullPointerException if {@code asyncExecutor} is null
         */
        public Builder asyncExecutor(Executor asyncExecutor) {
            this.asyncExecutor = Objects.requireNonNull(asyncExecutor, "asyncExecutor");
            return this;
        }

        /**
         * The label of the client's identity in owner ids; {@code pid<process id>} by default. The client id is the
         * label followed by a fresh 128-bit secret, so owner ids cannot be guessed.
         *
         * @throws IllegalArgumentException if it is blank or contains {@code ':'} or control characters
         */
        public Builder clientId(String clientId) {
            Objects.requireNonNull(clientId, "clientId");
            if (clientId.isBlank()
                    || clientId.indexOf(':') >= 0
                    || clientId.chars().anyMatch(Character::isISOControl)) {
                throw new IllegalArgumentException(
                        "clientId must be non-blank, without ':' or control characters: '" + clientId + "'");
            }
            this.clientId = clientId;
            return this;
        }

        /**
         * Connects (or uses the given Curator client) and returns the lock client.
         *
         * @throws IllegalStateException if neither a connect string nor a Curator client is set, if both are, if an
         *     ACL provider, digest or TLS is set with a Curator client, if a client certificate is set without TLS, or if
         *     the given Curator client is not started
         * @throws DistributedLockException if ZooKeeper cannot be reached within the connection timeout
         */
        public ZooKeeperLockClient build() {
            CuratorFramework given = curator;
            String cs = connectString;
            if (given == null && cs == null) {
                throw new IllegalStateException("set connectString or curator");
            }
            if (given != null && cs != null) {
                throw new IllegalStateException("set connectString or curator, not both");
            }
            if (given != null && (aclProvider != null || digest != null || trustStore != null)) {
                throw new IllegalStateException(
                        "with an existing curator, set the ACL provider, authorization and TLS on the curator");
            }
            if (keyStore != null && trustStore == null) {
                throw new IllegalStateException("a client certificate needs tls(trustStore, password)");
            }
            if (given != null && given.getState() != CuratorFrameworkState.STARTED) {
                throw new IllegalStateException("the given curator must be started: " + given.getState());
            }
            EngineConfig config = EngineConfig.defaults()
                    .withMaxWaiters(maxWaiters)
                    .withLatchExpiry(latchExpiry)
                    .withAsyncExecutor(asyncExecutor);
            if (clientId != null) {
                config = config.withClientId(clientId);
            }
            Duration session = sessionTimeout;
            ACLProvider acls = given != null
                    ? null
                    : aclProvider != null ? aclProvider : digest != null ? new CreatorOnly() : new DefaultACLProvider();
            CuratorFramework zk;
            ZkSession.HandleFactory handles = null;
            if (given != null) {
                zk = given;
                int negotiated = 0;
                try {
                    negotiated = given.getZookeeperClient().getZooKeeper().getSessionTimeout();
                } catch (Exception e) {
                    // not connected yet: keep the builder's value
                }
                if (negotiated > 0) {
                    session = Duration.ofMillis(negotiated);
                }
            } else {
                handles = new ZkSession.HandleFactory();
                CuratorFrameworkFactory.Builder b = CuratorFrameworkFactory.builder()
                        .connectString(Objects.requireNonNull(cs))
                        .sessionTimeoutMs((int) sessionTimeout.toMillis())
                        .connectionTimeoutMs((int) connectionTimeout.toMillis())
                        .retryPolicy(new BoundedExponentialBackoffRetry(100, 1000, 3))
                        .zookeeperFactory(handles)
                        .aclProvider(Objects.requireNonNull(acls));
                byte[] auth = digest;
                if (auth != null) {
                    b.authorization("digest", auth);
                }
                Path trust = trustStore;
                if (trust != null) {
                    b.zkClientConfig(tlsConfig(trust, trustStorePassword, keyStore, keyStorePassword));
                }
                zk = b.build(); // started below, once the store hears its events
            }
            config = config.withWatchdogLease(
                    leaseTime != null ? leaseTime : Duration.ofMillis(Math.max(1, session.toMillis() / 3)));
            ZooKeeperLockStore store = new ZooKeeperLockStore(zk, given == null, acls, rootPath, session, handles);
            try {
                if (given == null) {
                    zk.start();
                }
                if (!zk.blockUntilConnected((int) connectionTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    throw new DistributedLockException(
                            "could not connect to ZooKeeper within " + connectionTimeout,
                            new java.util.concurrent.TimeoutException(
                                    zk.getZookeeperClient().getCurrentConnectionString()));
                }
                store.start();
            } catch (InterruptedException e) {
                store.close();
                Thread.currentThread().interrupt();
                throw new DistributedLockException("interrupted while connecting to ZooKeeper", e);
            } catch (RuntimeException e) {
                store.close();
                throw e;
            }
            return new ZooKeeperLockClient(LockEngine.create(store, config), zk);
        }

        /**
         * A ZooKeeper client configuration for TLS over Netty with these stores and no others: every store setting is
         * set, none is taken from {@code zookeeper.ssl.*} system properties.
         */
        private static ZKClientConfig tlsConfig(
                Path trustStore, String trustStorePassword, @Nullable Path keyStore, String keyStorePassword) {
            ZKClientConfig c = new ZKClientConfig();
            c.setProperty(ZKClientConfig.SECURE_CLIENT, "true");
            c.setProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET, ClientCnxnSocketNetty.class.getName());
            try (ClientX509Util x509 = new ClientX509Util()) {
                c.setProperty(x509.getSslTruststoreLocationProperty(), trustStore.toString());
                c.setProperty(x509.getSslTruststorePasswdProperty(), trustStorePassword);
                c.setProperty(x509.getSslTruststoreTypeProperty(), storeType(trustStore));
                c.setProperty(x509.getSslKeystoreLocationProperty(), keyStore != null ? keyStore.toString() : "");
                c.setProperty(x509.getSslKeystorePasswdProperty(), keyStore != null ? keyStorePassword : "");
                c.setProperty(x509.getSslKeystoreTypeProperty(), keyStore != null ? storeType(keyStore) : "");
            }
            return c;
        }

        /** ZooKeeper's name of a store's type, from its file name: JKS, PKCS12, or PEM for anything else. */
        private static String storeType(Path store) {
            String name = String.valueOf(store.getFileName()).toLowerCase(Locale.ROOT);
            if (name.endsWith(".jks")) {
                return "JKS";
            }
            return name.endsWith(".p12") || name.endsWith(".pfx") ? "PKCS12" : "PEM";
        }

        private static Duration millis(Duration d, String argument) {
            Objects.requireNonNull(d, argument);
            if (d.compareTo(Duration.ofMillis(1)) < 0 || d.compareTo(Duration.ofMillis(Integer.MAX_VALUE)) > 0) {
                throw new IllegalArgumentException(
                        argument + " must be between 1 ms and " + Integer.MAX_VALUE + " ms: " + d);
            }
            return d;
        }
    }

    /** Every node readable and writable only by the identities its creator's session authenticated as. */
    private static final class CreatorOnly implements ACLProvider {
        @Override
        public List<ACL> getDefaultAcl() {
            return ZooDefs.Ids.CREATOR_ALL_ACL;
        }

        @Override
        public List<ACL> getAclForPath(String path) {
            return ZooDefs.Ids.CREATOR_ALL_ACL;
        }
    }
}
