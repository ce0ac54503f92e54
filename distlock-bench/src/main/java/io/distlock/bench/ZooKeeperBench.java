package io.distlock.bench;

import static io.distlock.bench.Harness.ops;
import static io.distlock.bench.Harness.row;

import io.distlock.bench.Harness.Result;
import io.distlock.bench.Scenarios.Timing;
import io.distlock.zookeeper.ZooKeeperLockClient;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
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
 *
 * Phases that run one after another see whatever load other processes put on the (small, shared) machine at the time,
 * which can favour either side. So the targets are read from phases where the implementations take turns: the
 * uncontended target from one operation of each in turn (as EtcdBench does), the 10,000-key target from short
 * slices of each in turn (rotating who goes first) over clients opened once, each rate being its operations over the
 * time spent in its own slices. The sequential phases stay in the report for comparison with earlier runs. The
 * server's own counters (the srvr command: packets received, last zxid, packets sent) give requests, writes and
 * packets sent (answers and watch notifications) per operation.
 */
/** The ZooKeeper benchmark: distlock against Curator's InterProcessMutex on one server. */
public final class ZooKeeperBench {
    // row labels: results are looked up by label (Harness.row), so adding a row cannot shift another's place
    static final String RAW = "raw create+delete (ephemeral)";
    static final String DISTLOCK = "distlock ZooKeeperLockClient";
    static final String CURATOR = "Curator InterProcessMutex";
    static final String RAW_CLIENTS = "raw create+delete, no lock (the server's ceiling for 2 writes)";

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
                Requests requests = new Requests(server != null ? server.getConnectString() : connect);
                List<Result> unc = new ArrayList<>();
                unc.add(requests.counted("uncontended", w -> raw(admin, root, timing, w)));
                List<LockProvider.Factory> fs = List.of(distlock(target, root), curatorMutex(target, root));
                for (LockProvider.Factory f : fs) {
                    unc.add(requests.counted("uncontended", w -> Scenarios.uncontended(f, "u", timing, w)));
                }
                report.section("Uncontended acquire+release, 1 thread");
                report.table(unc, false);
                List<Result> inter = interleaved(admin, root, timing, fs);
                report.section(Harness.INTERLEAVED_SECTION);
                report.line(
                        "The phases above run one after another, so load from other processes can favour one of them;"
                                + " here each implementation takes one operation in turn (in a random order each round) for the whole"
                                + " window, so all see the same load. ops/s = operations / the time spent in them.");
                report.line("");
                report.table(inter, false);
                List<Result> one = new ArrayList<>();
                for (LockProvider.Factory f : fs) {
                    one.add(requests.counted(
                            "one key, 8 threads", w -> Scenarios.oneKeyOneClient(f, "k1", THREADS, timing, w)));
                }
                report.section("One key, 8 threads, one client");
                report.table(one, true);
                List<Result> oneAlt = alternating("one key, 8 threads", fs, THREADS, timing, requests, p -> {
                    Lock[] locks = new Lock[THREADS];
                    for (int t = 0; t < THREADS; t++) {
                        locks[t] = p.lock("k2");
                    }
                    return (t, random) -> {
                        locks[t].lock();
                        locks[t].unlock();
                    };
                });
                report.section("One key, 8 threads, one client, in alternating slices");
                report.line(slicesNote(timing, "All threads of an implementation use one key."));
                report.line("");
                report.table(oneAlt, false);
                List<Result> clients = clientsPerThread(target, root, timing, requests, report);
                String[] names = new String[KEYS];
                for (int i = 0; i < KEYS; i++) {
                    names[i] = "m" + i;
                }
                List<Result> many =
                        alternating("10,000 keys, 8 threads", fs, THREADS, timing, requests, p -> (t, random) -> {
                            Lock lock = p.lock(names[random.nextInt(names.length)]);
                            lock.lock();
                            lock.unlock();
                        });
                report.section("10,000 keys, 8 threads, one client, in alternating slices");
                report.line(slicesNote(timing, "Every operation draws a key at random from 10,000."));
                report.line("");
                report.table(many, false);
                report.section("ZooKeeper requests per acquire+release (the server's srvr counters)");
                report.line("Packets the server received and transactions it committed (zxids) during the measured"
                        + " windows, divided by the operations in them. A multi is one request and one zxid. Exact only"
                        + " when nothing else uses this ZooKeeper during the windows.");
                report.line("");
                report.line("| scenario | implementation | requests / op | writes (zxids) / op | packets sent / op |");
                report.line("| --- | --- | ---: | ---: | ---: |");
                requests.rows.forEach(report::line);
                report.environment("end");
                report.section("Targets (issue 5)");
                report.targetHeader();
                report.target(
                        "uncontended p50 ÷ raw create+delete p50 (interleaved)",
                        row(inter, DISTLOCK).p50Micros() / row(inter, RAW).p50Micros(),
                        "<=",
                        1.15);
                report.line(String.format(
                        java.util.Locale.ROOT,
                        "| (Curator, for comparison) uncontended p50 ÷ raw (interleaved) | %s | near 1.50× | |",
                        Report.ratio(row(inter, CURATOR).p50Micros()
                                / row(inter, RAW).p50Micros())));
                report.target(
                        "one key, 8 threads: ops/s ÷ Curator (alternating slices)",
                        ops(oneAlt, DISTLOCK) / ops(oneAlt, CURATOR),
                        ">=",
                        3);
                report.line(String.format(
                        java.util.Locale.ROOT,
                        "| (one key, 8 threads, the phases one after another) | %s | | |",
                        Report.ratio(ops(one, DISTLOCK) / ops(one, CURATOR))));
                clientsTargets(report, clients);
                report.target(
                        "10,000 keys, 8 threads: ops/s ÷ Curator (alternating slices)",
                        ops(many, DISTLOCK) / ops(many, CURATOR),
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

    /**
     * The mode {@code zookeeper-clients}: only the row "one key, 8 threads, each with its own client", on the server
     * given, else on an in-process TestingServer (not 127.0.0.1:2181, whose counters other users of that server would
     * disturb).
     */
    public static void clients(String connectString, Duration phase, PrintStream out) {
        Report report = new Report(out);
        Timing timing = Timing.of(phase);
        String root = "/dlbench-" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16);
        TestingServer server = null;
        try {
            String target = connectString;
            if (target.isEmpty()) {
                server = new TestingServer(true);
                target = server.getConnectString();
            }
            report.title("ZooKeeper, one key, 8 clients — " + target
                    + (server != null ? " (in-process TestingServer)" : ""));
            report.environment("start");
            CuratorFramework admin = curator(target);
            try {
                Requests requests = new Requests(target);
                List<Result> clients = clientsPerThread(target, root, timing, requests, report);
                report.section("ZooKeeper requests per acquire+release (the server's srvr counters)");
                report.line("| scenario | implementation | requests / op | writes (zxids) / op | packets sent / op |");
                report.line("| --- | --- | ---: | ---: | ---: |");
                requests.rows.forEach(report::line);
                report.environment("end");
                report.section("Targets (issue 22)");
                report.targetHeader();
                clientsTargets(report, clients);
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

    /**
     * The target of {@link #clientsPerThread} (issue 22) for distlock and for the references, and the locks' rates
     * against the raw floor.
     */
    private static void clientsTargets(Report report, List<Result> clients) {
        report.target(
                "one key, 8 threads, 8 clients: ops/s ÷ Curator (alternating slices; issue 22)",
                ops(clients, DISTLOCK) / ops(clients, CURATOR),
                ">=",
                1.3);
        report.target(
                "(reference) one key, 8 clients: reference lock ÷ Curator",
                ops(clients, ZooKeeperReference.LOCK) / ops(clients, CURATOR),
                ">=",
                1.3);
        report.target(
                "(reference) one key, 8 clients: reference lock, no re-read ÷ Curator",
                ops(clients, ZooKeeperReference.LOCK_TRUSTING) / ops(clients, CURATOR),
                ">=",
                1.3);
        report.line(String.format(
                java.util.Locale.ROOT,
                "| (one key, 8 clients: distlock ÷ raw create+delete, no lock / Curator ÷ the same) | %s / %s | | |",
                Report.ratio(ops(clients, DISTLOCK) / ops(clients, RAW_CLIENTS)),
                Report.ratio(ops(clients, CURATOR) / ops(clients, RAW_CLIENTS))));
    }

    /**
     * One key, 8 threads, each with its own client (issue 22): 8 ZooKeeperLockClients against 8 CuratorFrameworks
     * with an InterProcessMutex each, in alternating slices; adds its section to {@code report}.
     */
    private static List<Result> clientsPerThread(
            String target, String root, Timing timing, Requests requests, Report report) {
        List<LockProvider.Factory> perThread = List.of(
                distlockClients(target, root, THREADS),
                ZooKeeperReference.locks(target, root, THREADS, true),
                ZooKeeperReference.locks(target, root, THREADS, false),
                curatorClients(target, root, THREADS),
                rawClients(target, root, THREADS));
        List<Result> clients = alternating("one key, 8 clients", perThread, THREADS, timing, requests, p -> {
            Lock[] locks = new Lock[THREADS];
            for (int t = 0; t < THREADS; t++) {
                locks[t] = p.lock(t + ":k3");
            }
            return (t, random) -> {
                locks[t].lock();
                locks[t].unlock();
            };
        });
        report.section("One key, 8 threads, each with its own client, in alternating slices");
        report.line(Harness.slicesNote(
                timing,
                THREADS,
                perThread.size(),
                "All threads use one key; each thread has its own client (8 ZooKeeperLockClients against 8"
                        + " CuratorFrameworks, each with an InterProcessMutex on the key, and against the reference"
                        + " locks on 8 raw ZooKeeper handles), so every hand-off goes between clients through the"
                        + " server. The reference does only what mutual exclusion needs (ZooKeeperReference: create,"
                        + " read the children, watch the entry ahead, read the children again when it goes, delete);"
                        + " its no-re-read variant skips the second read. The last row is no lock: each thread creates and"
                        + " deletes an ephemeral node of its own through its own client, the two writes every"
                        + " lock+unlock needs, with nobody waiting: what the server commits at most at that load."));
        report.line("");
        report.table(clients, false);
        return clients;
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

    private static Result raw(CuratorFramework admin, String root, Timing timing, Scenarios.Window window) {
        ZooKeeper zk;
        try {
            zk = admin.getZookeeperClient().getZooKeeper();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        String path = root + "/raw/n";
        byte[] empty = new byte[0];
        return Harness.run(
                "raw create+delete (ephemeral)",
                1,
                timing.warmup(),
                timing.measure(),
                (t, p) -> {
                    zk.create(path, empty, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
                    zk.delete(path, -1);
                },
                window::start,
                window::end);
    }

    /** Counts the requests and writes the server handled, from its {@code srvr} four-letter command. */
    static final class Requests {
        private final String host;
        private final int port;
        final List<String> rows = new ArrayList<>();

        Requests(String connect) {
            String first = connect.split("[,/]")[0].trim();
            int colon = first.lastIndexOf(':');
            this.host = colon < 0 ? first : first.substring(0, colon);
            this.port = colon < 0 ? 2181 : Integer.parseInt(first.substring(colon + 1));
        }

        /** {packets received, last zxid, packets sent}, or null when the server does not answer srvr. */
        long @Nullable [] snapshot() {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(host, port), 2000);
                s.setSoTimeout(2000);
                s.getOutputStream().write("srvr".getBytes(StandardCharsets.US_ASCII));
                String out = new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
                long received = -1;
                long zxid = -1;
                long sent = -1;
                for (String line : out.split("\n")) {
                    if (line.startsWith("Received:")) {
                        received = Long.parseLong(line.substring(9).trim());
                    } else if (line.startsWith("Sent:")) {
                        sent = Long.parseLong(line.substring(5).trim());
                    } else if (line.startsWith("Zxid:")) {
                        zxid = Long.decode(line.substring(5).trim());
                    }
                }
                return received < 0 || zxid < 0 || sent < 0 ? null : new long[] {received, zxid, sent};
            } catch (IOException | NumberFormatException e) {
                return null;
            }
        }

        /** Counts over one phase's measured window and adds a row for it. */
        Result counted(String scenario, java.util.function.Function<Scenarios.Window, Result> run) {
            long[][] at = new long[2][];
            Result r = run.apply(new Scenarios.Window() {
                @Override
                public void start() {
                    at[0] = snapshot();
                }

                @Override
                public void end() {
                    at[1] = snapshot();
                }
            });
            long[] delta = delta(at[0], at[1]);
            row(scenario, r.label(), delta, r.windowOps());
            return r;
        }

        /**
         * The counters' change from {@code a} to {@code b}, less the srvr request that read {@code b} (each srvr
         * connection counts as one packet received) and the answer to the srvr request that read {@code a} (counted as a
         * packet sent after its own figures were read); null when either is unknown.
         */
        static long @Nullable [] delta(long @Nullable [] a, long @Nullable [] b) {
            return a == null || b == null ? null : new long[] {b[0] - a[0] - 1, b[1] - a[1], b[2] - a[2] - 1};
        }

        void row(String scenario, String label, long @Nullable [] delta, long ops) {
            rows.add(
                    delta == null
                            ? "| " + scenario + " | " + label + " | – | – | – |"
                            : String.format(
                                    java.util.Locale.ROOT,
                                    "| %s | %s | %.2f | %.2f | %.2f |",
                                    scenario,
                                    label,
                                    delta[0] / (double) Math.max(1, ops),
                                    delta[1] / (double) Math.max(1, ops),
                                    delta[2] / (double) Math.max(1, ops)));
        }
    }

    /**
     * raw create+delete and each factory's lock()+unlock(), one operation of each in turn (in a random order each
     * round) for the warm-up and then the measured window; each result's rate is its operations over the time spent in
     * them, so load that comes and goes hits all of them alike.
     */
    private static List<Result> interleaved(
            CuratorFramework admin, String root, Timing timing, List<LockProvider.Factory> factories) throws Exception {
        ZooKeeper zk = admin.getZookeeperClient().getZooKeeper();
        String path = root + "/raw/i";
        byte[] empty = new byte[0];
        List<String> labels = new ArrayList<>(List.of(RAW));
        List<Harness.Body> bodies = new ArrayList<>();
        bodies.add((t, p) -> {
            zk.create(path, empty, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
            zk.delete(path, -1);
        });
        return Harness.interleavedLocks(labels, bodies, factories, "i", timing);
    }

    private static String slicesNote(Timing timing, String keys) {
        return Harness.slicesNote(timing, THREADS, 2, keys);
    }

    /**
     * {@link Harness#alternatingLocks} with the server's requests and writes counted around each slice and summed per
     * implementation, added to {@code requests}' rows as {@code scenario (alternating)}.
     */
    private static List<Result> alternating(
            String scenario,
            List<LockProvider.Factory> factories,
            int threads,
            Timing timing,
            Requests requests,
            java.util.function.Function<LockProvider, Harness.SliceBody> bodies) {
        SliceCounts counts = new SliceCounts(factories.size(), requests);
        List<Result> out = Harness.alternatingLocks(factories, threads, timing, bodies, counts);
        for (int i = 0; i < out.size(); i++) {
            requests.row(
                    scenario + " (alternating)",
                    out.get(i).label(),
                    counts.total(i),
                    out.get(i).windowOps());
        }
        return out;
    }

    /** The server's requests and writes over each implementation's slices, summed. */
    private static final class SliceCounts implements Harness.SliceHook {
        private final Requests requests;
        /** Per implementation {requests, writes}, or requests -1 once a count was missing. */
        private final long[][] sums;

        private long @Nullable [] before;

        SliceCounts(int implementations, Requests requests) {
            this.requests = requests;
            this.sums = new long[implementations][3];
        }

        @Override
        public void before(int implementation) {
            before = requests.snapshot();
        }

        @Override
        public void after(int implementation) {
            long[] delta = Requests.delta(before, requests.snapshot());
            long[] sum = sums[implementation];
            if (delta == null || sum[0] < 0) {
                sum[0] = -1;
                return;
            }
            sum[0] += delta[0];
            sum[1] += delta[1];
            sum[2] += delta[2];
        }

        long @Nullable [] total(int implementation) {
            long[] sum = sums[implementation];
            return sum[0] < 0 ? null : sum.clone();
        }
    }

    static LockProvider.Factory distlock(String connect, String root) {
        return LockProvider.factory(DISTLOCK, () -> {
            ZooKeeperLockClient c = ZooKeeperLockClient.builder()
                    .connectString(connect)
                    .rootPath(root + "/distlock")
                    .build();
            return RedisBench.provider(c::lock, c::close);
        });
    }

    /**
     * distlock over {@code clients} clients: {@code lock("<i>:<name>")} is the lock {@code name} of client {@code i}
     * (modulo {@code clients}).
     */
    static LockProvider.Factory distlockClients(String connect, String root, int clients) {
        return LockProvider.factory(DISTLOCK, () -> {
            List<ZooKeeperLockClient> cs = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                cs.add(ZooKeeperLockClient.builder()
                        .connectString(connect)
                        .rootPath(root + "/distlock")
                        .build());
            }
            return RedisBench.provider(
                    name -> cs.get(clientOf(name, clients)).lock(name.substring(name.indexOf(':') + 1)),
                    () -> cs.forEach(ZooKeeperLockClient::close));
        });
    }

    /**
     * Curator over {@code clients} CuratorFrameworks: {@code lock("<i>:<name>")} is an InterProcessMutex on {@code
     * name} over client {@code i} (modulo {@code clients}), one per such name.
     */
    static LockProvider.Factory curatorClients(String connect, String root, int clients) {
        return LockProvider.factory(CURATOR, () -> {
            List<CuratorFramework> cs = new ArrayList<>();
            try {
                for (int i = 0; i < clients; i++) {
                    cs.add(curator(connect));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                cs.forEach(CuratorFramework::close);
                throw new IllegalStateException(e);
            }
            Map<String, Lock> mutexes = new ConcurrentHashMap<>();
            return RedisBench.provider(
                    name -> mutexes.computeIfAbsent(
                            name,
                            n -> new MutexLock(new InterProcessMutex(
                                    cs.get(clientOf(n, clients)),
                                    root + "/curator/" + n.substring(n.indexOf(':') + 1)))),
                    () -> cs.forEach(CuratorFramework::close));
        });
    }

    private static int clientOf(String name, int clients) {
        return Integer.parseInt(name.substring(0, name.indexOf(':'))) % clients;
    }

    static LockProvider.Factory curatorMutex(String connect, String root) {
        return LockProvider.factory(CURATOR, () -> {
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

    /**
     * No lock, the floor of {@link #clientsPerThread}: over {@code clients} Curator clients, {@code lock("<i>:<name>")}
     * is a create (on lock()) and a delete (on unlock()) of the ephemeral node {@code <root>/raw8/<i>} through client
     * {@code i}'s ZooKeeper handle: the two writes of a lock+unlock, with nobody waiting.
     */
    static LockProvider.Factory rawClients(String connect, String root, int clients) {
        return LockProvider.factory(RAW_CLIENTS, () -> {
            List<CuratorFramework> cs = new ArrayList<>();
            try {
                for (int i = 0; i < clients; i++) {
                    cs.add(curator(connect));
                }
                cs.get(0).create().creatingParentsIfNeeded().forPath(root + "/raw8");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                cs.forEach(CuratorFramework::close);
                throw new IllegalStateException(e);
            } catch (Exception e) {
                cs.forEach(CuratorFramework::close);
                throw new IllegalStateException(e);
            }
            return RedisBench.provider(
                    name -> {
                        int i = clientOf(name, clients);
                        return new RawNodeLock(cs.get(i), root + "/raw8/" + i);
                    },
                    () -> cs.forEach(CuratorFramework::close));
        });
    }

    /** A create and a delete of one ephemeral node as lock() and unlock(): no lock at all, the writes alone. */
    static final class RawNodeLock extends LockAndUnlockOnly {
        private static final byte[] EMPTY = new byte[0];
        private final CuratorFramework client;
        private final String path;

        RawNodeLock(CuratorFramework client, String path) {
            this.client = client;
            this.path = path;
        }

        @Override
        public void lock() {
            try {
                client.getZookeeperClient()
                        .getZooKeeper()
                        .create(path, EMPTY, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public void unlock() {
            try {
                client.getZookeeperClient().getZooKeeper().delete(path, -1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** InterProcessMutex as a {@link Lock} (acquire/release; Curator's checked exceptions become unchecked). */
    static final class MutexLock extends LockAndUnlockOnly {
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
    }
}
