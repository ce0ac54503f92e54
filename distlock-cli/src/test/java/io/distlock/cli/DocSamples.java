package io.distlock.cli;

import com.zaxxer.hikari.SQLExceptionOverride;
import io.distlock.DistributedCountDownLatch;
import io.distlock.DistributedLock;
import io.distlock.DistributedReadWriteLock;
import io.distlock.DistributedSemaphore;
import io.distlock.LockClient;
import io.distlock.LockHold;
import io.distlock.MultiLock;
import io.distlock.MultiLockHold;
import io.distlock.PermitHold;
import io.distlock.etcd.EtcdLockClient;
import io.distlock.jdbc.JdbcLockClient;
import io.distlock.reactor.ReactiveLocks;
import io.distlock.redis.RedLockClient;
import io.distlock.redis.RedisLockClient;
import io.distlock.zookeeper.ZooKeeperLockClient;
import io.etcd.jetcd.Client;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.apache.curator.framework.api.ACLProvider;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The Java samples of README.md, docs/ and the backends' javadoc, compiled. Each {@code tag::NAME[]} ... {@code
 * end::NAME[]} region is shown where a page says {@code <!-- sample: NAME -->}; {@link DocSamplesTest} fails when the
 * two differ. Compiled, never run.
 */
@SuppressWarnings({"unused", "UnusedVariable", "try"})
final class DocSamples {
    private DocSamples() {}

    /** What the samples write to: a resource that refuses stale fencing tokens. */
    interface Resource {
        void write(long fencingToken, byte[] data);
    }

    interface Ledger {
        void post(long fencingToken, String entry);
    }

    interface Orders {
        void update(long fencingToken, String order);
    }

    static void readme(Ledger ledger, String entry, Resource resource, byte[] data) throws InterruptedException {
        // tag::readme-use[]
        try (LockClient client = RedisLockClient.create("redis://localhost:6379")) {
            DistributedLock lock = client.lock("order:123"); // a java.util.concurrent.locks.Lock
            lock.lock(); // waits; the watchdog renews the lease
            try {
                ledger.post(lock.fencingToken(), entry); // the resource refuses stale tokens
            } finally {
                lock.unlock();
            }

            if (lock.tryLock(5, 30, TimeUnit.SECONDS)) { // wait at most 5 s; fixed 30 s lease, no renewal
                try {
                    ledger.post(lock.fencingToken(), entry);
                } finally {
                    lock.unlock();
                }
            }

            try (LockHold hold = lock.acquire()) { // owned by the hold, releasable from any thread
                resource.write(hold.fencingToken(), data);
            }
        }
        // end::readme-use[]
    }

    static void redis(Resource resource, byte[] data) throws InterruptedException {
        // tag::redis-client[]
        try (LockClient client = RedisLockClient.create("redis://localhost:6379")) {
            DistributedLock lock = client.lock("order:123");
            lock.lock();
            try {
                // ... guarded work ...
            } finally {
                lock.unlock();
            }
            try (LockHold hold = lock.acquire()) {
                resource.write(hold.fencingToken(), data); // the resource refuses stale tokens
            }
        }
        // end::redis-client[]
    }

    static RedisLockClient redisBuilder() {
        // tag::redis-builder[]
        RedisLockClient client = RedisLockClient.builder()
                .uri("rediss://app:secret@redis.internal:6380/0") // or .cluster("redis://n1:7000", "redis://n2:7001")
                // or .redisClient(existing) / .clusterClient(existing)
                .keyPrefix("distlock:") // default; no braces
                .leaseTime(Duration.ofSeconds(30)) // default watchdog lease, renewed every 10 s
                .waiterTimeout(Duration.ofSeconds(5)) // default: a dead fair-lock waiter is evicted after this
                .waitStrategy(RedisLockClient.WaitStrategy.PUB_SUB) // default; SPIN where pub/sub is unavailable
                .replicaAcks(1, Duration.ofMillis(500)) // optional: WAIT for replicas after every grant
                .clientId("billing-7") // label, default pid<pid>; a 128-bit secret is appended
                .build();
        // end::redis-builder[]
        return client;
    }

    static void jdbc(DataSource dataSource) throws InterruptedException {
        // tag::jdbc-client[]
        try (JdbcLockClient client = JdbcLockClient.create(dataSource)) { // mode TABLE, tables distlock_*
            DistributedLock lock = client.lock("order:123");
            lock.lock();
            try {
                // ... guarded work ...
            } finally {
                lock.unlock();
            }
            try (LockHold hold = lock.acquire()) {
                // UPDATE orders SET ..., fence = ? WHERE id = ? AND fence <= ?   (bind hold.fencingToken())
            }
        }
        // end::jdbc-client[]
    }

    static JdbcLockClient jdbcBuilder(DataSource hikariDataSource) {
        // tag::jdbc-builder[]
        JdbcLockClient client = JdbcLockClient.builder()
                .dataSource(hikariDataSource) // required; use a pool
                .tableName("distlock") // default; prefix of distlock_lock, _queue, _row, _fence, _name, _claim, _latch…
                .mode(JdbcLockClient.Mode.TABLE) // default; or ROW_LOCK, ADVISORY
                .leaseTime(Duration.ofSeconds(30)) // default watchdog lease, renewed every 10 s
                .dialect("postgresql") // default: detected (postgresql, mariadb, mysql, h2)
                .createSchemaIfMissing() // opt-in: run the DDL below at build()
                .maxPinnedConnections(8) // default; ROW_LOCK and ADVISORY only
                .clientId("billing-7") // label, default pid<pid>; a 128-bit secret is appended
                .latchExpiry(Duration.ofDays(1)) // default; a latch's row lives this long after its last change
                .build();
        // end::jdbc-builder[]
        return client;
    }

    static void h2PoolEviction(com.zaxxer.hikari.HikariConfig config) {
        // tag::jdbc-h2-pool-eviction[]
        config.setExceptionOverride(
                new SQLExceptionOverride() { // HikariCP 5+
                    @java.lang.Override // Override alone is the interface's enum here
                    public SQLExceptionOverride.Override adjudicate(SQLException e) {
                        return switch (e.getErrorCode()) {
                            case 90067, 90098, 90121 -> SQLExceptionOverride.Override.MUST_EVICT;
                            default -> SQLExceptionOverride.Override.CONTINUE_EVICT;
                        };
                    }
                });
        // end::jdbc-h2-pool-eviction[]
    }

    static void zookeeper(Resource resource, byte[] data) throws InterruptedException {
        // tag::zookeeper-client[]
        try (LockClient client = ZooKeeperLockClient.create("zk1:2181,zk2:2181,zk3:2181")) {
            DistributedLock lock = client.lock("order:123");
            lock.lock();
            try {
                // ... guarded work ...
            } finally {
                lock.unlock();
            }
            try (LockHold hold = lock.acquire()) {
                resource.write(hold.fencingToken(), data);
            }
        }
        // end::zookeeper-client[]
    }

    static ZooKeeperLockClient zookeeperBuilder(ACLProvider myAclProvider, String password) {
        // tag::zookeeper-builder[]
        ZooKeeperLockClient client = ZooKeeperLockClient.builder()
                .connectString("zk1:2181,zk2:2181,zk3:2181/myapp") // or .curator(existingStartedCuratorFramework)
                .rootPath("/distlock") // default
                .sessionTimeout(Duration.ofSeconds(30)) // default; the server bounds it to 2..20 ticks
                .connectionTimeout(Duration.ofSeconds(10)) // default
                .digest("locker", password) // optional: digest auth; nodes creator-only
                .tls(Path.of("/etc/zk/ca.pem"), "") // optional: TLS to secureClientPort
                .tlsClientCertificate(Path.of("/etc/zk/client.pem"), "") // optional: for ssl.clientAuth=need
                .aclProvider(myAclProvider) // default: creator-only with digest, open without
                .leaseTime(Duration.ofSeconds(10)) // default: a third of the session timeout
                .clientId("billing-7") // label, default pid<pid>; a 128-bit secret is appended
                .build();
        // end::zookeeper-builder[]
        return client;
    }

    static void etcd(Orders orders, String order) throws InterruptedException {
        // tag::etcd-client[]
        try (LockClient client = EtcdLockClient.create("http://127.0.0.1:2379")) {
            DistributedLock lock = client.lock("order:123");
            lock.lock();
            try {
                // ... guarded work ...
            } finally {
                lock.unlock();
            }
            try (LockHold hold = lock.acquire()) {
                orders.update(hold.fencingToken(), order); // the resource refuses stale tokens
            }
        }
        // end::etcd-client[]
    }

    static EtcdLockClient etcdBuilder(String secret, Client existingJetcdClient) {
        // tag::etcd-builder[]
        EtcdLockClient client = EtcdLockClient.builder()
                .endpoints("https://etcd-1:2379,https://etcd-2:2379,https://etcd-3:2379")
                .trustCertificates(Path.of("/etc/etcd/ca.pem")) // TLS; https:// alone uses the JVM trust store
                .clientCertificate(Path.of("client.pem"), Path.of("client-key.pem")) // for --client-cert-auth
                .user("locks")
                .password(secret) // etcd authentication
                .namespace("billing/locks/") // key prefix, default "distlock/"
                .leaseTtl(Duration.ofSeconds(15)) // watchdog lease, default 30 s
                .requestTimeout(Duration.ofSeconds(5)) // per request, default 5 s
                .build();

        // an existing jetcd Client, not closed by the lock client
        EtcdLockClient shared =
                EtcdLockClient.builder().client(existingJetcdClient).build();
        // end::etcd-builder[]
        return client;
    }

    /** What the asynchronous samples bill and pay with. */
    interface Billing {
        CompletableFuture<Receipt> charge(String invoice, long fencingToken);
    }

    interface Receipt {}

    interface Row {}

    interface Repository {
        Flux<Row> export(long fencingToken);
    }

    interface Psp {
        Mono<Receipt> charge(String order);
    }

    interface Accounts {
        void debit(long fencingToken, long amount);
    }

    /** The asynchronous samples of docs/async.md, as a service's methods. */
    abstract static class AsyncSamples {
        abstract void export(LockHold hold);

        abstract void skip();

        @SuppressWarnings({"FutureReturnValueIgnored", "CheckReturnValue"}) // as a caller that does not wait
        void futures(LockClient client, Billing billing, String invoice) {
            // tag::async-futures[]
            DistributedLock lock = client.lock("invoice:42");
            lock.acquireAsync()
                    .thenCompose(hold -> billing.charge(invoice, hold.fencingToken()) // CompletableFuture<Receipt>
                            .whenComplete((receipt, error) -> hold.releaseAsync()));

            // at most 2 s, with a fixed lease of 10 s (no watchdog)
            lock.tryAcquireAsync(Duration.ofSeconds(2), Duration.ofSeconds(10))
                    .thenAccept(hold -> hold.ifPresentOrElse(this::export, this::skip));
            // end::async-futures[]
        }
    }

    static void reactor(LockClient client, Repository repository, Psp psp, String order) {
        // tag::async-reactor[]
        Mono<LockHold> hold = ReactiveLocks.acquire(client.lock("report:42")); // acquires on each subscription
        Mono<LockHold> maybe =
                ReactiveLocks.tryAcquire(client.lock("report:42"), Duration.ofSeconds(2)); // empty if the wait ran out

        Flux<Row> rows = ReactiveLocks.withLock(client.lock("report:42"), h -> repository.export(h.fencingToken()));
        Mono<Receipt> paid = ReactiveLocks.withPermitsMono(client.semaphore("psp", 8), 1, h -> psp.charge(order));
        // end::async-reactor[]
    }

    static void etcdKinds(EtcdLockClient client) throws InterruptedException {
        // tag::etcd-kinds[]
        DistributedReadWriteLock rw = client.readWriteLock("catalog");
        rw.readLock().lock(); // many readers at once, across clients
        DistributedSemaphore exports = client.semaphore("exports", 4);
        try (PermitHold p = exports.acquire(2)) { // at most 4 permits in use, across clients
            // export
        }
        DistributedCountDownLatch ready = client.countDownLatch("batch-42");
        boolean set = ready.trySetCount(3); // elsewhere: ready.countDown(); here: ready.await(...)
        // end::etcd-kinds[]
    }

    static RedLockClient redLock() {
        // tag::redlock-builder[]
        RedLockClient client = RedLockClient.builder()
                .nodes("redis://a:6379", "redis://b:6379", "redis://c:6379", "redis://d:6379", "redis://e:6379")
                .build();
        // end::redlock-builder[]
        return client;
    }

    @SuppressWarnings("NullAway") // both names are members, so both tokens are there
    static void multiLock(LockClient redis, LockClient jdbc, Accounts accounts, Ledger ledger, String entry)
            throws InterruptedException {
        // tag::multilock-use[]
        MultiLock transfer = MultiLock.of(redis.lock("account:1"), redis.lock("account:2"), jdbc.lock("ledger"));
        try (MultiLockHold hold = transfer.acquire()) {
            accounts.debit(hold.fencingTokens().get("account:1"), 100);
            ledger.post(hold.fencingTokens().get("ledger"), entry);
        }
        // end::multilock-use[]
    }
}
