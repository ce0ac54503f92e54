package io.distlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLock;
import io.distlock.LockClient;
import io.distlock.LockLostException;
import io.distlock.testkit.ChildProcess;
import io.distlock.testkit.Eventually;
import io.distlock.testkit.MultiProcessSynchronizerContract;
import io.distlock.testkit.ReadWriteLockContract;
import io.distlock.testkit.RecordingLockListener;
import io.distlock.testkit.Timing;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Read-write locks in the session modes (ROW_LOCK: the name's row locked FOR UPDATE NOWAIT or in share mode with
 * NOWAIT; ADVISORY on PostgreSQL: exclusive and shared advisory locks; waiters ordered by the queue table): the whole
 * read-write lock contract, its cases across processes, and what a killed session does to a downgraded hold, as a user
 * holding only the grants docs/backends/jdbc.md lists for the mode. Killed sessions of plain read and write holds are
 * {@link JdbcSafetyIT}'s scenarios, run there on every kind of hold. Run by {@link RowLockReadWritePostgresIT}, {@link
 * RowLockReadWriteMariaDbIT} and {@link AdvisoryReadWritePostgresIT}.
 */
abstract class SessionReadWriteCases extends GrantsFixture implements ReadWriteLockContract {
    /**
     * Whether LockAdmin.inspect sees every holder's session (PostgreSQL's pg_locks shows advisory holders; no database
     * says which sessions hold a row in share mode).
     */
    boolean inspectSeesEveryHolder() {
        return false;
    }

    /** The read-write cases of the multi-process contract (its semaphore and latch cases are not for this mode). */
    private final MultiProcessSynchronizerContract processes = new MultiProcessSynchronizerContract() {
        @Override
        public LockClient createClient(Duration watchdogLease) {
            return SessionReadWriteCases.this.createClient(watchdogLease);
        }

        @Override
        public void expireHold(String name) {
            SessionReadWriteCases.this.expireHold(name);
        }

        @Override
        public List<String> residue(String name) {
            return SessionReadWriteCases.this.residue(name);
        }

        @Override
        public Optional<ChildClient> childClient() {
            return SessionReadWriteCases.this.childClient();
        }

        /** A killed process's session ends with its connection: no lease to wait out. */
        @Override
        public Duration childHoldRelease() {
            return Duration.ofSeconds(10);
        }
    };

    @AfterEach
    void closeProcessClients() {
        processes.closeTrackedClients();
    }

    /**
     * The multi-process contract's reader-killed case counts the holders with LockAdmin.inspect; where inspect cannot
     * (a row lock: the database does not say which sessions hold a row in share mode) this is the same case, with the
     * killed reader's end shown by a writer getting in once the parent's reader leaves.
     */
    @Test
    void processes_readerProcessKilled_holdEnds_whileAnotherReaderHolds() throws Exception {
        if (inspectSeesEveryHolder()) {
            processes.readLock_readerProcessKilled_holdEndsWithinOneLease_whileAnotherReaderRenews();
            return;
        }
        String name = uniqueName();
        LockClient parent = newClient(Duration.ofSeconds(2));
        DistributedLock reader = parent.readWriteLock(name).readLock();
        reader.lock();
        DistributedLock writer = newClient().readWriteLock(name).writeLock();
        ChildClient child = childClient().orElseThrow();
        try (ChildProcess p = ChildProcess.start("read", child.factory().getName(), child.argument(), name)) {
            p.awaitLine("HELD", Timing.seconds(30));
            reader.unlock();
            assertThat(writer.tryLock()).as("a writer while the child reads").isFalse();
            reader.lock();
            p.kill();
        }
        assertThat(reader.isHeldByCurrentThread()).as("the renewed reader").isTrue();
        assertThat(writer.tryLock())
                .as("a writer while the parent's reader holds")
                .isFalse();
        reader.unlock();
        assertThat(writer.tryLock(processes.childHoldRelease().toMillis(), TimeUnit.MILLISECONDS))
                .as("a writer once the parent's reader left: the killed child's hold ended with its session")
                .isTrue();
        writer.unlock();
        assertThat(residue(name)).isEmpty();
    }

    @Test
    void processes_writeCounter_noLostIncrements() throws Exception {
        processes.writeLock_counterAcrossTwoProcesses_noLostIncrements();
    }

    private List<Long> sessionsOf(LockClient client, String name) {
        return ((JdbcSessionLockStore) ((JdbcLockClient) client).store()).sessionIds(name);
    }

    /**
     * A waiting writer that died (its entry written by its last attempt, then never refreshed) holds back later readers
     * only until its entry's deadline, 5 s after that attempt; the next attempt after it evicts the entry.
     */
    @Test
    void deadWaitingWriter_holdsBackReadersOnlyUntilItsEntryExpires() throws Exception {
        String name = uniqueName();
        DistributedLock holder = newClient().readWriteLock(name).readLock();
        holder.lock();
        String t = env().table;
        Dialect dialect = Dialect.valueOf(dialectName());
        update(
                "INSERT INTO " + t + "_queue (name_hash, owner, ticket, deadline) VALUES (?, 'dead-writer:t1/X', "
                        + dialect.nextValueExpression(t) + ", " + dialect.nowMillis() + " + 5000)",
                Names.hash(name));
        long written = System.nanoTime();
        DistributedLock reader = newClient().readWriteLock(name).readLock();
        assertThat(reader.tryLock())
                .as("a reader behind the waiting writer's live entry")
                .isFalse();
        assertThat(reader.tryLock(Timing.seconds(15).toMillis(), TimeUnit.MILLISECONDS))
                .as("the reader once the dead writer's entry expired")
                .isTrue();
        long waited = System.nanoTime() - written;
        assertThat(waited).as("held back until the deadline").isGreaterThan(TimeUnit.MILLISECONDS.toNanos(4500));
        assertThat(waited)
                .as("and not much longer")
                .isLessThan(Timing.seconds(9).toNanos());
        reader.unlock();
        holder.unlock();
        assertThat(residue(name)).isEmpty();
    }

    /** A downgraded read hold shares its write hold's session: killing it ends both, and both are told lost. */
    @Test
    void downgradedHolderSessionKilled_bothHoldsLost_nameFree() throws Exception {
        String name = uniqueName();
        LockClient client = newClient(Duration.ofMillis(1500));
        DistributedLock write = client.readWriteLock(name).writeLock();
        DistributedLock read = client.readWriteLock(name).readLock();
        RecordingLockListener writeListener = new RecordingLockListener();
        RecordingLockListener readListener = new RecordingLockListener();
        write.addListener(writeListener);
        read.addListener(readListener);
        write.lock();
        read.lock();
        long writeToken = write.fencingToken();
        long readToken = read.fencingToken();
        List<Long> sessions = sessionsOf(client, name);
        assertThat(sessions)
                .as("the downgrade's read hold is on the write hold's session")
                .hasSize(1);
        killSession(sessions.get(0));
        DistributedLock next = newClient().readWriteLock(name).writeLock();
        assertThat(next.tryLock(Timing.seconds(5).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        Eventually.within(
                Timing.seconds(3),
                "both told lost",
                () -> writeListener.lost().contains(writeToken)
                        && readListener.lost().contains(readToken));
        assertThatThrownBy(read::unlock).isInstanceOf(LockLostException.class);
        assertThatThrownBy(write::unlock).isInstanceOf(LockLostException.class);
        next.unlock();
        assertThat(residue(name)).isEmpty();
    }

    /** A write hold released before its downgraded read hold leaves the read hold, and the session, in place. */
    @Test
    void downgrade_writeReleasedFirst_readHoldKeepsTheSession_untilItsRelease() {
        String name = uniqueName();
        LockClient client = newClient();
        DistributedLock write = client.readWriteLock(name).writeLock();
        DistributedLock read = client.readWriteLock(name).readLock();
        write.lock();
        read.lock();
        write.unlock();
        assertThat(sessionsOf(client, name)).hasSize(1);
        assertThat(newClient().readWriteLock(name).writeLock().tryLock())
                .as("a writer while the read hold lasts")
                .isFalse();
        DistributedLock reader = newClient().readWriteLock(name).readLock();
        assertThat(reader.tryLock()).as("another reader").isTrue();
        reader.unlock();
        read.unlock();
        assertThat(sessionsOf(client, name)).isEmpty();
        assertThat(residue(name)).isEmpty();
    }
}
