package io.distlock.redis;

import io.distlock.DistributedCountDownLatch;
import io.distlock.DistributedLock;
import io.distlock.DistributedLockException;
import io.distlock.DistributedReadWriteLock;
import io.distlock.DistributedSemaphore;
import io.distlock.LockAdmin;
import io.distlock.LockClient;
import io.distlock.internal.Checks;
import io.distlock.internal.EngineConfig;
import io.distlock.internal.LockEngine;
import io.distlock.spi.OwnerId;
import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * RedLock: a {@link LockClient} whose locks are held by a majority of N independent Redis nodes (odd N of at least 3,
 * no replication between them), the algorithm of the Redis distributed-lock page. Read it with its limits below:
 * where a fenced lock on one store will do, prefer it.
 *
 * <pre>{@code
 * try (RedLockClient client = RedLockClient.builder()
 *         .nodes("redis://10.0.0.1:6379", "redis://10.0.0.2:6379", "redis://10.0.0.3:6379",
 *                "redis://10.0.0.4:6379", "redis://10.0.0.5:6379")
 *         .build()) {
 *     DistributedLock lock = client.lock("report:daily");
 *     if (lock.tryLock(2, TimeUnit.SECONDS)) {
 *         try {
 *             // ... guarded work ...
 *         } finally {
 *             lock.unlock();
 *         }
 *     }
 * }
 * }</pre>
 *
 * <h2>Guarantees</h2>
 *
 * <ul>
 *   <li>A grant is a majority ({@code N/2 + 1}) of nodes that each set the hold key within one round, while the
 *       validity (lease minus the time the round took minus a clock-drift margin of 1% + 2 ms) is still positive.
 *       Otherwise the client deletes what it got and tries again after a random back-off (or when the holder
 *       releases: releases publish on every node).
 *   <li>Keys live on the nodes for the lease plus the drift margin, while the client counts the lease from before
 *       it sent the round: a hold ends in its owner's view before it can end on a majority of nodes whose clocks run
 *       up to 1% fast.
 *   <li>Release, renewal and the watchdog go to every node. A hold that a majority no longer confirms is reported
 *       lost (listeners, {@link io.distlock.LockLostException} on release). A renewal that a majority confirms also
 *       sets the hold on the nodes that answer without it (never over another owner's), so a hold granted by a bare
 *       majority spreads to every node that answers and outlives a later cut of a minority of nodes.
 *   <li>Keeps working while a majority of the nodes answers; with fewer, every step fails at once with {@link
 *       DistributedLockException} naming the nodes (within the node timeout, never a hang), and holds end when their
 *       last confirmed lease does.
 *   <li>Fencing token: the highest per-node counter among the nodes that granted, written back to a majority before
 *       the grant is returned. While no node loses its data, each token is greater than every token granted before
 *       for the name.
 * </ul>
 *
 * <h2>What RedLock cannot promise</h2>
 *
 * <ul>
 *   <li><b>A node restarted without its data votes again.</b> Its hold key and fence counter are gone, so together
 *       with the nodes that never had the hold it can make a second majority while the first holder still holds:
 *       two holders at once, until the first holder's next renewal finds it lost (up to a third of the lease) or, with
 *       a fixed lease, until that lease ends. Run the nodes with {@code appendfsync always}, or keep a restarted node
 *       out for longer than the longest lease (the Redis page's "delayed restart").
 *   <li><b>Tokens are not a total order.</b> They come from N independent counters; after a node lost its data, the
 *       second holder's token can be higher, equal to or lower than the first holder's (when it is not higher, a
 *       fenced resource refuses the second holder rather than the stale one). Without data loss they grow, but only a store with one linearizable
 *       counter (a fenced single-master Redis lock, ZooKeeper, etcd) makes that an invariant.
 *   <li><b>Pauses and clocks.</b> Like every lease, a holder paused past its lease (GC, swap) acts after it ended;
 *       a node whose clock jumps forward expires keys early. Fence the resource with the token.
 * </ul>
 *
 * <p>Choose a {@link RedisLockClient} on one master (with {@link RedisLockClient.Builder#replicaAcks} if failover
 * matters), or ZooKeeper or etcd, when a resource needs tokens that are totally ordered; choose RedLock for efficiency
 * locks that should survive a minority of nodes being down.
 *
 * <h2>Limits of this client</h2>
 *
 * <p>Exclusive locks only: {@link #fairLock}, read-write locks, semaphores and latches throw {@link
 * UnsupportedOperationException}. Each acquire costs one round to every node at once (two when a node's fence counter
 * was behind), each release one, each watchdog tick one per hold. Every release message goes to every RedLock client
 * of the key prefix.
 *
 * <h2>Requirements</h2>
 *
 * <p>Redis 6.2 or later on every node, independent (not replicas of one another, not one Cluster), with Lua and
 * pub/sub. {@code maxmemory-policy} {@code noeviction} (the RedLock client does not check it).
 */
public final class RedLockClient implements LockClient {
    private final LockEngine engine;
    private final RedLockStore store;

    private RedLockClient(LockEngine engine, RedLockStore store) {
        this.engine = engine;
        this.store = store;
    }

    /** A builder with the defaults: key prefix {@code "distlock:redlock:"}, watchdog lease 30 s, node timeout 200 ms. */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public DistributedLock lock(String name) {
        return engine.lock(name);
    }

    /**
     * Not supported: RedLock keeps no queue across its nodes.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    public DistributedLock fairLock(String name) {
        Checks.name(name);
        throw new UnsupportedOperationException(
                "RedLock has no fair locks (no queue across independent nodes): '" + name + "'; use lock(name)");
    }

    /** Not supported: throws {@link UnsupportedOperationException}. */
    @Override
    public DistributedReadWriteLock readWriteLock(String name) {
        return engine.readWriteLock(name);
    }

    /** Not supported: throws {@link UnsupportedOperationException}. */
    @Override
    public DistributedSemaphore semaphore(String name, int permits) {
        return engine.semaphore(name, permits);
    }

    /** Not supported: throws {@link UnsupportedOperationException}. */
    @Override
    public DistributedCountDownLatch countDownLatch(String name) {
        return engine.countDownLatch(name);
    }

    @Override
    public String clientId() {
        return engine.clientId();
    }

    /** The operator's view: a name is held when a majority of nodes has the same owner's hold. */
    @Override
    public LockAdmin admin() {
        return engine.admin();
    }

    /** How many nodes must agree: {@code N/2 + 1}. */
    public int quorum() {
        return store.quorum();
    }

    /** Releases what the client holds (best effort), then closes the connections to every node. Idempotent. */
    @Override
    public void close() {
        engine.close();
    }

    @Override
    public String toString() {
        return "RedLockClient[" + OwnerId.redact(clientId()) + ", " + store + "]";
    }

    /** Builds a {@link RedLockClient}. Setters validate at once. */
    public static final class Builder {
        private final List<RedisURI> nodes = new ArrayList<>();
        private String keyPrefix = "distlock:redlock:";
        private Duration leaseTime = EngineConfig.DEFAULT_LEASE;
        private Duration nodeTimeout = Duration.ofMillis(200);
        private @Nullable String clientId;
        private @Nullable Executor asyncExecutor;

        private Builder() {}

        /**
         * The independent Redis nodes, as {@code redis://host:port} URIs: an odd number, at least 3.
         *
         * <p>Each node must be listed once: a node listed twice would cast two votes. The same host and port twice
         * is refused here; {@link #build} also refuses two URIs that reach the same server under different names (the
         * same {@code run_id}).
         *
         * @throws NullPointerException if an argument is null
         * @throws IllegalArgumentException if the count is even or below 3, a URI is not a Redis URI, or a host and
         *     port is listed more than once
         */
        public Builder nodes(String... uris) {
            Objects.requireNonNull(uris, "uris");
            if (uris.length < 3 || uris.length % 2 == 0) {
                throw new IllegalArgumentException("RedLock needs an odd number of nodes, at least 3: " + uris.length);
            }
            List<RedisURI> parsed = new ArrayList<>();
            Map<String, Integer> seen = new LinkedHashMap<>();
            for (String u : uris) {
                Objects.requireNonNull(u, "uris");
                RedisURI uri;
                try {
                    uri = RedisURI.create(u);
                } catch (RuntimeException e) {
                    throw new IllegalArgumentException("uris has one that is not a Redis URI: '" + u + "'", e);
                }
                parsed.add(uri);
                seen.merge(uri.getHost().toLowerCase(Locale.ROOT) + ":" + uri.getPort(), 1, Integer::sum);
            }
            List<String> repeated = new ArrayList<>();
            seen.forEach((node, count) -> {
                if (count > 1) {
                    repeated.add(node + " (" + count + " times)");
                }
            });
            if (!repeated.isEmpty()) {
                throw new IllegalArgumentException(
                        "uris lists the same node more than once, which would give it more than one vote: " + repeated);
            }
            nodes.clear();
            nodes.addAll(parsed);
            return this;
        }

        /**
         * The prefix of every key the client writes on the nodes; default {@code "distlock:redlock:"}.
         *
         * @throws IllegalArgumentException if the prefix contains '{' or '}'
         */
        public Builder keyPrefix(String keyPrefix) {
            this.keyPrefix = KeyLayout.checkPrefix(keyPrefix);
            return this;
        }

        /**
         * The lease of holds taken without a lease argument, renewed by the watchdog every third of it; default 30 s.
         *
         * @throws IllegalArgumentException if the lease is not positive or too large
         */
        public Builder leaseTime(Duration leaseTime) {
            this.leaseTime = Checks.lease(leaseTime, "leaseTime");
            return this;
        }

        /**
         * How long a round waits for each node's answer; default 200 ms. Keep it small against the lease: a node that
         * does not answer in time counts as a missing vote.
         *
         * @throws IllegalArgumentException if not positive
         */
        public Builder nodeTimeout(Duration nodeTimeout) {
            this.nodeTimeout = Checks.positive(nodeTimeout, "nodeTimeout");
            return this;
        }

        /**
         * The client's identity on the nodes; default a random id with the process id.
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
         * Connects to the nodes and returns the client.
         *
         * @throws IllegalStateException if no nodes were given
         * @throws IllegalArgumentException if two of the nodes that answer are the same server (the same {@code
         *     run_id})
         * @throws DistributedLockException if fewer than a majority of the nodes can be reached
         */
        public RedLockClient build() {
            if (nodes.isEmpty()) {
                throw new IllegalStateException("no nodes chosen: call nodes(...)");
            }
            EngineConfig config =
                    EngineConfig.defaults().withWatchdogLease(leaseTime).withAsyncExecutor(asyncExecutor);
            if (clientId != null) {
                config = config.withClientId(clientId);
            }
            RedLockStore store = new RedLockStore(List.copyOf(nodes), new KeyLayout(keyPrefix), nodeTimeout);
            store.connect();
            return new RedLockClient(LockEngine.create(store, config), store);
        }
    }
}
