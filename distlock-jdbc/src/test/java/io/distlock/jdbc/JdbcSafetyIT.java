package io.distlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import io.distlock.DistributedLock;
import io.distlock.DistributedLockException;
import io.distlock.LockClient;
import io.distlock.LockHold;
import io.distlock.LockLostException;
import io.distlock.internal.EngineConfig;
import io.distlock.internal.Ticker;
import io.distlock.testkit.CounterWorkload;
import io.distlock.testkit.Eventually;
import io.distlock.testkit.RecordingLockListener;
import io.distlock.testkit.SemaphoreAsLock;
import io.distlock.testkit.Timing;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The failures issue 4 asks to see: clients whose clocks disagree by minutes, a holder whose database session is
 * killed, and the pool exhaustion of seed 001's {@code FOR UPDATE} lock. The clock and session scenarios run on every
 * {@link Kind} of hold the mode keeps (issue 23): locks, read and write holds of read-write locks, semaphore permits.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class JdbcSafetyIT {
    private static final Duration MINUTES_OFF = Duration.ofMinutes(10);

    private final Map<TestDatabase, TestDatabase.Env> envs = new EnumMap<>(TestDatabase.class);
    private final List<AutoCloseable> closeAfterTest = new CopyOnWriteArrayList<>();

    private TestDatabase.Env env(TestDatabase db) {
        return envs.computeIfAbsent(db, d -> {
            TestDatabase.Env e = d.start(JdbcSafetyIT.class);
            JdbcLockClient.builder()
                    .dataSource(e.pool)
                    .tableName(e.table)
                    .createSchemaIfMissing()
                    .build()
                    .close();
            return e;
        });
    }

    @AfterEach
    void closeClients() throws Exception {
        for (AutoCloseable c : closeAfterTest) {
            try {
                c.close();
            } catch (RuntimeException e) {
                // a test may have broken it on purpose
            }
        }
        closeAfterTest.clear();
    }

    @AfterAll
    void stopDatabases() {
        envs.values().forEach(TestDatabase.Env::close);
    }

    private JdbcLockClient client(
            TestDatabase db, DataSource ds, JdbcLockClient.Mode mode, Duration lease, Ticker ticker) {
        JdbcLockClient c = JdbcLockClient.builder()
                .dataSource(ds)
                .tableName(env(db).table)
                .mode(mode)
                .leaseTime(lease)
                .engineConfig(EngineConfig.defaults().withTicker(ticker))
                .build();
        closeAfterTest.add(c);
        return c;
    }

    private static Ticker skewed(Duration offset) {
        long off = offset.toNanos();
        return () -> System.nanoTime() + off;
    }

    // ---------------------------------------------------------------- clocks that disagree by minutes

    static Stream<Arguments> skewedFixedLeaseCases() {
        return cases(
                List.of(TestDatabase.H2_MEM, TestDatabase.MARIADB, TestDatabase.POSTGRESQL), List.of(Kind.values()));
    }

    @ParameterizedTest
    @MethodSource("skewedFixedLeaseCases")
    void skewedClients_fixedLease_expiryIsJudgedByTheDatabaseClock(TestDatabase db, Kind kind) throws Exception {
        TestDatabase.Env e = env(db);
        JdbcLockClient ahead =
                client(db, e.pool, JdbcLockClient.Mode.TABLE, Duration.ofSeconds(30), skewed(MINUTES_OFF));
        JdbcLockClient behind =
                client(db, e.pool, JdbcLockClient.Mode.TABLE, Duration.ofSeconds(30), skewed(MINUTES_OFF.negated()));
        String name = "skew-" + UUID.randomUUID();

        DistributedLock a = kind.holder(ahead, name);
        DistributedLock b = kind.excluded(behind, name);
        long start = System.nanoTime();
        assertThat(a.tryLock(0, 2, TimeUnit.SECONDS)).isTrue();
        assertThat(b.tryLock())
                .as("a client ten minutes behind still sees the hold")
                .isFalse();
        assertThat(b.tryLock(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS))
                .as("granted when the lease ends by database time, not minutes later")
                .isTrue();
        long waited = System.nanoTime() - start;
        assertThat(waited)
                .as("not before the 2 s lease ended")
                .isGreaterThanOrEqualTo(Duration.ofMillis(1900).toNanos());
        assertThat(a.tryLock())
                .as("a client ten minutes ahead does not think the new hold expired")
                .isFalse();
        assertThat(b.fencingToken()).isPositive();
        b.unlock();
    }

    /** The kinds that exclude their own kind (not read holds). */
    static Stream<Arguments> skewedCounterCases() {
        return cases(
                List.of(TestDatabase.H2_MEM, TestDatabase.MARIADB, TestDatabase.POSTGRESQL),
                List.of(Kind.LOCK, Kind.WRITE, Kind.PERMIT));
    }

    @ParameterizedTest
    @MethodSource("skewedCounterCases")
    void skewedClients_contendedCounter_neverGrantTwice(TestDatabase db, Kind kind) {
        TestDatabase.Env e = env(db);
        Duration lease = Duration.ofMillis(1500); // short, so that the watchdog renews many times during the run
        JdbcLockClient ahead = client(db, e.pool, JdbcLockClient.Mode.TABLE, lease, skewed(MINUTES_OFF));
        JdbcLockClient behind = client(db, e.pool, JdbcLockClient.Mode.TABLE, lease, skewed(MINUTES_OFF.negated()));
        String name = "skew-counter-" + UUID.randomUUID();
        List<DistributedLock> locks = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            locks.add(kind.holder(ahead, name));
            locks.add(kind.holder(behind, name));
        }
        CounterWorkload.Result r = CounterWorkload.run(locks, Duration.ofSeconds(4), Duration.ofMillis(2));
        assertThat(r.increments()).as("the workload made progress").isPositive();
        assertThat(r.maxInside()).as("threads inside at once").isEqualTo(1);
        assertThat(r.rejected()).as("stale fencing tokens").isZero();
        assertThat(r.lostIncrements()).isZero();
        assertThat(r.perThread()).as("both skewed clients got the lock").allMatch(n -> n > 0);
    }

    // ---------------------------------------------------------------- the holder's session is killed

    static Stream<Arguments> tableKilledCases() {
        return cases(List.of(TestDatabase.MARIADB, TestDatabase.POSTGRESQL), List.of(Kind.values()));
    }

    @ParameterizedTest
    @MethodSource("tableKilledCases")
    void table_holderSessionsKilled_holdSurvives_untilItCannotRenew_thenLostAndReported(TestDatabase db, Kind kind)
            throws Exception {
        TestDatabase.Env e = env(db);
        SessionTracking holderPool = new SessionTracking(TestDatabase.pool(e.url, e.user, e.password, 4), db);
        closeAfterTest.add(holderPool);
        Duration lease = Duration.ofMillis(1500);
        JdbcLockClient holder = client(db, holderPool, JdbcLockClient.Mode.TABLE, lease, Ticker.system());
        JdbcLockClient other = client(db, e.pool, JdbcLockClient.Mode.TABLE, lease, Ticker.system());
        String name = "killed-" + UUID.randomUUID();
        DistributedLock lock = kind.holder(holder, name);
        RecordingLockListener listener = new RecordingLockListener();
        lock.addListener(listener);
        lock.lock();
        long token = lock.fencingToken();

        holderPool.killAll(e); // every server session of the holder's pool
        Timing.sleep(lease.multipliedBy(2));
        assertThat(lock.isHeldByCurrentThread())
                .as("a TABLE hold lives in the table, not in a session: renewal reconnects")
                .isTrue();
        assertThat(kind.excluded(other, name).tryLock())
                .as("another client while the hold is renewed")
                .isFalse();

        holderPool.cut = true; // the holder cannot reach the database any more
        holderPool.killAll(e);
        Eventually.within(
                Timing.seconds(5), "holder told lost", () -> listener.lost().contains(token));
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        DistributedLock next = kind.excluded(other, name);
        assertThat(next.tryLock(Timing.seconds(5).toMillis(), TimeUnit.MILLISECONDS))
                .as("the database expired the hold")
                .isTrue();
        assertThat(next.fencingToken()).isGreaterThan(token);
        holderPool.cut = false;
        assertThatThrownBy(lock::unlock).isInstanceOf(LockLostException.class);
        next.unlock();
    }

    /** Every kind a session mode keeps on that database: locks, and read-write locks where it has a shared mode. */
    static Stream<Arguments> sessionKilledCases() {
        return Stream.of(SessionCase.values()).flatMap(c -> Stream.of(Kind.values())
                .filter(k -> k == Kind.LOCK || (c.readWrite && (k == Kind.READ || k == Kind.WRITE)))
                .map(k -> Arguments.of(c, k)));
    }

    @ParameterizedTest
    @MethodSource("sessionKilledCases")
    void sessionModes_holderSessionKilled_lockReleased_andHolderToldLost(SessionCase c, Kind kind) throws Exception {
        TestDatabase.Env e = env(c.db);
        Duration lease = Duration.ofMillis(1500);
        JdbcLockClient holder = client(c.db, e.pool, c.mode, lease, Ticker.system());
        JdbcLockClient other = client(c.db, e.pool, c.mode, lease, Ticker.system());
        String name = "killed-" + UUID.randomUUID();
        DistributedLock lock = kind.holder(holder, name);
        RecordingLockListener listener = new RecordingLockListener();
        lock.addListener(listener);
        lock.lock();
        long token = lock.fencingToken();
        DistributedLock next = kind.excluded(other, name);
        assertThat(next.tryLock()).isFalse();

        killSessionOf(c, holder, name);

        long killed = System.nanoTime();
        assertThat(next.tryLock(Timing.seconds(5).toMillis(), TimeUnit.MILLISECONDS))
                .as("the database released the lock with the session")
                .isTrue();
        assertThat(System.nanoTime() - killed)
                .as("released at once, with no lease to wait out")
                .isLessThan(Timing.seconds(3).toNanos());
        assertThat(next.fencingToken()).isGreaterThan(token);
        Eventually.within(Timing.seconds(3), "holder told lost at its next renewal", () -> listener.lost()
                .contains(token));
        assertThatThrownBy(lock::unlock).isInstanceOf(LockLostException.class);
        next.unlock();
    }

    /**
     * Two readers hold and one reader's session is killed: that reader is told lost, the other keeps its hold through
     * its renewals, and a writer gets in only once the surviving reader releases.
     */
    @ParameterizedTest
    @EnumSource(
            value = SessionCase.class,
            names = {"ROW_LOCK_MARIADB", "ROW_LOCK_POSTGRESQL", "ADVISORY_POSTGRESQL"})
    void sessionModes_oneOfTwoReaderSessionsKilled_otherReaderKeepsItsHold_writerAfterIt(SessionCase c)
            throws Exception {
        TestDatabase.Env e = env(c.db);
        Duration lease = Duration.ofMillis(1500);
        JdbcLockClient killedClient = client(c.db, e.pool, c.mode, lease, Ticker.system());
        JdbcLockClient survivorClient = client(c.db, e.pool, c.mode, lease, Ticker.system());
        JdbcLockClient writerClient = client(c.db, e.pool, c.mode, lease, Ticker.system());
        String name = "killed-reader-" + UUID.randomUUID();
        DistributedLock killed = Kind.READ.holder(killedClient, name);
        DistributedLock survivor = Kind.READ.holder(survivorClient, name);
        RecordingLockListener killedListener = new RecordingLockListener();
        RecordingLockListener survivorListener = new RecordingLockListener();
        killed.addListener(killedListener);
        survivor.addListener(survivorListener);
        killed.lock();
        survivor.lock();
        long killedToken = killed.fencingToken();
        long survivorToken = survivor.fencingToken();
        DistributedLock writer = Kind.READ.excluded(writerClient, name);
        assertThat(writer.tryLock()).as("a writer while two readers hold").isFalse();

        killSessionOf(c, killedClient, name);
        Eventually.within(Timing.seconds(3), "killed reader told lost at its next renewal", () -> killedListener
                .lost()
                .contains(killedToken));
        assertThatThrownBy(killed::unlock).isInstanceOf(LockLostException.class);
        Timing.sleep(lease); // the survivor renews at least once more
        assertThat(survivor.isHeldByCurrentThread())
                .as("the other reader's hold is on its own session")
                .isTrue();
        assertThat(survivorListener.lost()).isEmpty();
        assertThat(writer.tryLock())
                .as("a writer while the surviving reader holds")
                .isFalse();

        survivor.unlock();
        assertThat(writer.tryLock(Timing.seconds(5).toMillis(), TimeUnit.MILLISECONDS))
                .as("a writer once the surviving reader released")
                .isTrue();
        assertThat(writer.fencingToken()).isGreaterThan(Math.max(killedToken, survivorToken));
        writer.unlock();
    }

    /** Kills the one server session that holds {@code name} for {@code holder}, as an operator would. */
    private void killSessionOf(SessionCase c, JdbcLockClient holder, String name) {
        List<Long> sessions = ((JdbcSessionLockStore) holder.store()).sessionIds(name);
        assertThat(sessions).as("one session per hold").hasSize(1);
        env(c.db)
                .execute(
                        c.db == TestDatabase.POSTGRESQL
                                ? "SELECT pg_terminate_backend(" + sessions.get(0) + ")"
                                : "KILL CONNECTION " + sessions.get(0));
    }

    enum SessionCase {
        ROW_LOCK_MARIADB(TestDatabase.MARIADB, JdbcLockClient.Mode.ROW_LOCK, true),
        ROW_LOCK_POSTGRESQL(TestDatabase.POSTGRESQL, JdbcLockClient.Mode.ROW_LOCK, true),
        ADVISORY_MARIADB(TestDatabase.MARIADB, JdbcLockClient.Mode.ADVISORY, false),
        ADVISORY_POSTGRESQL(TestDatabase.POSTGRESQL, JdbcLockClient.Mode.ADVISORY, true);

        final TestDatabase db;
        final JdbcLockClient.Mode mode;
        /** Whether the mode keeps read-write locks on this database (semaphores it refuses everywhere). */
        final boolean readWrite;

        SessionCase(TestDatabase db, JdbcLockClient.Mode mode, boolean readWrite) {
            this.db = db;
            this.mode = mode;
            this.readWrite = readWrite;
        }
    }

    // ---------------------------------------------------------------- the kinds of hold

    /** The kinds of hold a scenario runs on, each seen as a {@link DistributedLock}. */
    enum Kind {
        LOCK,
        READ,
        WRITE,
        /** The permit of a one-permit semaphore, through {@link SemaphoreAsLock}'s lock view. */
        PERMIT;

        /** The holder's claim on {@code name}. */
        DistributedLock holder(LockClient client, String name) {
            return switch (this) {
                case LOCK -> client.lock(name);
                case READ -> client.readWriteLock(name).readLock();
                case WRITE -> client.readWriteLock(name).writeLock();
                case PERMIT -> new SemaphoreAsLock.Client(client).lock(name);
            };
        }

        /** A claim on {@code name} that this kind's hold keeps out: a writer for a read hold, else the same kind. */
        DistributedLock excluded(LockClient client, String name) {
            return this == READ ? WRITE.holder(client, name) : holder(client, name);
        }
    }

    private static Stream<Arguments> cases(List<TestDatabase> dbs, List<Kind> kinds) {
        return dbs.stream().flatMap(db -> kinds.stream().map(k -> Arguments.of(db, k)));
    }

    // ---------------------------------------------------------------- seed 001: FOR UPDATE pins a pooled connection

    @ParameterizedTest
    @EnumSource(
            value = TestDatabase.class,
            names = {"MARIADB", "POSTGRESQL"})
    void rowLock_moreHoldsThanPinnedConnections_failsAtOnce_withClearError_poolStillServes(TestDatabase db)
            throws Exception {
        TestDatabase.Env e = env(db);
        // a small pool whose own timeout (30 s) is what seed 001's lock would hang on
        HikariDataSource pool = TestDatabase.pool(e.url, e.user, e.password, 3);
        pool.setConnectionTimeout(30_000);
        closeAfterTest.add(pool);
        JdbcLockClient rowLocks = JdbcLockClient.builder()
                .dataSource(pool)
                .tableName(e.table)
                .mode(JdbcLockClient.Mode.ROW_LOCK)
                .maxPinnedConnections(2)
                .build();
        closeAfterTest.add(rowLocks);
        String prefix = "pinned-" + UUID.randomUUID() + "-";
        List<LockHold> holds = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            Optional<LockHold> h = rowLocks.lock(prefix + i).tryAcquire(Duration.ZERO);
            assertThat(h).isPresent();
            holds.add(h.orElseThrow());
        }
        long start = System.nanoTime();
        assertThatThrownBy(() -> rowLocks.lock(prefix + "2").tryAcquire(Duration.ofSeconds(5)))
                .isInstanceOf(DistributedLockException.class)
                .hasMessageContaining("maxPinnedConnections")
                .hasMessageContaining("pins 2");
        assertThat(System.nanoTime() - start)
                .as("fails at once, not at the pool's timeout")
                .isLessThan(Timing.seconds(2).toNanos());
        // the pool still has a connection for everything else the application and the client do
        assertThat(rowLocks.admin().inspect(prefix + "0")).isPresent();
        try (Connection c = pool.getConnection()) {
            assertThat(c.isValid(1)).isTrue();
        }
        holds.get(0).release();
        Optional<LockHold> third = rowLocks.lock(prefix + "2").tryAcquire(Duration.ZERO);
        assertThat(third).as("a released hold gives its connection back").isPresent();
        third.orElseThrow().release();
        holds.get(1).release();
    }

    /**
     * Many threads of one client waiting for one name in ROW_LOCK with few pins: at most one of them holds, so at most
     * one connection is pinned by a hold; the others' attempts take pins only for a round trip each. None may fail
     * with the pin limit.
     */
    @ParameterizedTest
    @EnumSource(
            value = TestDatabase.class,
            names = {"MARIADB", "POSTGRESQL"})
    void rowLock_manyWaitersOfOneClientOnOneName_fewPins_everyWaiterGetsIt(TestDatabase db) throws Exception {
        TestDatabase.Env e = env(db);
        HikariDataSource pool = TestDatabase.pool(e.url, e.user, e.password, 6);
        closeAfterTest.add(pool);
        JdbcLockClient rowLocks = JdbcLockClient.builder()
                .dataSource(pool)
                .tableName(e.table)
                .mode(JdbcLockClient.Mode.ROW_LOCK)
                .maxPinnedConnections(2)
                .build();
        closeAfterTest.add(rowLocks);
        String name = "waiters-" + UUID.randomUUID();
        int threads = 24;
        java.util.concurrent.atomic.AtomicInteger acquired = new java.util.concurrent.atomic.AtomicInteger();
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        List<Thread> waiters = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            Thread t = new Thread(() -> {
                try {
                    go.await();
                    Optional<LockHold> h = rowLocks.lock(name).tryAcquire(Timing.seconds(60));
                    if (h.isPresent()) {
                        acquired.incrementAndGet();
                        Thread.sleep(5);
                        h.get().release();
                    }
                } catch (Throwable t2) {
                    failures.add(t2);
                }
            });
            t.start();
            waiters.add(t);
        }
        go.countDown();
        for (Thread t : waiters) {
            t.join(Timing.seconds(90).toMillis());
        }
        assertThat(failures).as("waiters that failed").isEmpty();
        assertThat(acquired.get()).as("waiters that got the lock").isEqualTo(threads);
    }

    /** A pool that remembers the server session of every connection it hands out, and can refuse connections. */
    static final class SessionTracking implements DataSource, AutoCloseable {
        private final HikariDataSource pool;
        private final TestDatabase db;
        private final List<Long> sessions = new CopyOnWriteArrayList<>();
        volatile boolean cut;

        SessionTracking(HikariDataSource pool, TestDatabase db) {
            this.pool = pool;
            this.db = db;
        }

        @Override
        public Connection getConnection() throws SQLException {
            if (cut) {
                throw new SQLException("network cut by the test", "08001");
            }
            Connection c = pool.getConnection();
            long id = Dialect.queryLong(
                    c, db == TestDatabase.POSTGRESQL ? "SELECT pg_backend_pid()" : "SELECT CONNECTION_ID()");
            if (!sessions.contains(id)) {
                sessions.add(id);
            }
            return c;
        }

        void killAll(TestDatabase.Env e) {
            for (long id : sessions) {
                try {
                    e.execute(
                            db == TestDatabase.POSTGRESQL
                                    ? "SELECT pg_terminate_backend(" + id + ")"
                                    : "KILL CONNECTION " + id);
                } catch (RuntimeException ignored) {
                    // already gone
                }
            }
            sessions.clear();
        }

        @Override
        public Connection getConnection(String username, String password) throws SQLException {
            return getConnection();
        }

        @Override
        public PrintWriter getLogWriter() throws SQLException {
            return pool.getLogWriter();
        }

        @Override
        public void setLogWriter(PrintWriter out) throws SQLException {
            pool.setLogWriter(out);
        }

        @Override
        public void setLoginTimeout(int seconds) throws SQLException {
            pool.setLoginTimeout(seconds);
        }

        @Override
        public int getLoginTimeout() throws SQLException {
            return pool.getLoginTimeout();
        }

        @Override
        public Logger getParentLogger() {
            return Logger.getLogger("distlock");
        }

        @Override
        public <T> T unwrap(Class<T> iface) throws SQLException {
            return pool.unwrap(iface);
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) throws SQLException {
            return pool.isWrapperFor(iface);
        }

        @Override
        public void close() {
            pool.close();
        }
    }
}
