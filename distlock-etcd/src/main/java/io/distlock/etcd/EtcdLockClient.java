package io.distlock.etcd;

import io.distlock.LockClient;
import io.distlock.internal.Checks;
import io.distlock.internal.EngineClient;
import io.distlock.internal.EngineConfig;
import io.distlock.internal.LockEngine;
import io.distlock.spi.OwnerId;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import java.io.File;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import javax.net.ssl.SSLException;
import org.jspecify.annotations.Nullable;

/**
 * A {@link LockClient} over etcd v3, through jetcd.
 *
 * <!-- sample: etcd-client -->
 * <pre>{@code
 * try (LockClient client = EtcdLockClient.create("http://127.0.0.1:2379")) {
 *     DistributedLock lock = client.lock("order:123");
 *     lock.lock();
 *     try {
 *         // ... guarded work ...
 *     } finally {
 *         lock.unlock();
 *     }
 *     try (LockHold hold = lock.acquire()) {
 *         orders.update(hold.fencingToken(), order); // the resource refuses stale tokens
 *     }
 * }
 * }</pre>
 *
 * <p>Each owner that holds or waits for a lock writes its own key {@code <namespace><encoded name>/<owner>}, bound to
 * an etcd lease; the key with the lowest create revision holds the lock, the others wait in create-revision order,
 * so between clients every lock is first come, first served. A {@link #fairLock} queues every waiting thread there; a
 * {@link #lock} queues only the first waiting thread of each client, lines the client's other threads up behind it, and
 * hands the lock from a releasing thread to the next local one in one transaction when no other client's key is older
 * (otherwise the local thread waits in etcd's queue, behind them). Holds renewed by the watchdog share one lease per
 * client, kept alive by the client's watchdog with one keep-alive per tick; a hold with a fixed lease gets an etcd lease
 * of its own with the hold's length as its TTL, never kept alive once granted, so etcd ends it by itself.
 *
 * <p>Read-write locks and semaphores queue the same way: each read, write or permit hold is a key of its own on a lease,
 * granted from the keys ahead of it alone (a write key when none is ahead, a read key when no other owner's write key
 * is ahead, a semaphore key when the permits ahead plus its own fit the size), with its create revision as the fencing
 * token. A count-down latch is a count key changed by compare-and-swap on its mod revision, with one key per counted
 * call id, on a lease of its own that each change keeps alive for {@link Builder#latchExpiry}.
 *
 * <h2>Guarantees</h2>
 *
 * <ul>
 *   <li>Mutual exclusion as long as etcd is linearizable: every step is one etcd request (a transaction or a
 *       delete), decided by the Raft leader, so it holds through leader failover and partitions (a minority side
 *       cannot write).
 *   <li>Fencing tokens are the create revision of the holder's key: one counter for the whole etcd keyspace that never
 *       goes back, so every token is greater than every token issued before for the name, across client and server
 *       restarts that keep the data.
 *   <li>Expiry is decided by the etcd leader's clock (lease TTLs); the client measures its own leases with {@link
 *       System#nanoTime()}, and counts a lease from before the request that took it, so it never believes in a hold
 *       longer than etcd keeps it. No wall clocks are compared.
 *   <li>A wait that ends by timeout or interrupt deletes the waiter's key, so a waiter that gave up never becomes the
 *       holder later (the gap jetcd's own {@code Lock} client leaves open, jetcd issue #291).
 *   <li>Waiters are woken by an etcd watch on the lock's keys, one watch per name per client.
 * </ul>
 *
 * <h2>Failure modes</h2>
 *
 * <ul>
 *   <li>etcd unreachable or without quorum: calls fail with {@link io.distlock.DistributedLockException} after the
 *       request timeout (default 5 s); holds stay valid until their last confirmed lease ends, then are marked lost
 *       and listeners are told.
 *   <li>The lease is found gone (expired during a long pause or partition, revoked by an operator): every hold on it
 *       is marked lost at the next watchdog tick, and the next release throws {@link io.distlock.LockLostException}.
 *   <li>A client that dies frees its watchdog holds when its lease runs out: the lease plus one second, rounded up to
 *       whole seconds (etcd counts TTLs in seconds, and enforces a minimum of about 1.5 election timeouts). A
 *       fixed lease ends in etcd when its TTL runs out, dead client or not: its length rounded up to whole seconds,
 *       and at least etcd's minimum, so a short fixed lease keeps other owners out a little longer than its
 *       holder counts on it.
 *   <li>A lease-based lock cannot stop a holder that pauses (GC, swap) past its lease from acting on a stale belief.
 *       As etcd's own documentation warns for its lock API, protect the resource with the fencing token: the resource
 *       must refuse writes carrying a token lower than one it has already seen.
 * </ul>
 *
 * <h2>Requirements</h2>
 *
 * <p>etcd 3.4 or later (v3 API over gRPC). With authentication enabled, the user needs read and write permission on
 * the namespace prefix, and may grant, keep alive and revoke leases. Namespaces of different applications must not be
 * prefixes of each other.
 */
public final class EtcdLockClient extends EngineClient {

    private EtcdLockClient(LockEngine engine) {
        super(engine);
    }

    /**
     * A client with default settings for these endpoints.
     *
     * @param endpoints comma-separated {@code http://host:port} (or {@code https://} for TLS with the JVM's trust
     *     store)
     * @throws NullPointerException if {@code endpoints} is null
     * @throws IllegalArgumentException if {@code endpoints} is blank or an endpoint is not a valid URI with a host
     */
    public static EtcdLockClient create(String endpoints) {
        return builder().endpoints(endpoints).build();
    }

    /** A builder for a client with settings other than the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** Releases what the client holds, revokes its leases, and closes the jetcd client unless it was given one. */
    @Override
    public String toString() {
        return "EtcdLockClient[" + OwnerId.redact(clientId()) + "]";
    }

    /**
     * Settings of an {@link EtcdLockClient}. Either {@link #endpoints} or {@link #client} is required.
     *
     * <pre>{@code
     * EtcdLockClient client = EtcdLockClient.builder()
     *         .endpoints("https://etcd-1:2379,https://etcd-2:2379,https://etcd-3:2379")
     *         .trustCertificates(Path.of("/etc/etcd/ca.pem"))
     *         .user("locks").password(secret)
     *         .namespace("billing/locks/")
     *         .leaseTtl(Duration.ofSeconds(15))
     *         .build();
     * }</pre>
     */
    public static final class Builder {
        private final List<URI> endpoints = new ArrayList<>();
        private String namespace = "distlock/";
        private Duration leaseTtl = EngineConfig.DEFAULT_LEASE;
        private Duration requestTimeout = Duration.ofSeconds(5);
        private @Nullable String user;
        private @Nullable String password;
        private @Nullable Path trustCertificates;
        private @Nullable Path clientCertificate;
        private @Nullable Path clientKey;
        private @Nullable Client client;
        private @Nullable String clientId;
        private int maxWaiters = EngineConfig.DEFAULT_MAX_WAITERS;
        private Duration latchExpiry = EngineConfig.DEFAULT_LATCH_EXPIRY;
        private @Nullable Executor asyncExecutor;

        private Builder() {}

        /**
         * The etcd endpoints, comma-separated {@code http://host:port} or {@code https://host:port}.
         *
         * @throws NullPointerException if {@code endpoints} is null
         * @throws IllegalArgumentException if {@code endpoints} is blank or an endpoint has no host
         */
        public Builder endpoints(String endpoints) {
            Objects.requireNonNull(endpoints, "endpoints");
            List<URI> parsed = new ArrayList<>();
            for (String part : endpoints.split(",", -1)) {
                String e = part.trim();
                if (e.isEmpty()) {
                    throw new IllegalArgumentException("endpoints must be comma-separated URIs: '" + endpoints + "'");
                }
                URI uri;
                try {
                    uri = URI.create(e);
                } catch (IllegalArgumentException ex) {
                    throw new IllegalArgumentException("endpoint is not a URI: '" + e + "'", ex);
                }
                if (uri.getHost() == null || uri.getScheme() == null) {
                    throw new IllegalArgumentException(
                            "endpoint must look like http://host:port or https://host:port: '" + e + "'");
                }
                if (!uri.getScheme().equals("http") && !uri.getScheme().equals("https")) {
                    throw new IllegalArgumentException("endpoint scheme must be http or https: '" + e + "'");
                }
                parsed.add(uri);
            }
            this.endpoints.clear();
            this.endpoints.addAll(parsed);
            return this;
        }

        /**
         * The prefix of every key this client writes; default {@code "distlock/"}. Clients that share locks must use
         * the same namespace.
         *
         * @throws NullPointerException if {@code namespace} is null
         * @throws IllegalArgumentException if {@code namespace} is empty
         */
        public Builder namespace(String namespace) {
            Objects.requireNonNull(namespace, "namespace");
            if (namespace.isEmpty()) {
                throw new IllegalArgumentException("namespace must not be empty: '" + namespace + "'");
            }
            this.namespace = namespace;
            return this;
        }

        /**
         * The lease of holds taken without a lease argument, renewed by the watchdog every third of it; default 30 s.
         * etcd keeps such a hold of a client that died for this long plus one second, rounded up to whole seconds.
         *
         * @throws NullPointerException if {@code leaseTtl} is null
         * @throws IllegalArgumentException if {@code leaseTtl} is not positive or absurdly long
         */
        public Builder leaseTtl(Duration leaseTtl) {
            this.leaseTtl = Checks.lease(leaseTtl, "leaseTtl");
            return this;
        }

        /**
         * How long one request to etcd may take before it fails with {@link io.distlock.DistributedLockException};
         * default 5 s.
         *
         * @throws NullPointerException if {@code requestTimeout} is null
         * @throws IllegalArgumentException if {@code requestTimeout} is not positive
         */
        public Builder requestTimeout(Duration requestTimeout) {
            this.requestTimeout = Checks.positive(requestTimeout, "requestTimeout");
            return this;
        }

        /**
         * The etcd user, for a cluster with authentication enabled; requires {@link #password}.
         *
         * @throws NullPointerException if {@code user} is null
         */
        public Builder user(String user) {
            this.user = Objects.requireNonNull(user, "user");
            return this;
        }

        /**
         * The password of {@link #user}.
         *
         * @throws NullPointerException if {@code password} is null
         */
        public Builder password(String password) {
            this.password = Objects.requireNonNull(password, "password");
            return this;
        }

        /**
         * Connects with TLS, trusting the CA certificates in this PEM file (instead of the JVM's trust store, which
         * {@code https://} endpoints use otherwise).
         *
         * @throws NullPointerException if {@code caPem} is null
         */
        public Builder trustCertificates(Path caPem) {
            this.trustCertificates = Objects.requireNonNull(caPem, "caPem");
            return this;
        }

        /**
         * Connects with TLS and authenticates with this client certificate chain and PKCS#8 private key (PEM files),
         * for etcd's {@code --client-cert-auth}.
         *
         * @throws NullPointerException if an argument is null
         */
        public Builder clientCertificate(Path certificateChainPem, Path privateKeyPem) {
            this.clientCertificate = Objects.requireNonNull(certificateChainPem, "certificateChainPem");
            this.clientKey = Objects.requireNonNull(privateKeyPem, "privateKeyPem");
            return this;
        }

        /**
         * Uses this jetcd client instead of building one; it is not closed when the lock client closes. Endpoints,
         * user, password and TLS settings of this builder are then ignored.
         *
         * @throws NullPointerException if {@code client} is null
         */
        public Builder client(Client client) {
            this.client = Objects.requireNonNull(client, "client");
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
         * How long a count-down latch's data stays in etcd after its last change (its count key and count-down ids are
         * on an etcd lease with this TTL, rounded up to whole seconds, kept alive by each change); an expired latch
         * reads as absent. Default one day.
         *
         * @throws NullPointerException if {@code latchExpiry} is null
         * @throws IllegalArgumentException if not positive
         */
        public Builder latchExpiry(Duration latchExpiry) {
            this.latchExpiry = Checks.positive(latchExpiry, "latchExpiry");
            return this;
        }

        /**
         * Where asynchronous acquires run their steps and complete their futures, so user callbacks never run on
         * jetcd's threads; default: the client's own small pool of daemon threads, shut down with the client. A given
         * executor is left running when the client closes.
         *
         * @throws NullPointerException if {@code asyncExecutor} is null
         */
        public Builder asyncExecutor(Executor asyncExecutor) {
            this.asyncExecutor = Objects.requireNonNull(asyncExecutor, "asyncExecutor");
            return this;
        }

        /**
         * The label of the client's identity in etcd; default {@code pid<process id>}. The client id, the prefix of
         * every owner it writes, is the label followed by a fresh 128-bit secret, so owner ids cannot be guessed.
         *
         * @throws NullPointerException if {@code clientId} is null
         * @throws IllegalArgumentException if {@code clientId} is blank or contains {@code ':'}
         */
        public Builder clientId(String clientId) {
            Objects.requireNonNull(clientId, "clientId");
            var unused = EngineConfig.defaults().withClientId(clientId); // validates
            this.clientId = clientId;
            return this;
        }

        /**
         * Builds the client. Does not contact etcd yet: the first lock operation does.
         *
         * @throws IllegalStateException if neither endpoints nor a jetcd client were given, or a password is given
         *     without a user (or the other way round)
         * @throws IllegalArgumentException if a TLS file cannot be read
         */
        public EtcdLockClient build() {
            Client given = client;
            Client jetcd = given != null ? given : buildJetcd();
            EngineConfig config = EngineConfig.defaults()
                    .withWatchdogLease(leaseTtl)
                    .withMaxWaiters(maxWaiters)
                    .withLatchExpiry(latchExpiry)
                    .withAsyncExecutor(asyncExecutor);
            if (clientId != null) {
                config = config.withClientId(clientId);
            }
            EtcdLockStore store;
            try {
                store = new EtcdLockStore(
                        jetcd, given == null, namespace, config.watchdogLease(), requestTimeout, config.ticker());
            } catch (RuntimeException e) {
                if (given == null) {
                    jetcd.close();
                }
                throw e;
            }
            return new EtcdLockClient(LockEngine.create(store, config));
        }

        private Client buildJetcd() {
            if (endpoints.isEmpty()) {
                throw new IllegalStateException("etcd endpoints or a jetcd client are required");
            }
            if ((user == null) != (password == null)) {
                throw new IllegalStateException(
                        "user and password go together; got only the " + (user == null ? "password" : "user"));
            }
            ClientBuilder b = Client.builder().endpoints(endpoints.toArray(URI[]::new));
            String u = user;
            String p = password;
            if (u != null && p != null) {
                b.user(ByteSequence.from(u, StandardCharsets.UTF_8))
                        .password(ByteSequence.from(p, StandardCharsets.UTF_8));
            }
            boolean https = endpoints.stream().anyMatch(e -> e.getScheme().equals("https"));
            Path ca = trustCertificates;
            Path cert = clientCertificate;
            Path key = clientKey;
            if (https || ca != null || cert != null) {
                for (Path f : new Path[] {ca, cert, key}) {
                    if (f != null && !Files.isReadable(f)) {
                        throw new IllegalArgumentException("TLS file is not readable: " + f);
                    }
                }
                try {
                    b.sslContext(ssl -> {
                        if (ca != null) {
                            ssl.trustManager(file(ca));
                        }
                        if (cert != null && key != null) {
                            ssl.keyManager(file(cert), file(key));
                        }
                    });
                } catch (SSLException e) {
                    throw new IllegalArgumentException("TLS settings are not usable: " + e.getMessage(), e);
                }
            }
            return b.build();
        }

        private static File file(Path p) {
            return p.toFile();
        }
    }
}
