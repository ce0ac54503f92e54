package io.distlock.redis;

import io.distlock.DistributedLockException;
import io.distlock.LockClient;
import io.distlock.internal.Checks;
import io.distlock.internal.EngineClient;
import io.distlock.internal.EngineConfig;
import io.distlock.internal.LockEngine;
import io.distlock.spi.OwnerId;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * A {@link LockClient} over Redis (standalone, Sentinel or Cluster), through Lettuce: locks, fair locks, read-write
 * locks, semaphores (every acquisition an owned, leased hold with its own expiry on the server's clock) and count-down
 * latches (their data expires {@link Builder#latchExpiry} after its last change).
 *
 * <!-- sample: redis-client -->
 * <pre>{@code
 * try (LockClient client = RedisLockClient.create("redis://localhost:6379")) {
 *     DistributedLock lock = client.lock("order:123");
 *     lock.lock();
 *     try {
 *         // ... guarded work ...
 *     } finally {
 *         lock.unlock();
 *     }
 *     try (LockHold hold = lock.acquire()) {
 *         resource.write(hold.fencingToken(), data); // the resource refuses stale tokens
 *     }
 * }
 * }</pre>
 *
 * <p>A client keeps one command connection and (from the first wait on) one pub/sub connection (on a Redis 7
 * Cluster also one per master it waits on, for sharded pub/sub), shared by all its locks and threads; concurrent operations are pipelined on the one connection. Each lock operation is one Lua script
 * and one round trip: an uncontended acquire, a release and a hand-off to a waiting thread of the same client cost one
 * each, a re-entrant acquire none, and one watchdog tick renews every hold of the client in one round trip per Redis
 * node.
 *
 * <h2>Guarantees</h2>
 *
 * <ul>
 *   <li>Mutual exclusion within a lease, as long as the Redis master that granted a hold keeps it: holds are keys with
 *       a TTL set by the server's clock, so client clock drift does not matter.
 *   <li>Owner-checked release, renewal and hand-off: each compares the stored owner id inside its script and changes
 *       nothing when it is not the caller's.
 *   <li>Fencing: every fresh acquisition gets a token from {@code INCR} on a per-name counter in the same slot and the
 *       same script; the counter never expires, so tokens grow strictly across client restarts and across server
 *       restarts that keep the data.
 *   <li>Fair locks grant in request order across clients; a waiter that died is evicted once its waiter timeout
 *       (default 5 s, {@link Builder#waiterTimeout}) passes without it coming back.
 *   <li>Waiting is by pub/sub (by polling with back-off in {@link WaitStrategy#SPIN} mode): a release gives the lock to
 *       the client that has waited longest and tells only that client, on its own channel; a lost message delays a
 *       waiter by at most the remaining lease it saw, never for ever.
 * </ul>
 *
 * <h2>Failure modes</h2>
 *
 * <ul>
 *   <li><b>Failover.</b> Redis replicates asynchronously. If a master fails over before a grant reached its replica,
 *       the new master has neither the hold nor the last fencing-counter increment: another client can then be
 *       granted the lock while the old holder still believes it holds it, <em>with the same or a smaller fencing
 *       token</em>. The old holder learns of it at its next renewal (its hold is reported lost to listeners, and its
 *       next release throws {@link io.distlock.LockLostException}). {@link Builder#replicaAcks} narrows this window by
 *       making every grant wait for replica acknowledgement ({@code WAIT}) and failing loudly when it is not met; it
 *       still does not make Redis a consensus store.
 *   <li><b>Restart without persistence.</b> A server restarted from an RDB snapshot or an AOF that is not fsynced on
 *       every write ({@code appendfsync always}) loses recent holds and counter increments: fencing tokens can go back
 *       to an earlier value. Fencing is only as durable as the server's data.
 *   <li><b>Eviction.</b> Under {@code maxmemory-policy allkeys-*} Redis may evict holds and fence counters, under
 *       {@code volatile-*} holds: another client can then take a lock whose owner still believes it holds it, until
 *       the owner's next renewal finds it gone. The client logs a warning at start-up when it sees either kind of
 *       policy (it warns only; it works on any policy).
 *   <li><b>Unreachable server.</b> Operations throw {@link DistributedLockException}; a failed acquire may still have
 *       been granted on the server, and the client then abandons it (best effort; otherwise it expires with its
 *       lease). Holds stay valid until their last confirmed lease ends, then are reported lost.
 *   <li><b>Silent network</b> (a partition that drops packets, a server that stopped answering): every command is
 *       bounded by the {@linkplain Builder#commandTimeout command timeout} (by default the renewal interval, a third of
 *       the lease), so an acquire ends within its wait plus twice that timeout and a release fails within twice it,
 *       leaving the hold to its lease on the server. Holds are reported lost when their last confirmed lease ends, even
 *       while a renewal still waits for its answer.
 *   <li><b>Lost pub/sub message</b> (reconnect, failover): waiters re-check when the connection re-subscribes, and at
 *       the latest when the holder's lease would end.
 * </ul>
 *
 * <h2>Requirements</h2>
 *
 * <p>Redis 6.2 or later (7.0 tested), or a compatible server with Lua scripting, {@code EVALSHA} and pub/sub (for
 * {@link WaitStrategy#SPIN}, pub/sub is not needed). {@code maxmemory-policy} {@code noeviction}
 * (see Eviction above). For fencing that survives restarts: AOF with {@code appendfsync always}. The key prefix (default
 * {@code "distlock:"}) must be free for the client's use; no braces in it, since keys carry a Cluster hash tag.
 */
public final class RedisLockClient extends EngineClient {
    private final RedisLockStore store;

    private RedisLockClient(LockEngine engine, RedisLockStore store) {
        super(engine);
        this.store = store;
    }

    /**
     * Connects to the Redis server of a URI as Lettuce reads it: {@code redis://[user:password@]host[:port][/db]},
     * {@code rediss://...} for TLS, {@code redis-sentinel://[password@]host[:port][,host2[:port2]][/db]#masterName}
     * for the master that Sentinel names. Defaults for everything else.
     *
     * @throws NullPointerException if {@code uri} is null
     * @throws IllegalArgumentException if {@code uri} is not a Redis URI
     * @throws DistributedLockException if the server cannot be reached
     */
    public static RedisLockClient create(String uri) {
        return builder().uri(uri).build();
    }

    /**
     * A builder with the defaults: key prefix {@code "distlock:"}, watchdog lease 30 s, pub/sub waiting, command timeout
     * a third of the lease (see {@link Builder#commandTimeout}).
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Releases what the client still holds (best effort), then closes its connections, and the Lettuce client if
     * this client created it. A Lettuce client passed to the builder stays open. Idempotent.
     */
    @Override
    public void close() {
        super.close();
    }

    RedisLockStore store() {
        return store;
    }

    @Override
    public String toString() {
        return "RedisLockClient[" + OwnerId.redact(clientId()) + ", " + store + "]";
    }

    /** How waiters learn that a lock may have become free. */
    public enum WaitStrategy {
        /** Releases publish on the lock's channel; waiters sleep until a message or the holder's lease end. */
        PUB_SUB,
        /**
         * Nothing is published or subscribed; waiters poll with jittered exponential back-off, bounded by the
         * holder's remaining lease. For deployments where pub/sub is unavailable (proxies, ACLs).
         */
        SPIN
    }

    /**
     * Builds a {@link RedisLockClient}. Exactly one of {@link #uri}, {@link #cluster}, {@link #redisClient} and
     * {@link #clusterClient} chooses the server. Setters validate at once.
     */
    public static final class Builder {
        private @Nullable RedisURI uri;
        private final List<RedisURI> clusterSeeds = new ArrayList<>();
        private @Nullable RedisClient redisClient;
        private @Nullable RedisClusterClient clusterClient;
        private String keyPrefix = "distlock:";
        private Duration leaseTime = EngineConfig.DEFAULT_LEASE;
        private Duration waiterTimeout = Duration.ofSeconds(5);
        private WaitStrategy waitStrategy = WaitStrategy.PUB_SUB;
        private int minReplicas;
        private Duration replicaTimeout = Duration.ofSeconds(1);
        private @Nullable Duration commandTimeout;
        private @Nullable String clientId;
        private int maxWaiters = EngineConfig.DEFAULT_MAX_WAITERS;
        private Duration latchExpiry = EngineConfig.DEFAULT_LATCH_EXPIRY;
        private @Nullable Executor asyncExecutor;

        private Builder() {}

        /**
         * The server, as in {@link RedisLockClient#create(String)}.
         *
         * @throws IllegalArgumentException if {@code uri} is not a Redis URI
         */
        public Builder uri(String uri) {
            this.uri = parse(uri, "uri");
            return this;
        }

        /** The server, as a Lettuce {@link RedisURI} (for options a URI string cannot carry). */
        public Builder uri(RedisURI uri) {
            this.uri = Objects.requireNonNull(uri, "uri");
            return this;
        }

        /**
         * A Redis Cluster, by one or more of its nodes ({@code redis://host:port}, {@code rediss://...}). The client
         * follows the Cluster's topology, including failovers and resharding.
         *
         * @throws IllegalArgumentException if no URI is given or one is not a Redis URI
         */
        public Builder cluster(String... seedUris) {
            Objects.requireNonNull(seedUris, "seedUris");
            if (seedUris.length == 0) {
                throw new IllegalArgumentException("cluster needs at least one seed URI");
            }
            clusterSeeds.clear();
            for (String s : seedUris) {
                clusterSeeds.add(parse(s, "seedUris"));
            }
            return this;
        }

        /**
         * Uses an existing Lettuce client (its default URI unless {@link #uri} is also set). The lock client opens its
         * own connections on it and closes them, but never shuts the Lettuce client down.
         */
        public Builder redisClient(RedisClient client) {
            this.redisClient = Objects.requireNonNull(client, "client");
            return this;
        }

        /** Uses an existing Lettuce Cluster client; it is never shut down by the lock client. */
        public Builder clusterClient(RedisClusterClient client) {
            this.clusterClient = Objects.requireNonNull(client, "client");
            return this;
        }

        /**
         * The prefix of every key the client writes; default {@code "distlock:"}. Clients that should see the same
         * locks must use the same prefix.
         *
         * @throws IllegalArgumentException if the prefix contains '{' or '}' (the keys' Cluster hash tag follows it)
         */
        public Builder keyPrefix(String keyPrefix) {
            this.keyPrefix = KeyLayout.checkPrefix(keyPrefix);
            return this;
        }

        /**
         * The lease of holds taken without a lease argument, renewed by the watchdog every third of it; default 30 s.
         * A client that dies leaves such holds for at most this long.
         *
         * @throws IllegalArgumentException if the lease is not positive or too large
         */
        public Builder leaseTime(Duration leaseTime) {
            this.leaseTime = Checks.lease(leaseTime, "leaseTime");
            return this;
        }

        /**
         * How long a fair-lock waiter keeps its place without coming back; default 5 s. Waiters come back every third
         * of it, so a waiter that died is evicted within this time.
         *
         * @throws IllegalArgumentException if the timeout is shorter than 30 ms
         */
        public Builder waiterTimeout(Duration waiterTimeout) {
            Objects.requireNonNull(waiterTimeout, "waiterTimeout");
            if (waiterTimeout.compareTo(Duration.ofMillis(30)) < 0) {
                throw new IllegalArgumentException("waiterTimeout must be at least 30 ms: " + waiterTimeout);
            }
            this.waiterTimeout = waiterTimeout;
            return this;
        }

        /** How waiters learn of releases; default {@link WaitStrategy#PUB_SUB}. */
        public Builder waitStrategy(WaitStrategy waitStrategy) {
            this.waitStrategy = Objects.requireNonNull(waitStrategy, "waitStrategy");
            return this;
        }

        /**
         * After every grant, waits ({@code WAIT}) until at least {@code minReplicas} replicas have the write, for at
         * most {@code timeout}. When fewer acknowledge it the grant is released again and the acquire throws {@link
         * DistributedLockException}: never a silent grant that a failover could lose. Costs one more round trip per
         * grant, during which the client's other commands queue behind the {@code WAIT} on the shared connection. On a
         * Cluster the grant and its {@code WAIT} go over the connection to the master that serves the name's slot, so
         * {@code minReplicas} counts that master's replicas.
         *
         * @throws IllegalArgumentException if {@code minReplicas} is negative or {@code timeout} is not positive
         */
        public Builder replicaAcks(int minReplicas, Duration timeout) {
            if (minReplicas < 0) {
                throw new IllegalArgumentException("minReplicas must not be negative: " + minReplicas);
            }
            this.minReplicas = minReplicas;
            this.replicaTimeout = Checks.positive(timeout, "timeout");
            return this;
        }

        /**
         * How long the client waits for the answer to any one Redis command (a lock script, a renewal, a release, a
         * subscription) before the call fails with {@link DistributedLockException}, its cause the timeout; the command
         * is then cancelled, and one not yet sent is never sent. It bounds how long a call can block when the server
         * stops answering or the network drops packets without closing the connection: an acquire ends within its wait
         * time plus twice this timeout (an attempt, then its clean-up), a release within twice this timeout (a renewal
         * in flight is waited for first), and a renewal that gets no answer fails before the next one is due. Holds are
         * told lost by their validity deadline whatever this timeout is.
         *
         * <p>Default: the watchdog's renewal interval (a third of {@link #leaseTime}, 10 s with the default lease), but
         * at least 1 s or the lease when that is shorter, or the URI's {@code timeout} when that is shorter; with {@link #replicaAcks} at least the replica timeout plus
         * 500 ms, since every grant then waits that long on the server. Lettuce's own default of 60 s is not used: a
         * call blocked that long outlives any lease.
         *
         * @throws NullPointerException if {@code commandTimeout} is null
         * @throws IllegalArgumentException if {@code commandTimeout} is shorter than 1 ms
         */
        public Builder commandTimeout(Duration commandTimeout) {
            Objects.requireNonNull(commandTimeout, "commandTimeout");
            if (commandTimeout.compareTo(MIN_COMMAND_TIMEOUT) < 0) {
                throw new IllegalArgumentException("commandTimeout must be at least 1 ms: " + commandTimeout);
            }
            this.commandTimeout = commandTimeout;
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
         * How long a count-down latch's data stays in Redis after its last change (the latch key's TTL); default one
         * day. A latch that expired reads as absent (count 0).
         *
         * @throws IllegalArgumentException if the expiry is not positive or too large
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
         * The label of the client's identity in the store; default {@code pid<process id>}. The client id, the prefix
         * of every owner id it writes, is the label followed by a fresh 128-bit secret, so owner ids cannot be guessed.
         *
         * @throws IllegalArgumentException if the id is blank or contains ':'
         */
        public Builder clientId(String clientId) {
            Objects.requireNonNull(clientId, "clientId");
            if (clientId.isBlank() || clientId.indexOf(':') >= 0) {
                throw new IllegalArgumentException("clientId must be non-blank and contain no ':': '" + clientId + "'");
            }
            this.clientId = clientId;
            return this;
        }

        /**
         * Connects and returns the client.
         *
         * @throws IllegalStateException if no server was chosen, or more than one way
         * @throws DistributedLockException if the server cannot be reached
         */
        public RedisLockClient build() {
            int ways = (clusterSeeds.isEmpty() ? 0 : 1)
                    + (clusterClient == null ? 0 : 1)
                    + (redisClient == null ? 0 : 1)
                    + (uri == null || redisClient != null ? 0 : 1);
            if (ways == 0) {
                throw new IllegalStateException(
                        "no Redis server chosen: set uri, cluster, redisClient or clusterClient");
            }
            if (ways > 1) {
                throw new IllegalStateException("choose one of uri, cluster, redisClient and clusterClient");
            }
            Duration chosen = commandTimeout;
            if (chosen != null && minReplicas > 0 && chosen.compareTo(replicaTimeout) <= 0) {
                throw new IllegalStateException(
                        "commandTimeout must be longer than the replicaAcks timeout, which every"
                                + " grant waits on the server: " + chosen + " <= " + replicaTimeout);
            }
            EngineConfig config = EngineConfig.defaults()
                    .withWatchdogLease(leaseTime)
                    .withMaxWaiters(maxWaiters)
                    .withLatchExpiry(latchExpiry)
                    .withAsyncExecutor(asyncExecutor);
            if (clientId != null) {
                config = config.withClientId(clientId);
            }
            RedisConnections connections = connect();
            RedisLockStore store = new RedisLockStore(
                    connections,
                    new KeyLayout(keyPrefix),
                    config.clientId(),
                    waiterTimeout,
                    waitStrategy == WaitStrategy.SPIN,
                    connections.isCluster() && waitStrategy != WaitStrategy.SPIN && connections.hasShardedPubSub(),
                    minReplicas,
                    replicaTimeout);
            store.prepareServer();
            return new RedisLockClient(LockEngine.create(store, config), store);
        }

        private static final Duration MIN_COMMAND_TIMEOUT = Duration.ofMillis(1);
        private static final Duration COMMAND_TIMEOUT_FLOOR = Duration.ofSeconds(1);
        /** What a default command timeout keeps above the replica timeout, for the round trip around the WAIT. */
        private static final Duration REPLICA_WAIT_MARGIN = Duration.ofMillis(500);

        /**
         * The standalone (and Sentinel) Lettuce clients this builder makes itself arm no timer per command (a wheel-timer
         * entry made and cancelled for every command). Each command is
         * bounded by distlock instead, with the command timeout: awaited with {@link CommandRunner#await}, which
         * cancels it when the time is up, or {@link CommandRunner#bounded} when it is not awaited at once; either way
         * a command not yet sent is then never sent. Lettuce's synchronous API, used for SCAN, bounds its calls with the
         * command timeout too (set on the connection).
         *
         * <p>Not on a Cluster: there Lettuce writes each command inside a wrapper that completing the command returned
         * to the caller does not mark done, so only Lettuce's own timer, which sits under that wrapper, keeps a command
         * that timed out while a node was unreachable from being sent when it comes back. A client the caller hands in
         * keeps the caller's options.
         */
        private static final TimeoutOptions NO_COMMAND_TIMERS =
                TimeoutOptions.builder().timeoutCommands(false).build();

        /**
         * The command timeout of a client whose connection came with {@code connectionTimeout} (its URI's): see {@link
         * #commandTimeout}.
         */
        private Duration commandTimeoutFor(Duration connectionTimeout) {
            Duration chosen = commandTimeout;
            if (chosen != null) {
                return chosen;
            }
            Duration renewalInterval = leaseTime.dividedBy(3);
            // at least 1 s (or the lease, when shorter): a loaded machine answers slower than a third of a short lease
            Duration floor = leaseTime.compareTo(COMMAND_TIMEOUT_FLOOR) < 0 ? leaseTime : COMMAND_TIMEOUT_FLOOR;
            Duration byLease = renewalInterval.compareTo(floor) < 0 ? floor : renewalInterval;
            Duration timeout = connectionTimeout.compareTo(byLease) < 0 ? connectionTimeout : byLease;
            if (timeout.compareTo(MIN_COMMAND_TIMEOUT) < 0) {
                timeout = MIN_COMMAND_TIMEOUT;
            }
            if (minReplicas > 0) {
                Duration replicaBound = replicaTimeout.plus(REPLICA_WAIT_MARGIN);
                if (timeout.compareTo(replicaBound) < 0) {
                    timeout = replicaBound;
                }
            }
            return timeout;
        }

        private RedisConnections connect() {
            try {
                RedisClusterClient given = clusterClient;
                if (given != null) {
                    return RedisConnections.cluster(given, false, this::commandTimeoutFor);
                }
                if (!clusterSeeds.isEmpty()) {
                    // node connections take their timeout from the seeds: Lettuce's timers use the command timeout
                    List<RedisURI> seeds = new ArrayList<>(clusterSeeds.size());
                    for (RedisURI seed : clusterSeeds) {
                        RedisURI copy = RedisURI.builder(seed).build();
                        copy.setTimeout(commandTimeoutFor(seed.getTimeout()));
                        seeds.add(copy);
                    }
                    RedisClusterClient owned = SharedResources.newClient(r -> RedisClusterClient.create(r, seeds));
                    owned.setOptions(ClusterClientOptions.builder()
                            .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                                    .enableAllAdaptiveRefreshTriggers()
                                    .enablePeriodicRefresh(Duration.ofSeconds(30))
                                    .build())
                            .build());
                    return RedisConnections.cluster(owned, true, this::commandTimeoutFor);
                }
                RedisClient givenClient = redisClient;
                if (givenClient != null) {
                    return RedisConnections.standalone(givenClient, uri, false, this::commandTimeoutFor);
                }
                RedisURI target = Objects.requireNonNull(uri);
                RedisClient owned = SharedResources.newClient(RedisClient::create);
                owned.setOptions(ClientOptions.builder()
                        .timeoutOptions(NO_COMMAND_TIMERS)
                        .build());
                return RedisConnections.standalone(owned, target, true, this::commandTimeoutFor);
            } catch (io.lettuce.core.RedisException e) {
                throw new DistributedLockException("cannot connect to Redis: " + e.getMessage(), e);
            }
        }

        private static RedisURI parse(String uri, String argument) {
            Objects.requireNonNull(uri, argument);
            try {
                return RedisURI.create(uri);
            } catch (RuntimeException e) {
                throw new IllegalArgumentException(argument + " is not a Redis URI: '" + redact(uri) + "'", e);
            }
        }

        /** The URI without its password, for messages. */
        private static String redact(String uri) {
            int scheme = uri.indexOf("://");
            int at = uri.lastIndexOf('@');
            if (scheme < 0 || at < scheme) {
                return uri;
            }
            return uri.substring(0, scheme + 3) + "***" + uri.substring(at);
        }
    }
}
