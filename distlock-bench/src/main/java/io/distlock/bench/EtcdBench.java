package io.distlock.bench;

import static io.distlock.bench.Harness.ops;

import io.distlock.bench.Harness.Result;
import io.distlock.bench.Scenarios.Timing;
import io.distlock.etcd.EtcdLockClient;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.support.CloseableClient;
import io.grpc.stub.StreamObserver;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

/*
 * Overview
 *
 * etcd side by side (issue 6): distlock's EtcdLockClient against jetcd's Lock client, each with its own jetcd
 * connection, plus a raw put+delete on the KV client as the floor. jetcd's Lock is bound to a lease: two lock calls
 * on one name with the same lease would both succeed (etcd's lock key is name/leaseId), so the jetcd side gives every
 * thread its own lease, granted once and kept alive by jetcd's keep-alive stream, revoked at the end. The interleaved
 * section also sends distlock's own two requests (the acquire transaction and the delete) without the lock around
 * them, so the cost of the transaction and the cost of the lock logic show apart. Every key this run writes is under a
 * prefix with a random run id, deleted at the end.
 */
/** The etcd benchmark: distlock against jetcd's Lock client with kept-alive leases. */
public final class EtcdBench {
    // row labels: results are looked up by label (Harness.row), so adding a row cannot shift another's place
    static final String RAW_PUT = "raw put (one write)";
    static final String RAW_PUT_DELETE = "raw put+delete (KV)";
    static final String RAW_TXN = "raw Txn+delete (distlock's two requests)";
    static final String DISTLOCK = "distlock EtcdLockClient";
    static final String JETCD = "jetcd Lock (lease per thread, kept alive)";

    private static final int THREADS = 8;

    private EtcdBench() {}

    /**
     * Runs the etcd comparison and prints a Markdown report.
     *
     * @param endpoints the etcd endpoint(s), e.g. {@code http://127.0.0.1:2379}
     * @param phase the measured duration of each phase
     */
    public static void run(String endpoints, Duration phase, PrintStream out) {
        Report report = new Report(out);
        Timing timing = Timing.of(phase);
        String ns = "dlbench-" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16) + "/";
        report.title("etcd — " + endpoints);
        report.environment("start");
        Client admin = Client.builder().endpoints(endpoints.split(",")).build();
        Requests requests = new Requests(endpoints.split(",")[0]);
        try {
            warm(admin, ns);
            List<LockProvider.Factory> fs = List.of(distlock(endpoints, ns), jetcd(endpoints, ns));
            List<Result> unc = new ArrayList<>();
            unc.add(raw(admin, ns, timing));
            for (LockProvider.Factory f : fs) {
                unc.add(requests.counted("uncontended", w -> Scenarios.uncontended(f, "u", timing, w)));
            }
            unc.add(requests.counted(
                    "uncontended", w -> Scenarios.uncontended(jetcdLeasePerLock(endpoints, ns), "u", timing, w)));
            report.section("Uncontended acquire+release, 1 thread");
            report.table(unc, false);
            List<Result> inter = interleaved(admin, ns, timing, fs);
            report.section(Harness.INTERLEAVED_SECTION);
            report.line("The phases above run one after another, so load from other processes can favour one of them;"
                    + " here every implementation takes one operation in turn for the whole window, so all see the same"
                    + " load. ops/s = operations / the time spent in them. raw put is one Raft write, the floor of"
                    + " any operation that changes state; an acquire+release changes state twice. raw Txn+delete sends"
                    + " distlock's two requests (put-if-absent with a read of the queue's head, delete with prev_kv)"
                    + " without any lock logic: an etcd transaction costs more than a plain put, so this is the"
                    + " floor of a lock that must learn in its write whether it is the oldest.");
            report.line("");
            report.table(inter, false);
            List<Result> one = new ArrayList<>();
            for (LockProvider.Factory f : fs) {
                one.add(requests.counted(
                        "one key, 8 threads", w -> Scenarios.oneKeyOneClient(f, "k1", THREADS, timing, w)));
            }
            report.section("One key, 8 threads, one client");
            report.table(one, true);
            report.section("etcd requests per acquire+release (grpc_server_handled_total from /metrics)");
            report.line("Unary gRPC calls the server handled during the measured window, divided by the operations"
                    + " in it; streams (Watch, LeaseKeepAlive) are opened once and not counted. Exact only when nothing"
                    + " else uses this etcd during the window.");
            report.line("");
            report.line("| scenario | implementation | requests / op | by method |");
            report.line("| --- | --- | ---: | --- |");
            requests.rows.forEach(report::line);
            report.environment("end");
            report.section("Targets (issue 6)");
            report.targetHeader();
            report.target(
                    "uncontended ops/s ÷ jetcd Lock (interleaved)", ops(inter, DISTLOCK) / ops(inter, JETCD), ">=", 2);
            report.target(
                    "uncontended ops/s ÷ raw put+delete (interleaved)",
                    ops(inter, DISTLOCK) / ops(inter, RAW_PUT_DELETE),
                    ">=",
                    1);
            report.target(
                    "uncontended ops/s ÷ raw Txn+delete, the same requests (interleaved)",
                    ops(inter, DISTLOCK) / ops(inter, RAW_TXN),
                    ">=",
                    1);
            report.target("one key, 8 threads: ops/s ÷ jetcd Lock", ops(one, DISTLOCK) / ops(one, JETCD), ">=", 10);
        } finally {
            try {
                ByteSequence prefix = bytes(ns);
                admin.getKVClient()
                        .delete(prefix, DeleteOption.builder().isPrefix(true).build())
                        .get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                report.line("- cleanup of " + ns + " failed: " + e);
            }
            admin.close();
        }
    }

    /** Counts the unary requests the etcd server handled, from its Prometheus metrics. */
    static final class Requests {
        private final java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        private final java.net.URI metrics;
        final List<String> rows = new ArrayList<>();

        Requests(String endpoint) {
            this.metrics = java.net.URI.create(endpoint.replaceAll("/+$", "") + "/metrics");
        }

        java.util.Map<String, Long> snapshot() {
            java.util.Map<String, Long> m = new java.util.TreeMap<>();
            try {
                String body = http.send(
                                java.net.http.HttpRequest.newBuilder(metrics).build(),
                                java.net.http.HttpResponse.BodyHandlers.ofString())
                        .body();
                for (String line : body.split("\n")) {
                    if (line.startsWith("grpc_server_handled_total{") && line.contains("grpc_type=\"unary\"")) {
                        int at = line.indexOf("grpc_method=\"") + 13;
                        String method = line.substring(at, line.indexOf('"', at));
                        long v = (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                        m.merge(method, v, Long::sum);
                    }
                }
            } catch (java.io.IOException e) {
                return m;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return m;
        }

        Result counted(String scenario, java.util.function.Function<Scenarios.Window, Result> run) {
            java.util.Map<String, Long>[] snaps = newPair();
            Result r = run.apply(new Scenarios.Window() {
                @Override
                public void start() {
                    snaps[0] = snapshot();
                }

                @Override
                public void end() {
                    snaps[1] = snapshot();
                }
            });
            java.util.Map<String, Long> delta = new java.util.TreeMap<>();
            snaps[1].forEach((k, v) -> {
                long d = v - snaps[0].getOrDefault(k, 0L);
                if (d != 0) {
                    delta.put(k, d);
                }
            });
            long total = delta.values().stream().mapToLong(Long::longValue).sum();
            rows.add(String.format(
                    java.util.Locale.ROOT,
                    "| %s | %s | %.2f | %s |",
                    scenario,
                    r.label(),
                    total / (double) Math.max(1, r.windowOps()),
                    delta));
            return r;
        }

        @SuppressWarnings("unchecked")
        private static java.util.Map<String, Long>[] newPair() {
            return new java.util.Map[] {java.util.Map.of(), java.util.Map.of()};
        }
    }

    private static void warm(Client admin, String ns) {
        try {
            admin.getKVClient().get(bytes(ns + "warm")).get(30, TimeUnit.SECONDS); // connect before measuring
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("etcd does not answer: " + e, e);
        }
    }

    static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    private static Result raw(Client admin, String ns, Timing timing) {
        KV kv = admin.getKVClient();
        ByteSequence key = bytes(ns + "raw");
        ByteSequence value = bytes("x");
        return Harness.run(RAW_PUT_DELETE, 1, timing.warmup(), timing.measure(), (t, p) -> {
            kv.put(key, value).get(10, TimeUnit.SECONDS);
            kv.delete(key).get(10, TimeUnit.SECONDS);
        });
    }

    /**
     * raw put, raw put+delete and each factory's lock()+unlock(), one operation of each in turn (in a random order
     * each round) for the warm-up and then the measured window; each result's rate is its operations over the time
     * spent in them, so load that comes and goes hits all of them alike.
     */
    private static List<Result> interleaved(
            Client admin, String ns, Timing timing, List<LockProvider.Factory> factories) {
        KV kv = admin.getKVClient();
        ByteSequence key = bytes(ns + "raw-i");
        ByteSequence value = bytes("x");
        List<String> labels = new ArrayList<>(List.of(RAW_PUT, RAW_PUT_DELETE, RAW_TXN));
        List<Harness.Body> bodies = new ArrayList<>();
        bodies.add((t, p) -> {
            kv.put(key, value).get(10, TimeUnit.SECONDS);
        });
        bodies.add((t, p) -> {
            kv.put(key, value).get(10, TimeUnit.SECONDS);
            kv.delete(key).get(10, TimeUnit.SECONDS);
        });
        // the requests of distlock's uncontended acquire+release without any lock logic: the floor of a lock that
        // must put its key only if absent and learn in the same write whether it is the oldest
        long lease = grant(admin);
        CloseableClient keepAlive = admin.getLeaseClient().keepAlive(lease, new Ignore());
        ByteSequence txnKey = bytes(ns + "raw-t/owner");
        ByteSequence txnPrefix = bytes(ns + "raw-t/");
        ByteSequence txnValue = bytes("lease=30000ms owner=raw");
        PutOption onLease = PutOption.builder().withLeaseId(lease).build();
        GetOption head = GetOption.builder()
                .isPrefix(true)
                .withSortField(GetOption.SortTarget.CREATE)
                .withSortOrder(GetOption.SortOrder.ASCEND)
                .withLimit(1)
                .withKeysOnly(true)
                .build();
        DeleteOption prevKv = DeleteOption.builder().withPrevKV(true).build();
        bodies.add((t, p) -> {
            kv.txn()
                    .If(new Cmp(txnKey, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                    .Then(Op.put(txnKey, txnValue, onLease), Op.get(txnPrefix, head))
                    .Else(Op.get(txnKey, GetOption.builder().withKeysOnly(true).build()))
                    .commit()
                    .get(10, TimeUnit.SECONDS);
            kv.delete(txnKey, prevKv).get(10, TimeUnit.SECONDS);
        });
        try {
            return Harness.interleavedLocks(labels, bodies, factories, "i", timing);
        } finally {
            keepAlive.close();
            var unused = admin.getLeaseClient().revoke(lease); // or it ends with its TTL
        }
    }

    private static long grant(Client admin) {
        try {
            return admin.getLeaseClient().grant(30).get(10, TimeUnit.SECONDS).getID();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("lease grant failed: " + e, e);
        }
    }

    static LockProvider.Factory distlock(String endpoints, String ns) {
        return LockProvider.factory(DISTLOCK, () -> {
            EtcdLockClient c = EtcdLockClient.builder()
                    .endpoints(endpoints)
                    .namespace(ns + "distlock/")
                    .build();
            return RedisBench.provider(c::lock, c::close);
        });
    }

    static LockProvider.Factory jetcd(String endpoints, String ns) {
        return LockProvider.factory(JETCD, () -> {
            Client c = Client.builder().endpoints(endpoints.split(",")).build();
            Map<Thread, Long> leases = new ConcurrentHashMap<>();
            List<CloseableClient> keepAlives = new ArrayList<>();
            return RedisBench.provider(
                    name -> new JetcdLock(
                            c,
                            bytes(ns + "jetcd/" + name),
                            () -> leases.computeIfAbsent(Thread.currentThread(), t -> {
                                try {
                                    long id = c.getLeaseClient()
                                            .grant(30)
                                            .get(10, TimeUnit.SECONDS)
                                            .getID();
                                    synchronized (keepAlives) {
                                        keepAlives.add(c.getLeaseClient().keepAlive(id, new Ignore()));
                                    }
                                    return id;
                                } catch (Exception e) {
                                    throw new IllegalStateException("lease grant failed: " + e, e);
                                }
                            })),
                    () -> {
                        synchronized (keepAlives) {
                            keepAlives.forEach(CloseableClient::close);
                        }
                        for (long id : leases.values()) {
                            try {
                                c.getLeaseClient().revoke(id).get(5, TimeUnit.SECONDS);
                            } catch (Exception e) {
                                // the lease ends with its TTL
                            }
                        }
                        c.close();
                    });
        });
    }

    /** jetcd the way its examples use it: a lease granted for each lock and revoked after the release. */
    static LockProvider.Factory jetcdLeasePerLock(String endpoints, String ns) {
        return LockProvider.factory("jetcd Lock (lease granted+revoked per lock)", () -> {
            Client c = Client.builder().endpoints(endpoints.split(",")).build();
            return RedisBench.provider(
                    name ->
                            new JetcdLock(c, bytes(ns + "jetcd-l/" + name), () -> {
                                try {
                                    return c.getLeaseClient()
                                            .grant(30)
                                            .get(10, TimeUnit.SECONDS)
                                            .getID();
                                } catch (Exception e) {
                                    throw new IllegalStateException("lease grant failed: " + e, e);
                                }
                            }) {
                                @Override
                                public void unlock() {
                                    super.unlock();
                                    try {
                                        c.getLeaseClient().revoke(lastLease()).get(10, TimeUnit.SECONDS);
                                    } catch (Exception e) {
                                        throw new IllegalStateException("lease revoke failed: " + e, e);
                                    }
                                }
                            },
                    c::close);
        });
    }

    private static final class Ignore implements StreamObserver<LeaseKeepAliveResponse> {
        @Override
        public void onNext(LeaseKeepAliveResponse value) {}

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {}
    }

    /** jetcd's Lock client as a {@link Lock}: lock(name, lease) then unlock(ownership key). */
    static class JetcdLock extends LockAndUnlockOnly {
        private final Client client;
        private final ByteSequence name;
        private final java.util.function.LongSupplier lease;
        private ByteSequence key = ByteSequence.EMPTY;
        private long leaseId;

        JetcdLock(Client client, ByteSequence name, java.util.function.LongSupplier lease) {
            this.client = client;
            this.name = name;
            this.lease = lease;
        }

        @Override
        public void lock() {
            try {
                leaseId = lease.getAsLong();
                key = client.getLockClient()
                        .lock(name, leaseId)
                        .get(60, TimeUnit.SECONDS)
                        .getKey();
            } catch (Exception e) {
                throw new IllegalStateException("jetcd lock failed: " + e, e);
            }
        }

        long lastLease() {
            return leaseId;
        }

        @Override
        public void unlock() {
            try {
                client.getLockClient().unlock(key).get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new IllegalStateException("jetcd unlock failed: " + e, e);
            }
        }
    }
}
