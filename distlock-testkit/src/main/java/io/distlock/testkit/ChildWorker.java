package io.distlock.testkit;

import io.distlock.DistributedLock;
import io.distlock.LockClient;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * The child JVM of the multi-process contracts. Modes:
 *
 * <ul>
 *   <li>{@code counter FACTORY ARG NAME FILE MILLIS THREADS}: runs the read-sleep-write counter over a {@link
 *       FileFencedCounter} and prints {@code RESULT <increments>};
 *   <li>{@code write-counter FACTORY ARG NAME FILE MILLIS THREADS}: the same counter over write locks of a read-write
 *       lock;
 *   <li>{@code wait FACTORY ARG NAME}: prints {@code WAITING}, then waits for the fair lock until killed;
 *   <li>{@code hold FACTORY ARG NAME}, {@code read FACTORY ARG NAME}, {@code permits FACTORY ARG NAME SIZE N}: takes
 *       the lock, the read lock, or {@code N} permits of the semaphore of size {@code SIZE} (the watchdog renewing),
 *       prints {@code HELD}, and keeps it until killed;
 *   <li>{@code count-down FACTORY ARG NAME}: counts the latch down once and prints {@code COUNTED};
 *   <li>{@code await FACTORY ARG NAME}: prints {@code WAITING}, waits for the latch, prints {@code OPENED}.
 * </ul>
 */
public final class ChildWorker {
    private ChildWorker() {}

    public static void main(String[] args) throws Exception {
        ClientFactory factory =
                (ClientFactory) Class.forName(args[1]).getDeclaredConstructor().newInstance();
        try (LockClient client = factory.create(args[2])) {
            switch (args[0]) {
                case "counter" ->
                    counter(
                            client,
                            c -> c.lock(args[3]),
                            Path.of(args[4]),
                            Long.parseLong(args[5]),
                            Integer.parseInt(args[6]));
                case "write-counter" ->
                    counter(
                            client,
                            c -> c.readWriteLock(args[3]).writeLock(),
                            Path.of(args[4]),
                            Long.parseLong(args[5]),
                            Integer.parseInt(args[6]));
                case "hold" -> {
                    client.lock(args[3]).lock();
                    heldUntilKilled();
                }
                case "read" -> {
                    client.readWriteLock(args[3]).readLock().lock();
                    heldUntilKilled();
                }
                case "permits" -> {
                    var unused =
                            client.semaphore(args[3], Integer.parseInt(args[4])).acquire(Integer.parseInt(args[5]));
                    heldUntilKilled();
                }
                case "count-down" -> {
                    client.countDownLatch(args[3]).countDown();
                    print("COUNTED");
                }
                case "await" -> {
                    var latch = client.countDownLatch(args[3]);
                    print("WAITING");
                    latch.await();
                    print("OPENED");
                }
                case "wait" -> {
                    DistributedLock lock = client.fairLock(args[3]);
                    System.out.println("WAITING");
                    System.out.flush();
                    lock.lock();
                    System.out.println("ACQUIRED");
                    System.out.flush();
                    lock.unlock();
                }
                default -> throw new IllegalArgumentException("mode: " + args[0]);
            }
        }
        System.exit(0);
    }

    private static void print(String line) {
        System.out.println(line);
        System.out.flush();
    }

    /** Prints HELD and sleeps until the parent kills the JVM, as a crash would end it: no release. */
    private static void heldUntilKilled() throws InterruptedException {
        print("HELD");
        Thread.sleep(Long.MAX_VALUE);
    }

    private static void counter(
            LockClient client, Function<LockClient, DistributedLock> lockOf, Path file, long millis, int threads)
            throws InterruptedException {
        FileFencedCounter counter = new FileFencedCounter(file);
        AtomicLong increments = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch gate = new CountDownLatch(1);
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            DistributedLock lock = lockOf.apply(client);
            workers.add(new Thread(() -> {
                try {
                    gate.await();
                    while (System.nanoTime() - end < 0) {
                        lock.lock();
                        try {
                            String acquisition = UUID.randomUUID().toString();
                            long token = lock.fencingToken();
                            OptionalLong v = counter.read(token, acquisition);
                            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                            if (v.isPresent() && counter.write(token, acquisition, v.getAsLong() + 1)) {
                                increments.incrementAndGet();
                            }
                        } finally {
                            lock.unlock();
                        }
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }));
        }
        workers.forEach(Thread::start);
        gate.countDown();
        for (Thread t : workers) {
            t.join();
        }
        if (failure.get() != null) {
            failure.get().printStackTrace();
            System.out.println("FAILED " + failure.get());
            System.exit(2);
        }
        System.out.println("RESULT " + increments.get());
        System.out.flush();
    }
}
