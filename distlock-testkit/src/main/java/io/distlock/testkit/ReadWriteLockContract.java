package io.distlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLock;
import io.distlock.DistributedReadWriteLock;
import io.distlock.LockClient;
import io.distlock.LockHold;
import io.distlock.LockLostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * The read-write lock contract ({@link DistributedReadWriteLock}): many readers or one writer across threads and
 * clients, writer preference, re-entry and downgrade but no upgrade, a lease per hold, fencing tokens from one counter,
 * and waits that leave nothing behind. The write view on its own also runs the whole lock contract through {@link
 * WriteLockAsLock}.
 */
public interface ReadWriteLockContract extends BackendUnderTest {

    private DistributedReadWriteLock rw(LockClient client, String name) {
        return client.readWriteLock(name);
    }

    // ---------------------------------------------------------------- many readers or one writer

    @Test
    default void readLock_readersOfSeveralClientsAndThreads_holdAtOnce() throws Exception {
        String name = uniqueName();
        LockClient a = newClient();
        LockClient b = newClient();
        DistributedLock readA = rw(a, name).readLock();
        DistributedLock readB = rw(b, name).readLock();
        assertThat(readA.tryLock()).isTrue();
        assertThat(readB.tryLock())
                .as("a reader of another client beside a reader")
                .isTrue();
        AtomicBoolean otherThread = new AtomicBoolean();
        Thread t = new Thread(() -> {
            DistributedLock r = rw(a, name).readLock();
            otherThread.set(r.tryLock());
            if (otherThread.get()) {
                r.unlock();
            }
        });
        t.start();
        t.join(Timing.seconds(5).toMillis());
        assertThat(otherThread.get())
                .as("a reader on another thread of the same client")
                .isTrue();
        assertThat(readA.isLocked()).isTrue();
        assertThat(rw(newClient(), name).writeLock().tryLock())
                .as("a writer while readers hold")
                .isFalse();
        readA.unlock();
        assertThat(rw(newClient(), name).writeLock().tryLock())
                .as("a writer while one reader still holds")
                .isFalse();
        readB.unlock();
        DistributedLock writer = rw(newClient(), name).writeLock();
        assertThat(writer.tryLock()).as("a writer once every reader left").isTrue();
        writer.unlock();
        assertThat(residue(name)).isEmpty();
    }

    @Test
    default void writeLock_excludesReadersAndWritersOfEveryClientAndThread() throws Exception {
        String name = uniqueName();
        LockClient a = newClient();
        DistributedLock write = rw(a, name).writeLock();
        write.lock();
        try {
            assertThat(write.isLocked()).isTrue();
            assertThat(rw(newClient(), name).readLock().tryLock())
                    .as("a reader of another client")
                    .isFalse();
            assertThat(rw(newClient(), name).writeLock().tryLock())
                    .as("a writer of another client")
                    .isFalse();
            assertThat(rw(newClient(), name).readLock().tryAcquire(Duration.ofMillis(100)))
                    .as("a read hold of another client, waiting")
                    .isEmpty();
            AtomicBoolean readOther = new AtomicBoolean(true);
            AtomicBoolean writeOther = new AtomicBoolean(true);
            Thread t = new Thread(() -> {
                readOther.set(rw(a, name).readLock().tryLock());
                writeOther.set(rw(a, name).writeLock().tryLock());
            });
            t.start();
            t.join(Timing.seconds(5).toMillis());
            assertThat(readOther.get())
                    .as("a reader on another thread of the writer's client")
                    .isFalse();
            assertThat(writeOther.get())
                    .as("a writer on another thread of the writer's client")
                    .isFalse();
            assertThat(write.tryAcquire(Duration.ZERO))
                    .as("a write hold is a new owner, even on the writing thread")
                    .isEmpty();
        } finally {
            write.unlock();
        }
        assertThat(residue(name)).isEmpty();
    }

    /**
     * A reader and a writer that both run while readers and writers of two clients contend: writers do the fenced
     * read-sleep-write with their token, readers check that nothing changes while they hold; each of three threads per
     * client takes the read and the write lock in turn, so a hold handed to a thread twice shows (its next write lock
     * finds a read hold of its own). Seeds: a writer let in beside a reader (a torn read), two writers at once (a lost
     * increment).
     */
    @Test
    default void fencedWorkload_writersAndReaders_noLostIncrements_noWriteDuringARead() {
        String name = uniqueName();
        LockClient a = newClient();
        LockClient b = newClient();
        FencedResource resource = new FencedResource();
        AtomicInteger writersInside = new AtomicInteger();
        AtomicInteger readersInside = new AtomicInteger();
        AtomicInteger maxReaders = new AtomicInteger();
        AtomicLong writes = new AtomicLong();
        AtomicLong reads = new AtomicLong();
        List<String> violations = new java.util.concurrent.CopyOnWriteArrayList<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch gate = new CountDownLatch(1);
        long end = System.nanoTime() + Duration.ofMillis(1500).toNanos();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            // two threads mostly write, four mostly read: every thread's view takes both locks in turn
            int writesInFour = i < 2 ? 3 : 1;
            DistributedReadWriteLock lock = rw(i % 2 == 0 ? a : b, name);
            threads.add(new Thread(() -> {
                try {
                    gate.await();
                    while (System.nanoTime() - end < 0) {
                        if (ThreadLocalRandom.current().nextInt(4) < writesInFour) {
                            DistributedLock w = lock.writeLock();
                            w.lock();
                            try {
                                if (writersInside.incrementAndGet() != 1 || readersInside.get() != 0) {
                                    violations.add("writer beside " + (writersInside.get() - 1) + " writers, "
                                            + readersInside.get() + " readers");
                                }
                                Object acquisition = new Object();
                                long token = w.fencingToken();
                                OptionalLong v = resource.read(token, acquisition);
                                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                                if (v.isPresent() && resource.write(token, acquisition, v.getAsLong() + 1)) {
                                    writes.incrementAndGet();
                                }
                                writersInside.decrementAndGet();
                            } finally {
                                w.unlock();
                            }
                        } else {
                            DistributedLock r = lock.readLock();
                            r.lock();
                            try {
                                maxReaders.accumulateAndGet(readersInside.incrementAndGet(), Math::max);
                                long before = resource.value();
                                if (writersInside.get() != 0) {
                                    violations.add("reader beside a writer");
                                }
                                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
                                if (resource.value() != before) {
                                    violations.add(
                                            "value changed during a read hold: " + before + " -> " + resource.value());
                                }
                                reads.incrementAndGet();
                                readersInside.decrementAndGet();
                            } finally {
                                r.unlock();
                            }
                        }
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }));
        }
        runAll(threads, gate);
        assertThat(failure.get()).as("a workload thread failed").isNull();
        assertThat(violations).as("exclusion violations").isEmpty();
        assertThat(writes.get()).as("writes").isPositive();
        assertThat(reads.get()).as("reads").isPositive();
        assertThat(resource.rejected()).as("stale write tokens").isZero();
        assertThat(resource.value()).as("no lost increments").isEqualTo(writes.get());
        assertThat(residue(name)).isEmpty();
    }

    /**
     * Eight threads of one client take the read lock (9 in 10) and the write lock in turn as fast as they can, so a
     * release often finds a waiter of its own client whose attempt is just coming back: no thread is ever refused its
     * own lock (a read hold handed to a thread twice makes its next write lock refuse it as an upgrade) or told a
     * hold lost, and every thread gets on.
     */
    @Test
    default void threadViewsOfOneClient_takingBothLocksInTurn_neverFailOrStall() {
        String name = uniqueName();
        DistributedReadWriteLock lock = rw(newClient(), name);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicLong ops = new AtomicLong();
        CountDownLatch gate = new CountDownLatch(1);
        long end = System.nanoTime() + Duration.ofMillis(1500).toNanos();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            threads.add(new Thread(() -> {
                try {
                    gate.await();
                    while (System.nanoTime() - end < 0 && failure.get() == null) {
                        DistributedLock l =
                                ThreadLocalRandom.current().nextInt(10) == 0 ? lock.writeLock() : lock.readLock();
                        l.lock();
                        try {
                            ops.incrementAndGet();
                        } finally {
                            l.unlock();
                        }
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }));
        }
        runAll(threads, gate);
        assertThat(failure.get()).as("a thread failed").isNull();
        assertThat(ops.get()).as("operations").isPositive();
        assertThat(residue(name)).isEmpty();
    }

    /** The fenced read-sleep-write counter over write locks of two clients, as the lock contract runs it. */
    @Test
    default void writeLock_counterWorkload_noLostIncrements() {
        String name = uniqueName();
        LockClient a = newClient();
        LockClient b = newClient();
        List<DistributedLock> locks = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            locks.add(rw(i % 2 == 0 ? a : b, name).writeLock());
        }
        CounterWorkload.Result r = CounterWorkload.run(locks, Duration.ofSeconds(1), Duration.ofMillis(1));
        assertThat(r.increments()).as("increments").isPositive();
        assertThat(r.maxInside()).as("writers inside at once").isEqualTo(1);
        assertThat(r.rejected()).as("stale tokens").isZero();
        assertThat(r.lostIncrements()).as("lost increments").isZero();
    }

    // ---------------------------------------------------------------- writer preference and hand-over

    /** Seed: a stream of readers starves a writer when a reader may pass a waiting writer. */
    @Test
    default void waitingWriter_blocksReadersThatArriveAfterIt() throws Exception {
        String name = uniqueName();
        DistributedLock firstReader = rw(newClient(), name).readLock();
        DistributedLock writer = rw(newClient(), name).writeLock();
        DistributedLock laterReader = rw(newClient(), name).readLock();
        firstReader.lock();
        AtomicLong writerIn = new AtomicLong();
        CountDownLatch releaseWriter = new CountDownLatch(1);
        Thread w = new Thread(() -> {
            try {
                if (writer.tryLock(Timing.seconds(20).toMillis(), TimeUnit.MILLISECONDS)) {
                    writerIn.set(System.nanoTime());
                    releaseWriter.await();
                    writer.unlock();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        w.start();
        Eventually.parked(w, Timing.seconds(10));
        Timing.sleep(Duration.ofMillis(100)); // the writer waits in the store by now
        assertThat(writerIn.get()).as("writer in beside a reader").isZero();
        assertThat(laterReader.tryLock())
                .as("a reader that came after a waiting writer")
                .isFalse();
        assertThat(laterReader.tryLock(200, TimeUnit.MILLISECONDS))
                .as("a waiting reader that came after a waiting writer")
                .isFalse();
        long released = System.nanoTime();
        firstReader.unlock();
        Eventually.within(Timing.seconds(5), "writer in after the last reader left", () -> writerIn.get() != 0);
        assertThat(writerIn.get() - released).isLessThan(Timing.seconds(5).toNanos());
        assertThat(laterReader.tryLock()).as("a reader while the writer holds").isFalse();
        releaseWriter.countDown();
        w.join(Timing.seconds(5).toMillis());
        assertThat(laterReader.tryLock(Timing.seconds(5).toMillis(), TimeUnit.MILLISECONDS))
                .as("the later reader once the writer left")
                .isTrue();
        laterReader.unlock();
        assertThat(residue(name)).isEmpty();
    }

    @Test
    default void writeRelease_letsEveryWaitingReaderIn() throws Exception {
        String name = uniqueName();
        List<LockClient> clients = List.of(newClient(), newClient(), newClient());
        DistributedLock writer = rw(clients.get(0), name).writeLock();
        writer.lock();
        int readers = 4;
        CountDownLatch allIn = new CountDownLatch(readers);
        AtomicInteger together = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < readers; i++) {
            DistributedLock r = rw(clients.get(i % 3), name).readLock();
            threads.add(new Thread(() -> {
                try {
                    if (r.tryLock(Timing.seconds(20).toMillis(), TimeUnit.MILLISECONDS)) {
                        allIn.countDown();
                        if (allIn.await(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS)) {
                            together.incrementAndGet();
                        }
                        r.unlock();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        threads.forEach(Thread::start);
        Timing.sleep(Duration.ofMillis(300));
        assertThat(allIn.getCount()).as("readers waiting").isEqualTo(readers);
        writer.unlock();
        assertThat(allIn.await(Timing.seconds(5).toMillis(), TimeUnit.MILLISECONDS))
                .as("every waiting reader in at once after the write release")
                .isTrue();
        for (Thread t : threads) {
            t.join(Timing.seconds(15).toMillis());
        }
        assertThat(together.get()).isEqualTo(readers);
        assertThat(residue(name)).isEmpty();
    }

    @Test
    default void lastReadRelease_letsAWaitingWriterIn() throws Exception {
        String name = uniqueName();
        DistributedLock readA = rw(newClient(), name).readLock();
        DistributedLock readB = rw(newClient(), name).readLock();
        readA.lock();
        readB.lock();
        DistributedLock writer = rw(newClient(), name).writeLock();
        AtomicReference<LockHold> hold = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                writer.tryAcquire(Timing.seconds(20)).ifPresent(hold::set);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        t.start();
        Timing.sleep(Duration.ofMillis(200));
        readA.unlock();
        Timing.sleep(Duration.ofMillis(200));
        assertThat(hold.get()).as("writer in while a reader still holds").isNull();
        readB.unlock();
        t.join(Timing.seconds(5).toMillis());
        LockHold writeHold = hold.get();
        assertThat(writeHold).as("writer in after the last read release").isNotNull();
        java.util.Objects.requireNonNull(writeHold).release();
        assertThat(residue(name)).isEmpty();
    }

    // ---------------------------------------------------------------- re-entry, downgrade, upgrade

    @Test
    default void readAndWrite_areReentrantPerThread() {
        String name = uniqueName();
        LockClient client = newClient();
        DistributedLock read = rw(client, name).readLock();
        DistributedLock write = rw(client, name).writeLock();
        read.lock();
        read.lock();
        assertThat(read.getHoldCount()).isEqualTo(2);
        assertThat(rw(client, name).readLock().getHoldCount())
                .as("another view object of the same client")
                .isEqualTo(2);
        read.unlock();
        assertThat(read.isHeldByCurrentThread()).isTrue();
        assertThat(rw(newClient(), name).writeLock().tryLock()).isFalse();
        read.unlock();
        assertThat(read.getHoldCount()).isZero();
        write.lock();
        long token = write.fencingToken();
        assertThat(write.tryLock()).isTrue();
        assertThat(write.getHoldCount()).isEqualTo(2);
        assertThat(write.fencingToken()).as("re-entry keeps the token").isEqualTo(token);
        write.unlock();
        assertThat(rw(newClient(), name).readLock().tryLock()).isFalse();
        write.unlock();
        assertThat(write.isHeldByCurrentThread()).isFalse();
        assertThatThrownBy(write::unlock).isExactlyInstanceOf(IllegalMonitorStateException.class);
        assertThatThrownBy(read::unlock).isExactlyInstanceOf(IllegalMonitorStateException.class);
        assertThat(residue(name)).isEmpty();
    }

    @Test
    default void downgrade_writeThenRead_thenWriteRelease_keepsTheReadHold() {
        String name = uniqueName();
        DistributedReadWriteLock mine = rw(newClient(), name);
        DistributedReadWriteLock theirs = rw(newClient(), name);
        mine.writeLock().lock();
        long writeToken = mine.writeLock().fencingToken();
        assertThat(mine.readLock().tryLock()).as("a writer takes the read lock").isTrue();
        assertThat(theirs.readLock().tryLock())
                .as("another reader while the write lock is still held")
                .isFalse();
        mine.writeLock().unlock();
        assertThat(mine.readLock().isHeldByCurrentThread()).isTrue();
        assertThat(mine.readLock().fencingToken()).isGreaterThan(writeToken);
        assertThat(theirs.readLock().tryLock())
                .as("another reader after the downgrade")
                .isTrue();
        assertThat(rw(newClient(), name).writeLock().tryLock())
                .as("a writer after the downgrade")
                .isFalse();
        theirs.readLock().unlock();
        mine.readLock().unlock();
        DistributedLock writer = rw(newClient(), name).writeLock();
        assertThat(writer.tryLock()).isTrue();
        writer.unlock();
        assertThat(residue(name)).isEmpty();
    }

    @Test
    default void upgrade_readThenWrite_throwsIllegalMonitorStateAtOnce() throws Exception {
        String name = uniqueName();
        DistributedReadWriteLock mine = rw(newClient(), name);
        mine.readLock().lock();
        long start = System.nanoTime();
        assertThatThrownBy(() -> mine.writeLock().tryLock())
                .isExactlyInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining(name);
        assertThatThrownBy(() -> mine.writeLock().tryLock(Timing.seconds(20).toMillis(), TimeUnit.MILLISECONDS))
                .isExactlyInstanceOf(IllegalMonitorStateException.class);
        assertThatThrownBy(() -> mine.writeLock().lock()).isExactlyInstanceOf(IllegalMonitorStateException.class);
        assertThatThrownBy(() -> mine.writeLock().lockInterruptibly())
                .isExactlyInstanceOf(IllegalMonitorStateException.class);
        assertThat(System.nanoTime() - start)
                .as("at once")
                .isLessThan(Timing.seconds(5).toNanos());
        assertThat(mine.readLock().isHeldByCurrentThread())
                .as("the read hold stays")
                .isTrue();
        assertThat(mine.writeLock().isHeldByCurrentThread()).isFalse();
        assertThat(rw(newClient(), name).readLock().tryLock())
                .as("the failed upgrade left no waiting writer")
                .isTrue();
        mine.readLock().unlock();
    }

    // ---------------------------------------------------------------- leases and loss

    /**
     * Every hold has a lease of its own: a read hold whose lease ends (as a dead client's does) is gone from the store
     * while another reader keeps renewing its own. Seed: one lease per name, extended by any reader's renewal.
     */
    @Test
    default void readHold_withEndedLease_isGone_whileAnotherReaderRenews() throws Exception {
        String name = uniqueName();
        DistributedLock renewing = rw(newClient(Duration.ofMillis(900)), name).readLock();
        DistributedLock ending = rw(newClient(), name).readLock();
        RecordingLockListener listener = new RecordingLockListener();
        ending.addListener(listener);
        renewing.lock();
        assertThat(ending.tryLock(0, 500, TimeUnit.MILLISECONDS)).isTrue();
        Eventually.within(Timing.seconds(4), "the ended read hold told lost", () -> !listener.lost()
                .isEmpty());
        Timing.sleep(Duration.ofMillis(900)); // the other reader renews at least once after the end
        assertThat(renewing.isHeldByCurrentThread()).as("the renewed reader").isTrue();
        assertThat(rw(newClient(), name).writeLock().tryLock())
                .as("a writer while the renewed reader holds")
                .isFalse();
        renewing.unlock();
        DistributedLock writer = rw(newClient(), name).writeLock();
        assertThat(writer.tryLock())
                .as("a writer at once after the renewed reader left: the ended hold is gone from the store")
                .isTrue();
        writer.unlock();
        assertThatThrownBy(ending::unlock).isInstanceOf(LockLostException.class);
        assertThat(residue(name)).isEmpty();
    }

    /**
     * A thread that ends without unlocking (an uncaught exception) cannot unlock: its client releases the read and
     * write holds it left, within about one watchdog tick (a third of the lease), while the client stays open. Without
     * that, the watchdog would renew them until the client closes.
     */
    @Test
    default void holdsOfAThreadThatEnded_areReleasedWhileItsClientStaysOpen() throws Exception {
        String name = uniqueName();
        String readName = uniqueName();
        LockClient holder = newClient(Duration.ofMillis(900));
        AtomicInteger held = new AtomicInteger();
        Thread dies = new Thread(() -> {
            DistributedReadWriteLock l = rw(holder, name);
            l.writeLock().lock();
            l.readLock().lock(); // a downgrade: the thread holds both views of the name
            l.readLock().lock(); // re-entered: a hold of an ended thread goes whatever its count
            DistributedLock read = rw(holder, readName).readLock();
            read.lock();
            held.set(l.writeLock().getHoldCount() + l.readLock().getHoldCount() + read.getHoldCount());
            throw new IllegalStateException("the worker failed while holding");
        });
        dies.setUncaughtExceptionHandler((t, e) -> {});
        dies.start();
        dies.join(Timing.seconds(10).toMillis());
        assertThat(held.get()).as("the thread held before it ended").isEqualTo(4);
        Timing.sleep(Duration.ofMillis(1_200)); // past the lease: only the watchdog's renewals would keep the holds
        DistributedLock writer = rw(newClient(), name).writeLock();
        assertThat(writer.tryLock(Timing.seconds(5).toMillis(), TimeUnit.MILLISECONDS))
                .as("another client's writer gets the name the ended thread held both views of")
                .isTrue();
        writer.unlock();
        DistributedLock otherWriter = rw(newClient(), readName).writeLock();
        assertThat(otherWriter.tryLock(Timing.seconds(5).toMillis(), TimeUnit.MILLISECONDS))
                .as("another client's writer gets the name the ended thread read")
                .isTrue();
        otherWriter.unlock();
        assertThat(residue(name)).isEmpty();
        assertThat(residue(readName)).isEmpty();
    }

    @Test
    default void watchdog_keepsReadAndWriteHoldsPastTheirLease() throws Exception {
        String readName = uniqueName();
        String writeName = uniqueName();
        Duration lease = Duration.ofMillis(900);
        LockClient client = newClient(lease);
        LockHold read = rw(client, readName).readLock().acquire();
        DistributedLock write = rw(client, writeName).writeLock();
        write.lock();
        Timing.sleep(lease.multipliedBy(3));
        assertThat(read.isValid()).isTrue();
        assertThat(rw(newClient(), readName).writeLock().tryLock()).isFalse();
        assertThat(write.isHeldByCurrentThread()).isTrue();
        assertThat(rw(newClient(), writeName).readLock().tryLock()).isFalse();
        read.release();
        write.unlock();
        assertThat(residue(readName)).isEmpty();
        assertThat(residue(writeName)).isEmpty();
    }

    @Test
    default void writeHold_removedBehindItsBack_isToldLost_andReleaseThrowsLockLost() throws Exception {
        String name = uniqueName();
        DistributedLock write = rw(newClient(Duration.ofMillis(600)), name).writeLock();
        RecordingLockListener listener = new RecordingLockListener();
        write.addListener(listener);
        write.lock();
        long token = write.fencingToken();
        expireHold(name);
        Eventually.within(
                Timing.seconds(3), "listener told lost", () -> listener.lost().contains(token));
        assertThat(write.isHeldByCurrentThread()).isFalse();
        assertThatThrownBy(write::unlock).isInstanceOf(LockLostException.class).hasMessageContaining(name);
        assertThatThrownBy(write::unlock).isExactlyInstanceOf(IllegalMonitorStateException.class);
        DistributedLock other = rw(newClient(), name).writeLock();
        assertThat(other.tryLock()).isTrue();
        assertThat(other.fencingToken()).isGreaterThan(token);
        other.unlock();
    }

    @Test
    default void readHold_removedBehindItsBack_isInvalid_closeThrowsLockLost() throws Exception {
        String name = uniqueName();
        LockHold read = rw(newClient(Duration.ofMillis(600)), name).readLock().acquire();
        expireHold(name);
        Eventually.within(Timing.seconds(3), "read hold invalid", () -> !read.isValid());
        assertThatThrownBy(read::close).isInstanceOf(LockLostException.class);
        read.close();
        assertThat(residue(name)).isEmpty();
    }

    @Test
    default void fixedLeaseWriteHold_ends_andAWaitingReaderGetsIn() throws Exception {
        String name = uniqueName();
        DistributedLock write = rw(newClient(), name).writeLock();
        assertThat(write.tryLock(0, 500, TimeUnit.MILLISECONDS)).isTrue();
        DistributedLock reader = rw(newClient(), name).readLock();
        assertThat(reader.tryLock(Timing.seconds(6).toMillis(), TimeUnit.MILLISECONDS))
                .as("reader in within the writer's lease")
                .isTrue();
        reader.unlock();
        assertThatThrownBy(write::unlock).isInstanceOf(LockLostException.class);
    }

    @Test
    default void close_releasesReadAndWriteHolds() throws Exception {
        String read = uniqueName();
        String write = uniqueName();
        LockClient client = createClient(defaultLease());
        LockHold r = rw(client, read).readLock().acquire();
        rw(client, write).writeLock().lock();
        client.close();
        assertThat(r.isValid()).isFalse();
        assertThat(rw(newClient(), read).writeLock().tryLock()).isTrue();
        assertThat(rw(newClient(), write).readLock().tryLock()).isTrue();
    }

    // ---------------------------------------------------------------- fencing

    @Test
    default void writeTokens_exceedEveryTokenBefore_readTokensFromTheSameCounter() throws Exception {
        String name = uniqueName();
        LockClient a = newClient();
        LockClient b = newClient();
        long highest = Long.MIN_VALUE;
        for (int round = 0; round < 5; round++) {
            LockHold r1 = rw(a, name).readLock().acquire();
            LockHold r2 = rw(b, name).readLock().acquire();
            assertThat(r1.fencingToken())
                    .as("read token after a write, round %d", round)
                    .isGreaterThan(highest);
            assertThat(r2.fencingToken()).as("concurrent read tokens differ").isNotEqualTo(r1.fencingToken());
            highest = Math.max(highest, Math.max(r1.fencingToken(), r2.fencingToken()));
            r1.release();
            r2.release();
            DistributedLock w = rw(round % 2 == 0 ? a : b, name).writeLock();
            w.lock();
            assertThat(w.fencingToken()).as("write token, round %d", round).isGreaterThan(highest);
            highest = w.fencingToken();
            w.unlock();
        }
        DistributedLock held = rw(a, name).writeLock();
        held.lock();
        long lost = held.fencingToken();
        expireHold(name);
        DistributedLock after = rw(b, name).writeLock();
        assertThat(after.tryLock()).isTrue();
        assertThat(after.fencingToken()).as("after an expired hold").isGreaterThan(lost);
        after.unlock();
    }

    /** A writer paused past its lease cannot write once the next writer has. */
    @Test
    default void pausedWriter_staleWriteIsRejected() throws Exception {
        String name = uniqueName();
        FencedResource resource = new FencedResource();
        DistributedLock paused = rw(newClient(), name).writeLock();
        DistributedLock next = rw(newClient(), name).writeLock();
        Object pausedAcquisition = new Object();
        assertThat(paused.tryLock(0, 400, TimeUnit.MILLISECONDS)).isTrue();
        long pausedToken = paused.fencingToken();
        assertThat(resource.read(pausedToken, pausedAcquisition)).hasValue(0);
        assertThat(next.tryLock(Timing.seconds(5).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        Object nextAcquisition = new Object();
        assertThat(resource.write(next.fencingToken(), nextAcquisition, 1)).isTrue();
        next.unlock();
        assertThat(resource.write(pausedToken, pausedAcquisition, 1)).isFalse();
        assertThat(resource.value()).isEqualTo(1);
    }

    // ---------------------------------------------------------------- timeouts and interrupts

    /** A writer that gave up must not keep holding back readers. */
    @Test
    default void writerTimesOut_leavesNothing_readersGetInAtOnce() throws Exception {
        String name = uniqueName();
        DistributedLock reader = rw(newClient(), name).readLock();
        reader.lock();
        DistributedLock writer = rw(newClient(), name).writeLock();
        long start = System.nanoTime();
        assertThat(writer.tryLock(300, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(290));
        assertThat(rw(newClient(), name).writeLock().tryAcquire(Duration.ofMillis(200)))
                .isEmpty();
        DistributedLock laterReader = rw(newClient(), name).readLock();
        assertThat(laterReader.tryLock())
                .as("a reader after the writers gave up")
                .isTrue();
        laterReader.unlock();
        reader.unlock();
        assertThat(residue(name)).isEmpty();
    }

    @Test
    default void readerTimesOut_leavesNothing() throws Exception {
        String name = uniqueName();
        DistributedLock writer = rw(newClient(), name).writeLock();
        writer.lock();
        assertThat(rw(newClient(), name).readLock().tryLock(300, TimeUnit.MILLISECONDS))
                .isFalse();
        writer.unlock();
        assertThat(residue(name)).isEmpty();
        DistributedLock next = rw(newClient(), name).writeLock();
        assertThat(next.tryLock()).isTrue();
        next.unlock();
    }

    @Test
    default void writerInterrupted_throws_leavesNothing() throws Exception {
        String name = uniqueName();
        DistributedLock reader = rw(newClient(), name).readLock();
        reader.lock();
        DistributedLock writer = rw(newClient(), name).writeLock();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                writer.lockInterruptibly();
                thrown.set(new AssertionError("acquired"));
            } catch (Throwable e) {
                thrown.set(e);
            }
        });
        t.start();
        Timing.sleep(Duration.ofMillis(300));
        t.interrupt();
        t.join(Timing.seconds(5).toMillis());
        assertThat(thrown.get()).isInstanceOf(InterruptedException.class);
        DistributedLock laterReader = rw(newClient(), name).readLock();
        assertThat(laterReader.tryLock())
                .as("a reader after the writer was interrupted")
                .isTrue();
        laterReader.unlock();
        reader.unlock();
        Eventually.within(Timing.seconds(2), "nothing left: " + residue(name), () -> residue(name)
                .isEmpty());
    }

    @Test
    default void readLock_interrupted_keepsWaiting_andKeepsTheFlag() throws Exception {
        String name = uniqueName();
        DistributedLock writer = rw(newClient(), name).writeLock();
        DistributedLock reader = rw(newClient(), name).readLock();
        writer.lock();
        AtomicBoolean flagAfter = new AtomicBoolean();
        AtomicBoolean held = new AtomicBoolean();
        Thread t = new Thread(() -> {
            reader.lock();
            held.set(reader.isHeldByCurrentThread());
            flagAfter.set(Thread.currentThread().isInterrupted());
            reader.unlock();
        });
        t.start();
        Timing.sleep(Duration.ofMillis(200));
        t.interrupt();
        Timing.sleep(Duration.ofMillis(200));
        assertThat(t.isAlive()).as("lock() ignores the interrupt").isTrue();
        writer.unlock();
        t.join(Timing.seconds(5).toMillis());
        assertThat(held.get()).isTrue();
        assertThat(flagAfter.get()).as("interrupt flag re-asserted").isTrue();
    }

    // ---------------------------------------------------------------- bad input

    @Test
    default void readWriteLock_nullOrBlankName_isRejected() {
        LockClient client = newClient();
        assertThatThrownBy(() -> client.readWriteLock(BadInput.nullOf()))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("name");
        assertThatThrownBy(() -> client.readWriteLock(" \t"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("name");
        assertThatThrownBy(() -> client.readWriteLock("")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    default void readWriteLock_badLeasesAndNulls_areRejectedWithTheirValue() {
        DistributedReadWriteLock lock = rw(newClient(), uniqueName());
        for (DistributedLock view : List.of(lock.readLock(), lock.writeLock())) {
            assertThatThrownBy(() -> view.lock(0, TimeUnit.SECONDS))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("leaseTime")
                    .hasMessageContaining("0");
            assertThatThrownBy(() -> view.tryLock(1, -3, TimeUnit.SECONDS))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("-3");
            assertThatThrownBy(() -> view.tryAcquire(Duration.ZERO, Duration.ofMillis(-1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("lease")
                    .hasMessageContaining("PT-0.001S");
            assertThatThrownBy(() -> view.tryAcquire(BadInput.nullOf())).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> view.tryLock(1, BadInput.nullOf())).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(view::newCondition).isInstanceOf(UnsupportedOperationException.class);
            assertThat(view.isHeldByCurrentThread()).isFalse();
        }
    }

    @Test
    default void closedClient_rejectsReadWriteLocks() {
        LockClient client = createClient(defaultLease());
        DistributedReadWriteLock lock = rw(client, uniqueName());
        client.close();
        assertThatThrownBy(() -> client.readWriteLock("x")).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> lock.readLock().tryLock()).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> lock.writeLock().tryLock()).isInstanceOf(IllegalStateException.class);
    }

    /** Starts {@code threads}, opens {@code gate}, and waits for them all, each within 30 s (scaled). */
    private static void runAll(List<Thread> threads, CountDownLatch gate) {
        threads.forEach(Thread::start);
        gate.countDown();
        for (Thread t : threads) {
            try {
                t.join(Timing.seconds(30).toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
            assertThat(t.isAlive())
                    .as("a workload thread is stuck: %s", List.of(t.getStackTrace()))
                    .isFalse();
        }
    }
}
