package io.distlock.safety;

import io.distlock.LockClient;
import io.distlock.testkit.Timing;
import io.distlock.testkit.fault.FaultLog;
import io.distlock.testkit.fault.FaultProxy;
import io.distlock.testkit.history.Acquisition;
import io.distlock.testkit.history.CheckOptions;
import io.distlock.testkit.history.CheckReport;
import io.distlock.testkit.history.ClientEvent;
import io.distlock.testkit.history.FencedResourceServer;
import io.distlock.testkit.history.History;
import io.distlock.testkit.history.HistoryChecker;
import io.distlock.testkit.history.HistoryWriter;
import io.distlock.testkit.history.NemesisEvent;
import io.distlock.testkit.history.Property;
import io.distlock.testkit.history.PropertyResult;
import io.distlock.testkit.history.RecordedHold;
import io.distlock.testkit.history.RecordedLock;
import io.distlock.testkit.history.Violation;
import io.distlock.testkit.server.RedisServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * One run of one scenario on one store: the harness every scenario method of ScenarioCatalog drives.
 *
 * Setup: a directory target/histories/<scenario>/<store>/<seed> for the history files, a fenced resource (a TCP
 * counter that logs every request), a prefix of the scenario's own in the store, and a history file "nemesis" for the
 * run's facts and the faults' starts and ends. The seed and every fault, as it is applied, are printed with their
 * time since the start ("SCHEDULE +4.210s pause c2 ..."), so a failing run can be read and replayed.
 *
 * Clients: in this JVM (one LockClient per client process name, each with a history file), or worker JVMs
 * (SafetyWorker) where a fault needs a process of its own (SIGKILL, SIGSTOP). Where the store allows it, each client
 * reaches it through fault proxies of its own, so that a network fault hits one client only.
 *
 * Ending: probes (L3), a leftovers scan that waits up to the store's expiry plus slack for the store to empty (L4),
 * the history checker, a result file for the report, and the assertion of the properties the scenario must keep.
 */
final class Scenario implements AutoCloseable {
    final String id;
    final String title;
    final String tier;
    final Store store;
    final long seed;
    final String prefix;
    final Path dir;
    final HistoryWriter nemesis;
    final FencedResourceServer resource;
    private final long started = System.nanoTime();
    private final List<String> schedule = new CopyOnWriteArrayList<>();
    private final Map<String, LockClient> clients = new LinkedHashMap<>();
    private final Map<String, List<FaultProxy>> proxies = new LinkedHashMap<>();
    private final List<Workload> workloads = new ArrayList<>();
    private final List<WorkerProcess> workers = new ArrayList<>();
    private final List<HistoryWriter> writers = new ArrayList<>();
    private final Map<String, Object> extra = new LinkedHashMap<>();
    private volatile NemesisEvent.Effect effect = NemesisEvent.Effect.NONE;
    private volatile String faultKey = "";
    private boolean finished;
    private final String key;

    /**
     * Demonstrations that the checks can fail, for a run of the suite: {@code -Dsafety.brokenClients=true} wraps every
     * client a scenario makes (in this JVM or a worker) in {@link BrokenLockClient}, {@code -Dsafety.unfenced=true}
     * turns the fence of the resource off. Either one is printed in the schedule.
     */
    static final boolean BROKEN_CLIENTS = Boolean.getBoolean("safety.brokenClients");

    static final boolean UNFENCED = Boolean.getBoolean("safety.unfenced");

    Scenario(String id, String title, String tier, Store store, long seed) {
        this(id, title, tier, store, seed, true);
    }

    Scenario(String id, String title, String tier, Store store, long seed, boolean fenced) {
        this.id = id;
        this.title = title;
        this.tier = tier;
        this.store = store;
        this.seed = seed;
        this.key = "k";
        String run = id.toLowerCase(Locale.ROOT) + "-" + Long.toHexString(seed & 0xFFFFF);
        this.prefix = store.prefix(run);
        this.dir = Path.of(System.getProperty("safety.histories", "target/histories"), id, store.name(), "" + seed);
        // the history files are appended to: a replayed seed must not read the earlier run's events as its own
        clearDirectory(dir);
        this.nemesis = HistoryWriter.open(dir.resolve("nemesis.jsonl"), "nemesis");
        this.resource = fenced && !UNFENCED
                ? FencedResourceServer.start(dir.resolve("resource.jsonl"))
                : FencedResourceServer.startUnfenced(dir.resolve("resource.jsonl"));
        nemesis.meta("scenario", id);
        nemesis.meta("backend", store.name());
        nemesis.meta("seed", Long.toString(seed));
        System.out.printf(
                Locale.ROOT, "SCENARIO %s (%s) on %s seed=%d histories=%s%n", id, title, store.name(), seed, dir);
        if (BROKEN_CLIENTS) {
            note("demonstration (-Dsafety.brokenClients=true): every client is a BrokenLockClient");
        }
        if (UNFENCED && fenced) {
            note("demonstration (-Dsafety.unfenced=true): the resource accepts every request, fenced or not");
        }
    }

    /** The lock name every client of the scenario contends for. */
    String key() {
        return key;
    }

    long elapsedMillis() {
        return (System.nanoTime() - started) / 1_000_000;
    }

    List<String> schedule() {
        return List.copyOf(schedule);
    }

    /** Prints and keeps one line of the fault schedule, with the time since the start. */
    void note(String what) {
        String line = String.format(Locale.ROOT, "+%.3fs %s", elapsedMillis() / 1000.0, what);
        schedule.add(line);
        System.out.println("SCHEDULE " + id + "/" + store.name() + " " + line);
    }

    /** Records a number for the report (takeover time, overlap count, ...). */
    void measure(String name, Object value) {
        extra.put(name, value);
    }

    /** The log for faults: nemesis events about the scenario's key with the effect set by {@link #effect}. */
    FaultLog faultLog() {
        return (fault, target, start) -> {
            note((start ? "start " : "end ") + fault + " on " + target);
            nemesis.nemesis(fault, target, start ? NemesisEvent.Phase.START : NemesisEvent.Phase.END, faultKey, effect);
        };
    }

    /** What the next faults do to the holder (see {@link NemesisEvent.Effect}); the default is NONE. */
    Scenario effect(NemesisEvent.Effect e) {
        this.effect = e;
        this.faultKey = e == NemesisEvent.Effect.NONE ? "" : key;
        return this;
    }

    /** The spec of client {@code process}: through proxies of its own when {@code proxied} and the store allows it. */
    String spec(String process, boolean proxied) {
        List<Integer> ports = store.ports();
        if (proxied && store.proxiable()) {
            List<FaultProxy> mine = proxies.computeIfAbsent(process, p -> {
                List<FaultProxy> list = new ArrayList<>();
                for (int port : store.ports()) {
                    list.add(FaultProxy.start(p + "->" + port, "127.0.0.1", port, faultLog()));
                }
                return list;
            });
            ports = mine.stream().map(FaultProxy::port).toList();
        }
        String spec = store.spec(process, prefix, ports);
        return BROKEN_CLIENTS ? Clients.with(spec, "broken", "true") : spec;
    }

    /** The proxies of client {@code process} (empty if it connects directly). */
    List<FaultProxy> proxies(String process) {
        return proxies.getOrDefault(process, List.of());
    }

    /** A client in this JVM for {@code process}, made once. */
    LockClient client(String process, boolean proxied) {
        return clients.computeIfAbsent(process, p -> Clients.create(spec(p, proxied)));
    }

    /** A client in this JVM from an explicit spec (a broken one, say). */
    LockClient client(String process, String spec) {
        return clients.computeIfAbsent(process, p -> Clients.create(spec));
    }

    HistoryWriter history(String process) {
        HistoryWriter w = HistoryWriter.open(dir.resolve(process + ".jsonl"), process);
        writers.add(w);
        return w;
    }

    /** Runs the fenced-counter workload in this JVM for {@code process}. */
    Workload workload(
            String process, LockClient client, int threads, Duration duration, Duration wait, Duration think) {
        Workload w = new Workload(
                        client, history(process), key, threads, wait, think, resource.port(), seed + workloads.size())
                .start(duration);
        workloads.add(w);
        return w;
    }

    /** Starts a worker JVM for {@code process} (see {@link SafetyWorker} for the modes). */
    WorkerProcess worker(
            String process, String mode, String spec, int threads, Duration duration, Duration wait, Duration think) {
        return worker(process, mode, spec, threads, duration, wait, think, Map.of());
    }

    /** As {@link #worker(String, String, String, int, Duration, Duration, Duration)}, with {@code environment}. */
    WorkerProcess worker(
            String process,
            String mode,
            String spec,
            int threads,
            Duration duration,
            Duration wait,
            Duration think,
            Map<String, String> environment) {
        return worker(process, mode, spec, threads, duration, wait, think, environment, List.of(), null);
    }

    /**
     * As {@link #worker(String, String, String, int, Duration, Duration, Duration, Map)}, the JVM run by {@code
     * launcher} ({@code ip netns exec <ns>}, say); with a {@code relay}, the worker reaches the fenced resource
     * through it instead of on the loopback.
     */
    WorkerProcess worker(
            String process,
            String mode,
            String spec,
            int threads,
            Duration duration,
            Duration wait,
            Duration think,
            Map<String, String> environment,
            List<String> launcher,
            @Nullable Relay relay) {
        WorkerProcess w = WorkerProcess.start(
                process,
                List.of(
                        mode,
                        process,
                        dir.toString(),
                        spec,
                        Integer.toString(relay == null ? resource.port() : relay.port()),
                        key,
                        Integer.toString(threads),
                        Long.toString(duration.toMillis()),
                        Long.toString(wait.toMillis()),
                        Long.toString(think.toMillis()),
                        Long.toString(seed + 100 + workers.size())),
                environment,
                launcher,
                relay == null ? List.of() : List.of("-Dsafety.resource.host=" + relay.host()));
        workers.add(w);
        note("started worker JVM " + process + " (pid " + w.pid() + ", " + mode + ")");
        return w;
    }

    /**
     * The client process among {@code processes} that holds the scenario's key now, as the clients' own histories
     * tell (an acquisition that returned a hold and has neither begun its release nor been reported lost): works on
     * every store, also where the store cannot name another client's hold (session locks).
     */
    Optional<String> holder(List<String> processes) {
        return currentHold(processes).map(Acquisition::process);
    }

    private Optional<Acquisition> currentHold(List<String> processes) {
        return Acquisition.of(History.load(dir)).stream()
                .filter(a -> a.ok() && a.tRelease() == null && a.tLost() == null && processes.contains(a.process()))
                .reduce((a, b) -> b);
    }

    /**
     * Waits (at most {@code bound}) until one of {@code processes} holds the key with a hold that began less than half
     * a second ago, so that a fault aimed at it next lands inside that hold (the scenarios' slow holders hold for a
     * second or more); returns which.
     */
    String awaitHolder(List<String> processes, Duration bound) {
        long end = System.nanoTime() + bound.toNanos();
        long fresh = Duration.ofMillis(500).toNanos();
        while (System.nanoTime() - end < 0) {
            Optional<Acquisition> h = currentHold(processes);
            Long ok = h.map(Acquisition::tOk).orElse(null);
            if (h.isPresent() && ok != null && System.nanoTime() - ok < fresh) {
                return h.get().process();
            }
            Timing.sleep(Duration.ofMillis(20));
        }
        throw new AssertionError("none of " + processes + " held " + key + " within " + bound);
    }

    /**
     * L3: each of {@code processes} (clients of this JVM; made if missing, directly connected) takes and releases the
     * key, waiting at most {@code wait}; recorded as PROBE events.
     */
    void probe(List<String> processes, Duration wait) throws InterruptedException {
        note("probing " + processes);
        for (String p : processes) {
            LockClient c = client(p, false);
            HistoryWriter w = history(p + "-probe");
            long op = w.nextOp();
            w.client(key, p + "-probe", op, ClientEvent.Op.PROBE, ClientEvent.Type.INVOKE, null, null, null);
            try {
                Optional<RecordedHold> h = new RecordedLock(c.lock(key), w).tryAcquire(wait);
                if (h.isPresent()) {
                    var unused = h.get().release();
                }
                w.client(
                        key,
                        p + "-probe",
                        op,
                        ClientEvent.Op.PROBE,
                        h.isPresent() ? ClientEvent.Type.OK : ClientEvent.Type.FAIL,
                        null,
                        null,
                        h.isPresent() ? null : "still busy after " + wait);
            } catch (RuntimeException e) {
                w.client(key, p + "-probe", op, ClientEvent.Op.PROBE, ClientEvent.Type.FAIL, null, null, e.toString());
            }
        }
    }

    /** L4: waits up to {@code bound} for the store to hold nothing under the prefix, then records what is left. */
    void leftovers(Duration bound) {
        long end = System.nanoTime() + bound.toNanos();
        Store.Leftovers left = store.leftovers(prefix);
        while (left.count() > 0 && System.nanoTime() - end < 0) {
            Timing.sleep(Duration.ofMillis(200));
            left = store.leftovers(prefix);
        }
        note("leftovers: " + left.count() + (left.count() > 0 ? " (" + left.detail() + ")" : ""));
        nemesis.client(
                key,
                "-",
                nemesis.nextOp(),
                ClientEvent.Op.LEFTOVERS,
                ClientEvent.Type.OK,
                null,
                left.count(),
                left.detail());
    }

    /**
     * The default bounds for this store: takeover within expiry + 3 s, loss told within renewal + 2 s, held by nobody
     * while asked for at most expiry + 3 s (scaled).
     */
    CheckOptions options() {
        return CheckOptions.defaults()
                .withTakeoverBound(Timing.scaled(store.expiry().plusSeconds(3)))
                .withIdleBound(Timing.scaled(store.expiry().plusSeconds(3)))
                .withLossNoticeBound(Timing.scaled(store.renewInterval().plusSeconds(2)));
    }

    /**
     * Stops the workloads, checks the histories, writes the result file, and fails if a MUST property failed (with the
     * report and the timeline of the first violation).
     */
    CheckReport finish(Map<Property, ScenarioResult.Expect> expect) throws InterruptedException {
        return finish(expect, options());
    }

    CheckReport finish(Map<Property, ScenarioResult.Expect> given, CheckOptions options) throws InterruptedException {
        // L6 is judged in every scenario as SHOULD unless the scenario says otherwise
        Map<Property, ScenarioResult.Expect> expect = new EnumMap<>(Property.class);
        expect.putAll(given);
        expect.putIfAbsent(Property.L6, ScenarioResult.Expect.SHOULD);
        stopClients();
        finished = true;
        CheckReport report = HistoryChecker.check(dir, options);
        PropertyResult s3 = report.result(Property.S3);
        PropertyResult s4 = report.result(Property.S4);
        measure("refusedRequests", s3.measure() == null ? 0 : s3.measure());
        measure("rawOverlaps", s4.measure() == null ? 0 : s4.measure());
        measure("acceptedWrites", resource.counter(key).acceptedWrites());
        List<Property> failedMust = new ArrayList<>();
        for (Map.Entry<Property, ScenarioResult.Expect> e : expect.entrySet()) {
            if (e.getValue() == ScenarioResult.Expect.MUST && report.failed(e.getKey())) {
                failedMust.add(e.getKey());
            }
        }
        // S4 is measured; a scenario without faults must see no raw overlap at all
        boolean overlapsMustBeZero = expect.get(Property.S4) == ScenarioResult.Expect.MUST;
        if (overlapsMustBeZero && s4.measure() != null && s4.measure() > 0) {
            failedMust.add(Property.S4);
        }
        String failure = failedMust.isEmpty() ? null : "MUST properties failed: " + failedMust;
        ScenarioResult.write(
                Path.of(System.getProperty("safety.results", "target/safety-results")),
                this,
                report,
                expect,
                failedMust.isEmpty(),
                failure,
                extra);
        System.out.println("RESULT " + id + "/" + store.name() + " seed=" + seed + " "
                + (failure == null ? "PASS" : "FAIL " + failure) + "\n" + report.describe());
        if (expect.get(Property.L6) == ScenarioResult.Expect.SHOULD && report.failed(Property.L6)) {
            Violation idle = report.firstViolation(Property.L6).orElseThrow();
            System.out.println("SHOULD " + id + "/" + store.name() + " L6 failed: " + idle.message() + "\n"
                    + report.timeline(idle));
        }
        if (!failedMust.isEmpty()) {
            report.assertHolds(failedMust.toArray(new Property[0]));
            throw new AssertionError(failure + "\n" + report.describe()
                    + s4.violations().stream().findFirst().map(report::timeline).orElse(""));
        }
        return report;
    }

    /** Expectations: the given MUST properties, the given DOC ones, the rest not judged. */
    static Map<Property, ScenarioResult.Expect> expect(List<Property> must, List<Property> doc) {
        Map<Property, ScenarioResult.Expect> m = new EnumMap<>(Property.class);
        must.forEach(p -> m.put(p, ScenarioResult.Expect.MUST));
        doc.forEach(p -> m.put(p, ScenarioResult.Expect.DOC));
        return m;
    }

    /** Waits for the in-JVM workloads and the worker JVMs to finish their runs. Idempotent. */
    void endWorkloads() throws InterruptedException {
        for (Workload w : workloads) {
            if (!w.join(Timing.seconds(120))) {
                throw new AssertionError("a workload did not end within its run plus 120 s");
            }
        }
        stopClients();
    }

    private void stopClients() throws InterruptedException {
        workloads.forEach(Workload::stop);
        for (Workload w : workloads) {
            if (!w.join(Timing.seconds(30))) {
                throw new AssertionError("a workload thread did not stop within 30 s");
            }
            if (w.failure() != null) {
                throw new AssertionError("a workload thread died", w.failure());
            }
        }
        for (WorkerProcess w : workers) {
            if (w.isAlive()) {
                w.waitFor(Timing.seconds(60));
            }
        }
    }

    @Override
    public void close() {
        if (!finished) {
            // the scenario threw before its check: the report shows it as failed, the test's own failure says why
            ScenarioResult.writeUnfinished(
                    Path.of(System.getProperty("safety.results", "target/safety-results")), this, extra);
        }
        workloads.forEach(Workload::stop);
        workers.forEach(WorkerProcess::close);
        for (WorkerProcess w : workers) {
            // the worker's own log (the library's warnings), next to its history
            try {
                Files.write(dir.resolve(w.name + ".out"), w.lines(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                note("could not keep the output of " + w.name + ": " + e);
            }
        }
        for (LockClient c : clients.values()) {
            try {
                c.close();
            } catch (RuntimeException e) {
                // closing anyway
            }
        }
        proxies.values().forEach(list -> list.forEach(FaultProxy::close));
        writers.forEach(HistoryWriter::close);
        resource.close();
        nemesis.close();
        if (store instanceof JdbcStores.Database db) {
            db.drop(prefix);
        }
    }

    private static void clearDirectory(Path dir) {
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (var files = Files.walk(dir)) {
            for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(f);
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("cannot clear " + dir + " for the run", e);
        }
    }

    /** A free loopback port (for tests that need one). */
    static int freePort() {
        return RedisServer.freeLoopbackPort();
    }
}
