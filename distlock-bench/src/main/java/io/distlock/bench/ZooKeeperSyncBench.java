package io.distlock.bench;

import static io.distlock.bench.Harness.ops;

import io.distlock.DistributedReadWriteLock;
import io.distlock.DistributedSemaphore;
import io.distlock.PermitHold;
import io.distlock.bench.Harness.Result;
import io.distlock.bench.Scenarios.Timing;
import io.distlock.zookeeper.ZooKeeperLockClient;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.Lock;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.test.TestingServer;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * ZooKeeper synchronizers side by side (issue 22): distlock's read-write lock and semaphore against Curator's
 * InterProcessReadWriteLock and InterProcessSemaphoreV2 on the same server, in alternating slices (Harness), each
 * implementation over clients opened once. A provider's lock(name) answers by the name's prefix: "r:" the read lock,
 * "w:" the write lock, "s<i>:" one permit of a 4-lease semaphore through client i (of 1 or 8). The server's srvr
 * counters around each slice give requests and writes per operation.
 */
/** distlock's ZooKeeper read-write lock and semaphore against Curator's recipes. */
public final class ZooKeeperSyncBench {
    static final String DISTLOCK = "distlock ZooKeeperLockClient";
    static final String CURATOR = "Curator recipes";
    private static final int THREADS = 8;
    private static final int LEASES = 4;

    private ZooKeeperSyncBench() {}

    /** Runs the comparison and prints a Markdown report; {@code connectString} as for {@link ZooKeeperBench}. */
    public static void run(String connectString, Duration phase, PrintStream out) {
        Report report = new Report(out);
        Timing timing = Timing.of(phase);
        String root = "/dlsync-" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16);
        TestingServer server = null;
        try {
            String connect = connectString;
            if (connect.isEmpty()) {
                server = new TestingServer(true);
                connect = server.getConnectString();
            }
            report.title(
                    "ZooKeeper synchronizers — " + connect + (server != null ? " (in-process TestingServer)" : ""));
            report.environment("start");
            CuratorFramework admin = ZooKeeperBench.curator(connect);
            try {
                ZooKeeperBench.Requests requests = new ZooKeeperBench.Requests(connect);
                List<LockProvider.Factory> one = List.of(distlock(connect, root, 1), curator(connect, root, 1));
                List<LockProvider.Factory> eight = List.of(distlock(connect, root, 8), curator(connect, root, 8));
                List<LockProvider.Factory> rwFs = List.of(
                        distlock(connect, root, 1),
                        ZooKeeperReference.readWrite(connect, root),
                        curator(connect, root, 1));
                List<Result> rw = alternating(
                        "rw, 90% reads",
                        rwFs, timing, requests, p -> {
                            Lock read = p.lock("r:rw");
                            Lock write = p.lock("w:rw");
                            return (t, random) -> {
                                Lock l = random.nextInt(10) == 0 ? write : read;
                                l.lock();
                                l.unlock();
                            };
                        });
                report.section("Read-write lock, one name, 8 threads, 90% reads, one client");
                report.line(Harness.slicesNote(
                        timing,
                        THREADS,
                        rwFs.size(),
                        "All threads use one name. The reference is our own minimal read-write lock on the raw"
                                + " ZooKeeper handle (ZooKeeperReference: an entry per acquire, a reader waits for the"
                                + " nearest earlier writer, a writer for the nearest earlier entry, each by a watch on"
                                + " that one entry)."));
                report.line("");
                report.table(rw, false);
                List<Result> sem1 = alternating("semaphore, 1 client", one, timing, requests, p -> {
                    Lock s = p.lock("s0:sem1");
                    return (t, random) -> {
                        s.lock();
                        s.unlock();
                    };
                });
                report.section("Semaphore of 4 leases, 8 threads, one client");
                report.table(sem1, false);
                List<Result> sem8 = alternating("semaphore, 8 clients", eight, timing, requests, p -> {
                    Lock[] s = new Lock[THREADS];
                    for (int t = 0; t < THREADS; t++) {
                        s[t] = p.lock("s" + t + ":sem8");
                    }
                    return (t, random) -> {
                        s[t].lock();
                        s[t].unlock();
                    };
                });
                report.section("Semaphore of 4 leases, 8 threads, 8 clients (one per thread)");
                report.table(sem8, false);
                List<Result> waiters = waiters(connect, root, timing, requests);
                report.section("One name, 1 or 100 waiters behind the holder, one client");
                report.line("Every thread (2 or 101) of one client loops acquire+release on one name, so all but one"
                        + " wait; one phase per row, one after another. The server's requests per acquire+release"
                        + " are in the table below.");
                report.line("");
                report.table(waiters, false);
                report.section("ZooKeeper requests per acquire+release (the server's srvr counters)");
                report.line("| scenario | implementation | requests / op | writes (zxids) / op | packets sent / op |");
                report.line("| --- | --- | ---: | ---: | ---: |");
                requests.rows.forEach(report::line);
                report.environment("end");
                report.section("Targets (issue 22)");
                report.targetHeader();
                report.target("rw, 1 name, 8 threads, 90% reads: ops/s ÷ Curator", ratio(rw), ">=", 2);
                report.target(
                        "(reference) rw, 1 name, 8 threads, 90% reads: reference ÷ Curator",
                        ops(rw, ZooKeeperReference.READ_WRITE) / ops(rw, CURATOR), ">=", 2);
                report.target("semaphore 4 leases, 8 threads, 1 client: ops/s ÷ Curator", ratio(sem1), ">=", 2);
                report.target("semaphore 4 leases, 8 threads, 8 clients: ops/s ÷ Curator", ratio(sem8), ">=", 2);
            } finally {
                try {
                    admin.delete().deletingChildrenIfNeeded().forPath(root);
                } catch (Exception e) {
                    report.line("- cleanup of " + root + " failed: " + e);
                }
                admin.close();
            }
        } catch (Exception e) {
            throw new IllegalStateException("ZooKeeper synchronizer benchmark failed: " + e, e);
        } finally {
            if (server != null) {
                try {
                    server.close();
                } catch (IOException e) {
                    // goes away with the JVM
                }
            }
        }
    }

    /**
     * A write lock and a one-permit semaphore of one distlock client with 1 and with 100 threads waiting behind the
     * holder (every thread loops acquire+release), each counted on the server.
     */
    private static List<Result> waiters(String connect, String root, Timing timing, ZooKeeperBench.Requests requests) {
        List<Result> out = new ArrayList<>();
        try (ZooKeeperLockClient c = ZooKeeperLockClient.builder()
                .connectString(connect)
                .rootPath(root + "/waiters")
                .build()) {
            for (int n : new int[] {1, 100}) {
                Lock write = c.readWriteLock("w" + n).writeLock();
                out.add(requests.counted(
                        n + " waiting",
                        w -> Harness.run(
                                "write lock, " + n + " waiting",
                                n + 1,
                                timing.warmup(),
                                timing.measure(),
                                (t, p) -> {
                                    write.lock();
                                    write.unlock();
                                },
                                w::start,
                                w::end)));
                DistributedSemaphore s = c.semaphore("s" + n, 1);
                out.add(requests.counted(
                        n + " waiting",
                        w -> Harness.run(
                                "semaphore(1) acquire(1)+release, " + n + " waiting",
                                n + 1,
                                timing.warmup(),
                                timing.measure(),
                                (t, p) -> s.acquire(1).release(),
                                w::start,
                                w::end)));
            }
        }
        return out;
    }

    private static double ratio(List<Result> rows) {
        return ops(rows, DISTLOCK) / ops(rows, CURATOR);
    }

    private static List<Result> alternating(
            String scenario,
            List<LockProvider.Factory> factories,
            Timing timing,
            ZooKeeperBench.Requests requests,
            java.util.function.Function<LockProvider, Harness.SliceBody> bodies) {
        long[][] sums = new long[factories.size()][3];
        long[][] before = new long[1][];
        Harness.SliceHook hook = new Harness.SliceHook() {
            @Override
            public void before(int implementation) {
                before[0] = requests.snapshot();
            }

            @Override
            public void after(int implementation) {
                long[] d = ZooKeeperBench.Requests.delta(before[0], requests.snapshot());
                if (d == null || sums[implementation][0] < 0) {
                    sums[implementation][0] = -1;
                } else {
                    sums[implementation][0] += d[0];
                    sums[implementation][1] += d[1];
                    sums[implementation][2] += d[2];
                }
            }
        };
        List<Result> out = Harness.alternatingLocks(factories, THREADS, timing, bodies, hook);
        for (int i = 0; i < out.size(); i++) {
            requests.row(
                    scenario,
                    out.get(i).label(),
                    sums[i][0] < 0 ? null : sums[i],
                    out.get(i).windowOps());
        }
        return out;
    }

    /** distlock over {@code clients} clients; see the overview for what a name picks. */
    static LockProvider.Factory distlock(String connect, String root, int clients) {
        return LockProvider.factory(DISTLOCK, () -> {
            List<ZooKeeperLockClient> cs = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                cs.add(ZooKeeperLockClient.builder()
                        .connectString(connect)
                        .rootPath(root + "/distlock")
                        .build());
            }
            Map<String, Lock> locks = new ConcurrentHashMap<>();
            return RedisBench.provider(
                    name -> locks.computeIfAbsent(name, n -> {
                        String key = n.substring(n.indexOf(':') + 1);
                        if (n.startsWith("r:") || n.startsWith("w:")) {
                            DistributedReadWriteLock rw = cs.get(0).readWriteLock(key);
                            return n.startsWith("r:") ? rw.readLock() : rw.writeLock();
                        }
                        int client = Integer.parseInt(n.substring(1, n.indexOf(':')));
                        return new PermitLock(cs.get(client % clients).semaphore(key, LEASES));
                    }),
                    () -> cs.forEach(ZooKeeperLockClient::close));
        });
    }

    /** Curator's recipes over {@code clients} Curator clients. */
    static LockProvider.Factory curator(String connect, String root, int clients) {
        return LockProvider.factory(CURATOR, () -> {
            List<CuratorFramework> cs = new ArrayList<>();
            try {
                for (int i = 0; i < clients; i++) {
                    cs.add(ZooKeeperBench.curator(connect));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            Map<String, Lock> locks = new ConcurrentHashMap<>();
            Map<String, InterProcessReadWriteLock> rws = new ConcurrentHashMap<>();
            return RedisBench.provider(
                    name -> locks.computeIfAbsent(name, n -> {
                        String key = n.substring(n.indexOf(':') + 1);
                        if (n.startsWith("r:") || n.startsWith("w:")) {
                            // one recipe object per name, shared by the client's threads
                            InterProcessReadWriteLock rw = rws.computeIfAbsent(
                                    key, k -> new InterProcessReadWriteLock(cs.get(0), root + "/curator/" + k));
                            return new RecipeLock(n.startsWith("r:") ? rw.readLock() : rw.writeLock());
                        }
                        int client = Integer.parseInt(n.substring(1, n.indexOf(':')));
                        return new LeaseLock(new InterProcessSemaphoreV2(
                                cs.get(client % clients), root + "/curator/" + key, LEASES));
                    }),
                    () -> cs.forEach(CuratorFramework::close));
        });
    }

    /** One permit of a distlock semaphore, the hold kept per thread. */
    private static final class PermitLock extends LockAndUnlockOnly {
        private final DistributedSemaphore semaphore;
        private final ThreadLocal<@Nullable PermitHold> hold = new ThreadLocal<>();

        PermitLock(DistributedSemaphore semaphore) {
            this.semaphore = semaphore;
        }

        @Override
        public void lock() {
            try {
                hold.set(semaphore.acquire(1));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }

        @Override
        public void unlock() {
            PermitHold h = hold.get();
            hold.remove();
            if (h != null) {
                h.release();
            }
        }
    }

    /** A Curator InterProcessLock (a read or write lock of InterProcessReadWriteLock). */
    private static final class RecipeLock extends LockAndUnlockOnly {
        private final InterProcessLock lock;

        RecipeLock(InterProcessLock lock) {
            this.lock = lock;
        }

        @Override
        public void lock() {
            try {
                lock.acquire();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public void unlock() {
            try {
                lock.release();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** One lease of a Curator InterProcessSemaphoreV2, the lease kept per thread. */
    private static final class LeaseLock extends LockAndUnlockOnly {
        private final InterProcessSemaphoreV2 semaphore;
        private final ThreadLocal<@Nullable Lease> lease = new ThreadLocal<>();

        LeaseLock(InterProcessSemaphoreV2 semaphore) {
            this.semaphore = semaphore;
        }

        @Override
        public void lock() {
            try {
                lease.set(semaphore.acquire());
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public void unlock() {
            Lease l = lease.get();
            lease.remove();
            if (l != null) {
                semaphore.returnLease(l);
            }
        }
    }
}
