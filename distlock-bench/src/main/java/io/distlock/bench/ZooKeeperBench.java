package io.distlock.bench;

import io.distlock.bench.Harness.Result;
import io.distlock.bench.Scenarios.Timing;
import io.distlock.zookeeper.ZooKeeperLockClient;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * ZooKeeper side by side (issue 5): a raw create+delete of an ephemeral node on the ZooKeeper handle (the floor: the
 * two writes every lock needs at least), distlock's ZooKeeperLockClient and Curator's InterProcessMutex, each with its
 * own Curator connection, under one root node named by a random run id that the run deletes at the end. The server
 * is 127.0.0.1:2181 when it answers, else Curator's in-process TestingServer (which then shares this JVM's CPU).
 */
/** The ZooKeeper benchmark: distlock against Curator's InterProcessMutex on one server. */
public final class ZooKeeperBench {
    private static final int THREADS = 8;
    private static final int KEYS = 10_000;

    private ZooKeeperBench() {}

    /**
     * Runs the ZooKeeper comparison and prints a Markdown report.
     *
     * @param connectString the server, or empty for 127.0.0.1:2181 if it answers, else an in-process TestingServer
     * @param phase the measured duration of each phase
     */
    public static void run(String connectString, Duration phase, PrintStream out) {
        Report report = new Report(out);
        Timing timing = Timing.of(phase);
        String root = "/dlbench-" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16);
        TestingServer server = null;
        String connect = connectString;
        try {
            if (connect.isEmpty()) {
                if (answers("127.0.0.1", 2181)) {
                    connect = "127.0.0.1:2181";
                } else {
                    server = new TestingServer(true);
                    connect = server.getConnectString() + " (in-process TestingServer)";
                }
            }
            String target = server != null ? server.getConnectString() : connect;
            report.title("ZooKeeper — " + connect);
            report.environment("start");
            CuratorFramework admin = curator(target);
            try {
                admin.create().creatingParentsIfNeeded().forPath(root + "/raw");
                List<Result> unc = new ArrayList<>();
                unc.add(raw(admin, root, timing));
                List<LockProvider.Factory> fs = List.of(distlock(target, root), curatorMutex(target, root));
                for (LockProvider.Factory f : fs) {
                    unc.add(Scenarios.uncontended(f, "u", timing));
                }
                report.section("Uncontended acquire+release, 1 thread");
                report.table(unc, false);
                List<Result> one = new ArrayList<>();
                for (LockProvider.Factory f : fs) {
                    one.add(Scenarios.oneKeyOneClient(f, "k1", THREADS, timing));
                }
                report.section("One key, 8 threads, one client");
                report.table(one, true);
                List<Result> many = new ArrayList<>();
                for (LockProvider.Factory f : fs) {
                    many.add(Scenarios.manyKeys(f, "m", KEYS, THREADS, timing));
                }
                report.section("10,000 keys, 8 threads, one client");
                report.table(many, false);
                report.environment("end");
                report.section("Targets (issue 5)");
                report.targetHeader();
                report.target(
                        "uncontended p50 ÷ raw create+delete p50",
                        unc.get(1).p50Micros() / unc.get(0).p50Micros(),
                        "<=",
                        1.15);
                report.line(String.format(
                        java.util.Locale.ROOT,
                        "| (Curator, for comparison) uncontended p50 ÷ raw | %s | near 1.50× | |",
                        Report.ratio(unc.get(2).p50Micros() / unc.get(0).p50Micros())));
                report.target(
                        "one key, 8 threads: ops/s ÷ Curator",
                        one.get(0).opsPerSec() / one.get(1).opsPerSec(),
                        ">=",
                        3);
                report.target(
                        "10,000 keys, 8 threads: ops/s ÷ Curator",
                        many.get(0).opsPerSec() / many.get(1).opsPerSec(),
                        ">=",
                        2);
            } finally {
                try {
                    admin.delete().deletingChildrenIfNeeded().forPath(root);
                } catch (Exception e) {
                    report.line("- cleanup of " + root + " failed: " + e);
                }
                admin.close();
            }
        } catch (Exception e) {
            throw new IllegalStateException("ZooKeeper benchmark failed: " + e, e);
        } finally {
            if (server != null) {
                try {
                    server.close();
                } catch (IOException e) {
                    // the in-process server goes away with the JVM
                }
            }
        }
    }

    private static boolean answers(String host, int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(host, port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    static CuratorFramework curator(String connect) throws InterruptedException {
        CuratorFramework c = CuratorFrameworkFactory.newClient(connect, 30_000, 10_000, new RetryNTimes(3, 100));
        c.start();
        if (!c.blockUntilConnected(10, TimeUnit.SECONDS)) {
            c.close();
            throw new IllegalStateException("cannot connect to ZooKeeper at " + connect);
        }
        return c;
    }

    private static Result raw(CuratorFramework admin, String root, Timing timing) throws Exception {
        ZooKeeper zk = admin.getZookeeperClient().getZooKeeper();
        String path = root + "/raw/n";
        byte[] empty = new byte[0];
        return Harness.run("raw create+delete (ephemeral)", 1, timing.warmup(), timing.measure(), (t, p) -> {
            zk.create(path, empty, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
            zk.delete(path, -1);
        });
    }

    static LockProvider.Factory distlock(String connect, String root) {
        return LockProvider.factory("distlock ZooKeeperLockClient", () -> {
            ZooKeeperLockClient c = ZooKeeperLockClient.builder()
                    .connectString(connect)
                    .rootPath(root + "/distlock")
                    .build();
            return RedisBench.provider(c::lock, c::close);
        });
    }

    static LockProvider.Factory curatorMutex(String connect, String root) {
        return LockProvider.factory("Curator InterProcessMutex", () -> {
            CuratorFramework c;
            try {
                c = curator(connect);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            Map<String, Lock> mutexes = new ConcurrentHashMap<>();
            return RedisBench.provider(
                    name -> mutexes.computeIfAbsent(
                            name, n -> new MutexLock(new InterProcessMutex(c, root + "/curator/" + n))),
                    c::close);
        });
    }

    /** InterProcessMutex as a {@link Lock} (acquire/release; Curator's checked exceptions become unchecked). */
    static final class MutexLock implements Lock {
        private final InterProcessMutex mutex;

        MutexLock(InterProcessMutex mutex) {
            this.mutex = mutex;
        }

        @Override
        public void lock() {
            try {
                mutex.acquire();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public void unlock() {
            try {
                mutex.release();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public void lockInterruptibly() {
            lock();
        }

        @Override
        public boolean tryLock() {
            throw new UnsupportedOperationException("the benchmark uses lock() and unlock() only");
        }

        @Override
        public boolean tryLock(long time, @Nullable TimeUnit unit) {
            throw new UnsupportedOperationException("the benchmark uses lock() and unlock() only");
        }

        @Override
        public Condition newCondition() {
            throw new UnsupportedOperationException("the benchmark uses lock() and unlock() only");
        }
    }
}
