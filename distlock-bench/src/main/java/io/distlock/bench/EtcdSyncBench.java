package io.distlock.bench;

import static io.distlock.bench.Harness.ops;

import io.distlock.DistributedLock;
import io.distlock.DistributedReadWriteLock;
import io.distlock.DistributedSemaphore;
import io.distlock.PermitHold;
import io.distlock.bench.Harness.Result;
import io.distlock.bench.Scenarios.Timing;
import io.distlock.etcd.EtcdLockClient;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.DeleteOption;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/*
 * Overview
 *
 * etcd's read-write locks, semaphores and the lock's cross-client hand-off (issue 27). No Java peer has read-write
 * locks or semaphores on etcd, so those are measured against the floor: the unary requests the server handled per
 * operation (grpc_server_handled_total, EtcdBench.Requests), uncontended and with 1 and 100 waiters on the name, and
 * their ops/s against the lock's own on the same server. The hand-off row is the lock on one key from 8 separate
 * clients, side by side with jetcd's Lock and with EtcdReference's two variants (what the hand-off needs and no more);
 * the mode etcd-sync-ref runs that row alone. Every key is under a prefix with a random run id, deleted at the end.
 */
/** The etcd synchronizer benchmark: requests per operation, ops/s against the lock, cross-client hand-off. */
public final class EtcdSyncBench {
    private static final int THREADS = 8;

    private EtcdSyncBench() {}

    /** Runs the etcd synchronizer benchmark and prints a Markdown report. */
    public static void run(String endpoints, Duration phase, PrintStream out) {
        Report report = new Report(out);
        Timing timing = Timing.of(phase);
        String ns =
                "dlbench-sync-" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16) + "/";
        report.title("etcd synchronizers — " + endpoints);
        report.environment("start");
        Client admin = Client.builder().endpoints(endpoints.split(",")).build();
        EtcdBench.Requests requests = new EtcdBench.Requests(endpoints.split(",")[0]);
        try (EtcdLockClient c =
                EtcdLockClient.builder().endpoints(endpoints).namespace(ns).build()) {
            List<Result> unc = new ArrayList<>();
            DistributedLock lock = c.lock("u-lock");
            DistributedReadWriteLock rw = c.readWriteLock("u-rw");
            DistributedSemaphore sem = c.semaphore("u-sem", 4);
            unc.add(requests.counted(
                    "uncontended",
                    w -> one("lock", timing, w, () -> {
                        lock.lock();
                        lock.unlock();
                    })));
            unc.add(requests.counted(
                    "uncontended",
                    w -> one("write lock", timing, w, () -> {
                        rw.writeLock().lock();
                        rw.writeLock().unlock();
                    })));
            unc.add(requests.counted(
                    "uncontended",
                    w -> one("read lock", timing, w, () -> {
                        rw.readLock().lock();
                        rw.readLock().unlock();
                    })));
            unc.add(requests.counted(
                    "uncontended",
                    w -> one("semaphore acquire(1)+release", timing, w, () -> {
                        PermitHold p = sem.acquire(1);
                        p.release();
                    })));
            // a re-entry needs the outer hold on the thread that measures, not on this one (a lock held by another
            // thread blocks): that thread takes it in its first warm-up step and keeps it until the client closes
            unc.add(requests.counted(
                    "re-entry",
                    w -> one("write lock re-entry (held)", timing, w, () -> {
                        DistributedLock write = rw.writeLock();
                        if (!write.isHeldByCurrentThread()) {
                            write.lock();
                        }
                        write.lock();
                        write.unlock();
                    })));
            report.section("Uncontended, 1 thread");
            report.table(unc, false);

            List<Result> waiters = new ArrayList<>();
            for (int n : new int[] {1, 100}) {
                waiters.add(requests.counted(
                        n + " waiters",
                        w -> many("write lock, " + n + " waiting", n + 1, timing, w, i -> {
                            DistributedLock l = c.readWriteLock("w" + n).writeLock();
                            return () -> {
                                l.lock();
                                l.unlock();
                            };
                        })));
                waiters.add(requests.counted(
                        n + " waiters",
                        w -> many("semaphore(1) of 1, " + n + " waiting", n + 1, timing, w, i -> {
                            DistributedSemaphore s = c.semaphore("s" + n, 1);
                            return () -> s.acquire(1).release();
                        })));
            }
            report.section("One name, 1 or 100 waiters behind the holder, one client");
            report.line("Every thread loops acquire+release, so all but one wait. A release wakes the client's"
                    + " waiters; those that still wait behind a key the watch shows make no request.");
            report.line("");
            report.table(waiters, false);

            List<Result> mix = new ArrayList<>();
            mix.add(requests.counted(
                    "8 threads",
                    w -> many("lock", THREADS, timing, w, i -> {
                        DistributedLock l = c.lock("m-lock");
                        return () -> {
                            l.lock();
                            l.unlock();
                        };
                    })));
            mix.add(requests.counted(
                    "8 threads",
                    w -> many(
                            "read-write, 90% reads",
                            THREADS, timing, w, i -> {
                                DistributedReadWriteLock l = c.readWriteLock("m-rw");
                                return () -> {
                                    DistributedLock v =
                                            ThreadLocalRandom.current().nextInt(10) == 0 ? l.writeLock() : l.readLock();
                                    v.lock();
                                    v.unlock();
                                };
                            })));
            mix.add(requests.counted(
                    "8 threads",
                    w -> many("semaphore of 4, acquire(1)", THREADS, timing, w, i -> {
                        DistributedSemaphore s = c.semaphore("m-sem", 4);
                        return () -> s.acquire(1).release();
                    })));
            report.section("One name, 8 threads, one client");
            report.table(mix, true);

            List<Result> clients = oneKeyManyClients(endpoints, ns, timing, requests, report);

            report.section("etcd requests per operation (grpc_server_handled_total from /metrics)");
            report.line("Unary gRPC calls the server handled during the measured window, divided by the operations"
                    + " in it; streams (Watch, LeaseKeepAlive) are not counted.");
            report.line("");
            report.line("| scenario | implementation | requests / op | by method |");
            report.line("| --- | --- | ---: | --- |");
            requests.rows.forEach(report::line);
            report.environment("end");
            report.section("Ratios");
            report.line("- read-write (90% reads) ops/s ÷ lock ops/s, 8 threads: "
                    + Report.ratio(ops(mix, "read-write, 90% reads") / ops(mix, "lock")));
            report.line("- semaphore of 4 ops/s ÷ lock ops/s, 8 threads: "
                    + Report.ratio(ops(mix, "semaphore of 4, acquire(1)") / ops(mix, "lock")));
            report.section("Targets (issue 27)");
            report.targetHeader();
            oneKeyManyClientsTargets(report, clients);
        } finally {
            cleanUp(admin, ns, report);
        }
    }

    /**
     * The mode {@code etcd-sync-ref}: only the row "lock on one key from 8 separate clients", with distlock, jetcd's
     * Lock and the two variants of the reference (EtcdReference).
     */
    public static void clients(String endpoints, Duration phase, PrintStream out) {
        Report report = new Report(out);
        Timing timing = Timing.of(phase);
        String ns =
                "dlbench-ref-" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16) + "/";
        report.title("etcd lock, one key, 8 clients, with a reference — " + endpoints);
        report.environment("start");
        Client admin = Client.builder().endpoints(endpoints.split(",")).build();
        EtcdBench.Requests requests = new EtcdBench.Requests(endpoints.split(",")[0]);
        // the first metrics read sets up the HTTP client; done here, it does not delay the first row's window
        var unused = requests.snapshot();
        try {
            List<Result> clients = oneKeyManyClients(endpoints, ns, timing, requests, report);
            report.section("etcd requests per lock+unlock (grpc_server_handled_total from /metrics)");
            report.line("Unary gRPC calls the server handled during the measured window, divided by the operations"
                    + " in it; streams (Watch, LeaseKeepAlive) are not counted.");
            report.line("");
            report.line("| scenario | implementation | requests / op | by method |");
            report.line("| --- | --- | ---: | --- |");
            requests.rows.forEach(report::line);
            report.environment("end");
            report.section("Targets (issue 27)");
            report.targetHeader();
            oneKeyManyClientsTargets(report, clients);
        } finally {
            cleanUp(admin, ns, report);
        }
    }

    /** The lock on one key from 8 separate clients (one per thread), one implementation after another. */
    private static List<Result> oneKeyManyClients(
            String endpoints, String ns, Timing timing, EtcdBench.Requests requests, Report report) {
        List<LockProvider.Factory> fs = List.of(
                EtcdBench.distlock(endpoints, ns + "h/"),
                EtcdReference.locks(endpoints, ns + "h/", true),
                EtcdReference.locks(endpoints, ns + "h/", false),
                EtcdBench.jetcd(endpoints, ns + "h/"));
        List<Result> clients = new ArrayList<>();
        for (LockProvider.Factory f : fs) {
            clients.add(requests.counted(
                    "one key, 8 clients", w -> Scenarios.oneKeyManyClients(f, "k8", THREADS, timing, w)));
        }
        report.section("Lock: one key, 8 separate clients");
        report.line("Each thread has its own client, so every hand-off goes between clients through the server. The"
                + " references do only what the hand-off needs (EtcdReference: one Txn to enqueue and read the queue,"
                + " one delete to release; a waiter learns of the deletes ahead of it from a watch on the prefix, or"
                + " from a watch on the key just ahead and one Range when it goes).");
        report.line("");
        report.table(clients, true);
        return clients;
    }

    private static void oneKeyManyClientsTargets(Report report, List<Result> clients) {
        report.target(
                "one key, 8 clients: ops/s ÷ jetcd Lock",
                ops(clients, EtcdBench.DISTLOCK) / ops(clients, EtcdBench.JETCD),
                ">=",
                5);
        report.target(
                "(reference) one key, 8 clients: reference, watch on the prefix ÷ jetcd Lock",
                ops(clients, EtcdReference.LOCK) / ops(clients, EtcdBench.JETCD),
                ">=",
                5);
        report.target(
                "(reference) one key, 8 clients: reference, watch on the predecessor ÷ jetcd Lock",
                ops(clients, EtcdReference.LOCK_PREDECESSOR) / ops(clients, EtcdBench.JETCD),
                ">=",
                5);
        report.line("| (one key, 8 clients: distlock ÷ reference, watch on the prefix) | "
                + Report.ratio(ops(clients, EtcdBench.DISTLOCK) / ops(clients, EtcdReference.LOCK)) + " | | |");
    }

    private static void cleanUp(Client admin, String ns, Report report) {
        try {
            admin.getKVClient()
                    .delete(
                            ByteSequence.from(ns, StandardCharsets.UTF_8),
                            DeleteOption.builder().isPrefix(true).build())
                    .get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            report.line("- cleanup of " + ns + " failed: " + e);
        }
        admin.close();
    }

    /** One operation, as a step a thread repeats. */
    interface Step {
        void run() throws Exception;
    }

    /** Makes the step of thread {@code i}. */
    interface Steps {
        Step of(int i);
    }

    private static Result one(String label, Timing t, Scenarios.Window w, Step step) {
        return Harness.run(label, 1, t.warmup(), t.measure(), (thread, probe) -> step.run(), w::start, w::end);
    }

    private static Result many(String label, int threads, Timing t, Scenarios.Window w, Steps steps) {
        Step[] s = new Step[threads];
        for (int i = 0; i < threads; i++) {
            s[i] = steps.of(i);
        }
        return Harness.run(
                label, threads, t.warmup(), t.measure(), (thread, probe) -> s[thread].run(), w::start, w::end);
    }
}
