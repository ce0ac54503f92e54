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

/**
 * The child JVM of the multi-process contracts. Modes:
 *
 * <ul>
 *   <li>{@code counter FACTORY ARG NAME FILE MILLIS THREADS}: runs the read-sleep-write counter over a {@link
 *       FileFencedCounter} and prints {@code RESULT <increments>};
 *   <li>{@code wait FACTORY ARG NAME}: prints {@code WAITING}, then waits for the fair lock until killed.
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
                    counter(client, args[3], Path.of(args[4]), Long.parseLong(args[5]), Integer.parseInt(args[6]));
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

    private static void counter(LockClient client, String name, Path file, long millis, int threads)
            throws InterruptedException {
        FileFencedCounter counter = new FileFencedCounter(file);
        AtomicLong increments = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch gate = new CountDownLatch(1);
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            DistributedLock lock = client.lock(name);
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
