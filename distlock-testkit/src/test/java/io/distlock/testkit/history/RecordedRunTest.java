package io.distlock.testkit.history;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.LockClient;
import io.distlock.testkit.InMemoryLockClient;
import io.distlock.testkit.InMemoryLockServer;
import io.distlock.testkit.history.PropertyResult.Status;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Records real runs of the read-increment-write workload over the TCP fenced resource and checks them: clients that
 * share one in-memory store pass every property; clients that each have a store of their own (no exclusion between
 * them) are caught, by S1 and S2 always, and by S3's lost increments when the resource is not fenced.
 */
class RecordedRunTest {
    @SuppressWarnings("NullAway.Init") // set by JUnit before each test
    @TempDir
    Path dir;

    @Test
    void sharedStore_passes() throws Exception {
        InMemoryLockServer server = InMemoryLockServer.create();
        List<LockClient> clients = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            clients.add(InMemoryLockClient.builder().server(server).build());
        }
        try (FencedResourceServer resource = FencedResourceServer.start(dir.resolve("resource.jsonl"))) {
            run(clients, resource.port());
            CheckReport report = HistoryChecker.check(dir, CheckOptions.defaults());

            report.assertHolds(Property.values());
            assertThat(report.result(Property.S3).measure()).isZero();
            assertThat(resource.counter("k").value())
                    .isEqualTo(resource.counter("k").acceptedWrites());
            assertThat(resource.counter("k").acceptedWrites()).isGreaterThan(10);
        } finally {
            clients.forEach(LockClient::close);
        }
    }

    @Test
    void separateStores_areCaught() throws Exception {
        List<LockClient> clients = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            clients.add(InMemoryLockClient.create()); // a store each: every client "holds" the lock at once
        }
        try (FencedResourceServer resource = FencedResourceServer.start(dir.resolve("resource.jsonl"))) {
            run(clients, resource.port());
            CheckReport report = HistoryChecker.check(dir, CheckOptions.defaults());

            assertThat(report.failed(Property.S1)).isTrue();
            assertThat(report.failed(Property.S2)).isTrue(); // every store issues tokens from 1
            assertThat(report.failed(Property.LIN)).isTrue();
            // the fence refused the duplicates, so no increment was lost
            assertThat(report.result(Property.S3).status()).isEqualTo(Status.PASS);
            assertThat(report.result(Property.S3).measure()).isPositive();
        } finally {
            clients.forEach(LockClient::close);
        }
    }

    @Test
    void separateStores_unfencedResource_losesIncrements() throws Exception {
        List<LockClient> clients = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            clients.add(InMemoryLockClient.create());
        }
        try (FencedResourceServer resource = FencedResourceServer.startUnfenced(dir.resolve("resource.jsonl"))) {
            run(clients, resource.port());
            CheckReport report = HistoryChecker.check(dir, CheckOptions.defaults());

            assertThat(report.failed(Property.S3)).isTrue();
            assertThat(report.result(Property.S3).violations())
                    .anySatisfy(v -> assertThat(v.message()).contains("lost increment"));
            assertThat(report.result(Property.S4).measure()).isPositive();
        } finally {
            clients.forEach(LockClient::close);
        }
    }

    @Test
    void historyFile_survivesARoundTrip() throws Exception {
        Path file = dir.resolve("c1.jsonl");
        try (HistoryWriter w = HistoryWriter.open(file, "c1")) {
            w.meta("scenario", "round trip \"quoted\"\n");
            w.client("k", "c1-1", 1, ClientEvent.Op.ACQUIRE, ClientEvent.Type.INFO, null, null, "timeout: \\ \t x");
            w.nemesis("pause", "c1", NemesisEvent.Phase.START, "k", NemesisEvent.Effect.HOLDER_DOWN);
        }
        Files.writeString(file, "{\"kind\":\"client\",\"t\":12", java.nio.file.StandardOpenOption.APPEND);

        History h = History.load(dir);

        assertThat(h.meta()).containsEntry("scenario", "round trip \"quoted\"\n");
        assertThat(h.client()).singleElement().satisfies(e -> {
            assertThat(e.error()).isEqualTo("timeout: \\ \t x");
            assertThat(e.type()).isEqualTo(ClientEvent.Type.INFO);
            assertThat(e.token()).isNull();
        });
        assertThat(h.nemesis()).singleElement().satisfies(n -> assertThat(n.effect())
                .isEqualTo(NemesisEvent.Effect.HOLDER_DOWN));
        assertThat(h.skippedLines()).isEqualTo(1); // the line a kill cut short
    }

    /** Each client: two threads of read, sleep, write +1 under a hold, for a bounded time. */
    private void run(List<LockClient> clients, int port) throws Exception {
        List<Thread> threads = new ArrayList<>();
        List<AutoCloseable> closing = new ArrayList<>();
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1500);
        for (int i = 0; i < clients.size(); i++) {
            HistoryWriter w = HistoryWriter.open(dir.resolve("c" + i + ".jsonl"), "c" + i);
            closing.add(w);
            for (int t = 0; t < 2; t++) {
                RecordedLock lock = new RecordedLock(clients.get(i).lock("k"), w);
                FencedResourceClient resource = new FencedResourceClient("127.0.0.1", port, Duration.ofSeconds(5));
                closing.add(resource);
                threads.add(new Thread(() -> {
                    try {
                        while (System.nanoTime() - end < 0) {
                            Optional<RecordedHold> h = lock.tryAcquire(Duration.ofMillis(200));
                            if (h.isEmpty()) {
                                continue;
                            }
                            RecordedHold hold = h.get();
                            if (hold.check()) {
                                OptionalLong v = resource.read(hold);
                                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
                                if (v.isPresent() && hold.check()) {
                                    var unused = resource.write(hold, v.getAsLong() + 1);
                                }
                            }
                            var unused = hold.release();
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }));
            }
        }
        threads.forEach(Thread::start);
        for (Thread t : threads) {
            t.join();
        }
        for (AutoCloseable c : closing) {
            c.close();
        }
    }
}
