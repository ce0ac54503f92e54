package io.distlock.safety;

import static io.distlock.testkit.history.Property.L3;
import static io.distlock.testkit.history.Property.L4;
import static io.distlock.testkit.history.Property.LIN;
import static io.distlock.testkit.history.Property.S1;
import static io.distlock.testkit.history.Property.S3;

import io.distlock.DistributedLockException;
import io.distlock.LockAdmin;
import io.distlock.LockClient;
import io.distlock.LockInfo;
import io.distlock.LockLostException;
import io.distlock.testkit.Timing;
import io.distlock.testkit.fault.Fault;
import io.distlock.testkit.fault.FaultProxy;
import io.distlock.testkit.history.CheckReport;
import io.distlock.testkit.history.ClientEvent;
import io.distlock.testkit.history.FencedResourceClient;
import io.distlock.testkit.history.HistoryWriter;
import io.distlock.testkit.history.RecordedHold;
import io.distlock.testkit.history.RecordedLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/*
 * Overview
 *
 * G6 of FAULTS.md: a release that the store applies but whose reply the client never gets. As in G5, the fault is the
 * proxy's dropReplies (forward the request, drop the reply, close the connection), aimed at one operation by turning
 * it on for client c1's proxies just around that operation, on a client that does nothing else meanwhile: c1 runs no
 * workload, and its watchdog, stopped by the release, is the only other traffic it could send. On JDBC the fault
 * starts as the release commits (CommitHooks): dropping the reply of an earlier statement of the release's transaction
 * would roll it back, a release not applied. At the first dropped reply a watcher looks the hold up in the store
 * (LockAdmin.inspect, not proxied): "gone" says the request whose reply was dropped had been applied.
 *
 * Each round: c1 takes the lock and makes a fenced increment; c2 (directly connected) starts to wait for the lock;
 * the fault goes on and c1 releases. Two variants alternate:
 *   once  the fault heals as soon as the proxies dropped one reply: a retry of the library's (or its driver's) gets
 *         through and its answer is what the caller sees;
 *   held  the fault lasts until the release returned (at most 5 s): retries within that time are dropped too.
 * c2 must get the lock within the store's expiry + 3 s (L2 of the catalogue), hold it across a renewal, while c3 is
 * refused, make its fenced increment and release it with "ok": a retry of c1's release that ended c2's hold shows up
 * as a failed check, c3 getting in, or c2's release answering lost. A release applied before its reply was lost that
 * answers LockLostException ("lost before the release", LockHold.release) is counted (appliedAnsweredLost); it fails
 * the test where the store's release reports that doubt as a store failure (Redis, RedLock, JDBC TABLE and ROW_LOCK), and is a
 * documented finding elsewhere.
 */
/** G6: a release applied in the store whose reply is lost (tier 2). */
final class ReleaseFaultScenarios {
    private static final int ROUNDS = 6;

    private ReleaseFaultScenarios() {}

    /** One round's figures, for the report. */
    private record Round(String variant, String outcome, String atDrop, long releaseMillis, long takeoverMillis) {
        @Override
        public String toString() {
            return String.format(
                    Locale.ROOT,
                    "%s:%s,%s,%dms,takeover=%dms",
                    variant,
                    outcome,
                    atDrop,
                    releaseMillis,
                    takeoverMillis);
        }
    }

    /**
     * G6 on {@code store}: {@value #ROUNDS} releases by c1 whose replies are dropped (see the overview). Judged: S1,
     * S3, LIN, L3 (c1 and c2 take the lock afterwards), L4 (nothing left) by the checker, and in every round: the
     * release answered ok, lost or a {@link DistributedLockException} (never another exception, never more than 15 s);
     * an "ok" left no hold of c1's in the store; c2 took the lock within the expiry + 3 s and kept it.
     */
    static CheckReport g6ReleaseReplyLost(Store store, long seed) throws InterruptedException {
        return g6ReleaseReplyLost(store, seed, Primitive.LOCK);
    }

    /** The primitive whose release G6 drops the reply of: each is exclusive, so S1 judges it as a lock's. */
    enum Primitive {
        /** A {@link LockClient#lock} (scenario G6). */
        LOCK("G6", ""),
        /** The write lock of a {@link LockClient#readWriteLock} (G6-write): its release runs the read-write script. */
        WRITE_LOCK("G6-write", ", write lock"),
        /** The one permit of a {@link LockClient#semaphore} of size 1 (G6-permit): its release is a claim release. */
        PERMIT("G6-permit", ", semaphore permit");

        final String id;
        final String title;

        Primitive(String id, String title) {
            this.id = id;
            this.title = title;
        }

        RecordedLock of(LockClient c, String key, HistoryWriter history) {
            return switch (this) {
                case LOCK -> new RecordedLock(c.lock(key), history);
                case WRITE_LOCK -> new RecordedLock(c.readWriteLock(key).writeLock(), history);
                case PERMIT -> RecordedLock.ofPermits(c.semaphore(key, 1), 1, history);
            };
        }
    }

    /** {@link #g6ReleaseReplyLost(Store, long)} on the holds of {@code primitive}. */
    static CheckReport g6ReleaseReplyLost(Store store, long seed, Primitive primitive) throws InterruptedException {
        String hookName = "g6-" + store.name() + "-" + seed + "-" + System.nanoTime();
        try (Scenario s = new Scenario(
                        primitive.id, "release applied, reply lost" + primitive.title, "tier2", store, seed);
                FencedResourceClient resource =
                        new FencedResourceClient("127.0.0.1", s.resource.port(), Duration.ofSeconds(5))) {
            Map<String, String> spec = Clients.parse(s.spec("c1", true));
            boolean jdbc = "jdbc".equals(spec.get("kind"));
            List<FaultProxy> proxies = s.proxies("c1");
            List<Fault> faults = new CopyOnWriteArrayList<>();
            Runnable startFaults = () -> {
                for (FaultProxy p : proxies) {
                    faults.add(p.dropReplies(Timing.seconds(5)));
                }
            };
            CommitHooks.Hook hook = new CommitHooks.Hook(startFaults);
            CommitHooks.register(hookName, hook);
            LockClient c1 = jdbc
                    ? s.client("c1", Clients.with(s.spec("c1", true), "commitHook", hookName))
                    : s.client("c1", true);
            RecordedLock l1 = primitive.of(c1, s.key(), s.history("c1"));
            RecordedLock l2 = primitive.of(s.client("c2", false), s.key(), s.history("c2"));
            RecordedLock l3 = primitive.of(s.client("c3", false), s.key(), s.history("c3"));
            LockAdmin admin = s.client("admin", false).admin();
            warmUp(l2);
            warmUp(l3);
            Duration takeoverBound = Timing.scaled(store.expiry().plusSeconds(3));
            List<Round> rounds = new ArrayList<>();
            List<String> broken = new ArrayList<>();
            Map<String, Integer> outcomes = new TreeMap<>();
            int appliedAnsweredLost = 0;
            int applied = 0;
            for (int round = 0; round < ROUNDS; round++) {
                String variant = round % 2 == 0 ? "once" : "held";
                RecordedHold h1 = l1.tryAcquire(Timing.seconds(10))
                        .orElseThrow(() -> new AssertionError("c1 got no hold within 10 s"));
                increment(resource, h1);
                AtomicReference<Optional<RecordedHold>> got = new AtomicReference<>(Optional.empty());
                AtomicLong gotAt = new AtomicLong();
                Thread waiter = new Thread(
                        () -> {
                            try {
                                got.set(l2.tryAcquire(takeoverBound));
                                gotAt.set(System.nanoTime());
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            } catch (DistributedLockException e) {
                                // recorded as unknown by RecordedLock
                            }
                        },
                        "g6-c2-waiter");
                waiter.start();
                Timing.sleep(Duration.ofMillis(150)); // c2 waits (queued, subscribed, or polling)
                long before = dropped(proxies);
                faults.clear();
                AtomicReference<String> atDrop = new AtomicReference<>("no reply dropped");
                Thread watcher = watchFirstDrop(
                        proxies, before, variant.equals("once") ? faults : List.of(), atDrop, admin, s.key(), h1);
                if (jdbc) {
                    hook.arm(); // the faults start as c1's release sends its commit
                } else {
                    startFaults.run();
                }
                long t0 = System.nanoTime();
                String outcome;
                try {
                    outcome = release(h1);
                } finally {
                    faults.forEach(Fault::heal);
                }
                long releaseMillis = (System.nanoTime() - t0) / 1_000_000;
                boolean noCommit = jdbc && hook.disarm();
                watcher.interrupt();
                watcher.join(2000);
                String inStore = inStore(admin, s.key(), h1.token());
                long drops = dropped(proxies) - before;
                s.note("round " + round + " (" + variant + "): release of token " + h1.token() + " answered "
                        + outcome + " after " + releaseMillis + " ms, " + drops + " replies dropped; c1's hold at the"
                        + " first drop: " + atDrop.get() + ", afterwards: " + inStore);
                waiter.join(takeoverBound.plusSeconds(5).toMillis());
                Optional<RecordedHold> h2 = got.get();
                long takeover = h2.isPresent() ? (gotAt.get() - t0) / 1_000_000 : -1;
                rounds.add(new Round(variant, kind(outcome), atDrop.get(), releaseMillis, takeover));
                outcomes.merge(variant + ":" + kind(outcome) + ":" + atDrop.get(), 1, Integer::sum);
                if (noCommit || drops == 0) {
                    broken.add("round " + round + ": the fault dropped no reply (the release sent "
                            + (noCommit ? "no commit" : "nothing") + ")");
                }
                if (atDrop.get().equals("gone")) {
                    applied++;
                    if (kind(outcome).equals("lost")) {
                        appliedAnsweredLost++;
                    }
                }
                if (kind(outcome).equals("other")) {
                    broken.add("round " + round + ": the release answered neither ok, lost nor a store failure: "
                            + outcome);
                }
                if (releaseMillis > Timing.seconds(15).toMillis()) {
                    broken.add("round " + round + ": the release took " + releaseMillis + " ms");
                }
                if (outcome.equals("ok") && inStore.equals("held")) {
                    broken.add("round " + round + ": the release answered ok but c1's hold is still in the store");
                }
                if (h2.isEmpty()) {
                    broken.add("round " + round + ": c2 did not get the lock within " + takeoverBound
                            + " of c1's release (L2)");
                    continue;
                }
                broken.addAll(keep(s, round, resource, h2.get(), l3));
                Timing.sleep(Duration.ofMillis(200));
            }
            s.measure("rounds", rounds.toString());
            s.measure("outcomes", outcomes.toString());
            s.measure("droppedReplies", dropped(proxies));
            s.measure("appliedBeforeReplyLost", applied);
            s.measure("appliedAnsweredLost", appliedAnsweredLost);
            if (appliedAnsweredLost > 0) {
                String finding = appliedAnsweredLost + " of " + applied + " releases applied before their reply was"
                        + " lost answered LockLostException (\"lost before the release\")";
                if (unknownIsNotLost(spec)) {
                    broken.add(finding);
                } else {
                    s.note("DOC: " + finding);
                }
            }
            s.probe(List.of("c1", "c2"), store.expiry().plusSeconds(3));
            s.leftovers(Timing.scaled(store.expiry().plusSeconds(3)));
            CheckReport r = s.finish(
                    Scenario.expect(Tier1Scenarios.must(store, S1, S3, L3, L4, LIN), Tier1Scenarios.doc(store)));
            if (!broken.isEmpty()) {
                throw new AssertionError(primitive.id + " on " + store.name() + ": " + String.join("; ", broken));
            }
            return r;
        } finally {
            CommitHooks.unregister(hookName);
        }
    }

    /**
     * Whether the store's release answers an applied release whose reply was lost with something other than
     * LockLostException: JDBC lock tables (mode TABLE), whose release retries after a failed commit and reports a hold
     * it cannot find then as an unknown outcome; ROW_LOCK, whose release reports a commit that failed once sent as
     * unknown; Redis, whose release reports a "not there" answer to a command Lettuce wrote twice (once reconnected) as
     * unknown; RedLock, which counts such answers of its nodes as unknown, not as "not there".
     */
    private static boolean unknownIsNotLost(Map<String, String> spec) {
        String kind = spec.get("kind");
        String mode = spec.get("mode");
        return "redis".equals(kind)
                || "redlock".equals(kind)
                || ("jdbc".equals(kind) && ("TABLE".equals(mode) || "ROW_LOCK".equals(mode)));
    }

    /** One acquire and release by {@code l}, so that its client is connected (and has its lease) before the rounds. */
    private static void warmUp(RecordedLock l) throws InterruptedException {
        Optional<RecordedHold> h = l.tryAcquire(Timing.seconds(10));
        if (h.isEmpty()) {
            throw new AssertionError("warm-up: no hold within 10 s");
        }
        String out = release(h.get());
        if (!out.equals("ok")) {
            throw new AssertionError("warm-up: the release answered " + out);
        }
    }

    /**
     * Watches c1's proxies for the first dropped reply: then looks up whether c1's hold {@code h} is still in the store
     * ("held" or "gone": whether the request whose reply was dropped had been applied), into {@code atDrop}, and heals
     * {@code toHeal}.
     */
    private static Thread watchFirstDrop(
            List<FaultProxy> proxies,
            long before,
            List<Fault> toHeal,
            AtomicReference<String> atDrop,
            LockAdmin admin,
            String key,
            RecordedHold h) {
        Thread t = new Thread(
                () -> {
                    while (!Thread.currentThread().isInterrupted()) {
                        if (dropped(proxies) > before) {
                            toHeal.forEach(Fault::heal);
                            atDrop.set(inStore(admin, key, h.token()));
                            return;
                        }
                        Timing.sleep(Duration.ofMillis(1));
                    }
                },
                "g6-watcher");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /**
     * c2's part of a round: it holds across a renewal (its check must stay true), c3 is refused meanwhile, it makes its
     * fenced increment and releases with ok. Returns what broke.
     */
    private static List<String> keep(
            Scenario s, int round, FencedResourceClient resource, RecordedHold h2, RecordedLock l3)
            throws InterruptedException {
        List<String> broken = new ArrayList<>();
        var read = h2.check() ? resource.read(h2) : java.util.OptionalLong.empty();
        Timing.sleep(s.store.renewInterval().plusMillis(300));
        if (!h2.check()) {
            broken.add("round " + round + ": c2's hold turned invalid after c1's faulted release");
        }
        Optional<RecordedHold> h3;
        try {
            h3 = l3.tryAcquire(Duration.ZERO);
        } catch (DistributedLockException e) {
            s.note("round " + round + ": c3's attempt failed: " + e); // recorded as unknown; the checker judges it
            h3 = Optional.empty();
        }
        if (h3.isPresent()) {
            broken.add("round " + round + ": c3 got the lock while c2 held it");
            var unused = h3.get().release();
        }
        if (read.isPresent() && h2.check()) {
            var written = resource.write(h2, read.getAsLong() + 1);
        }
        String out = release(h2);
        if (!out.equals("ok")) {
            broken.add("round " + round + ": c2's release answered " + out);
        }
        return broken;
    }

    private static void increment(FencedResourceClient resource, RecordedHold h) {
        if (!h.check()) {
            return;
        }
        var v = resource.read(h);
        if (v.isPresent() && h.check()) {
            var written = resource.write(h, v.getAsLong() + 1);
        }
    }

    private static long dropped(List<FaultProxy> proxies) {
        return proxies.stream().mapToLong(FaultProxy::droppedReplies).sum();
    }

    /** Whether the store still has the hold with {@code token}: "held", "gone", or "unknown: ..." */
    private static String inStore(LockAdmin admin, String key, long token) {
        try {
            Optional<LockInfo> info = admin.inspect(key);
            boolean held = info.map(i -> i.holders().stream().anyMatch(h -> h.fencingToken() == token))
                    .orElse(false);
            return held ? "held" : "gone";
        } catch (RuntimeException e) {
            return "unknown: " + e;
        }
    }

    /** "ok", "lost", "failed" (a store failure) or "other", from {@link #release}'s answer. */
    private static String kind(String outcome) {
        if (outcome.equals("ok") || outcome.equals("lost")) {
            return outcome;
        }
        return outcome.startsWith("failed: ") ? "failed" : "other";
    }

    /**
     * Releases {@code h}, recorded as {@link RecordedHold#release} records it, and says how it ended: "ok", "lost"
     * ({@link LockLostException}), "failed: ..." ({@link DistributedLockException}), or "other: ..." for anything else.
     */
    private static String release(RecordedHold h) {
        HistoryWriter w = h.history();
        long op = w.nextOp();
        w.client(h.key(), h.acq(), op, ClientEvent.Op.RELEASE, ClientEvent.Type.INVOKE, h.token(), null, null);
        try {
            h.hold().release();
            w.client(h.key(), h.acq(), op, ClientEvent.Op.RELEASE, ClientEvent.Type.OK, h.token(), null, null);
            return "ok";
        } catch (LockLostException e) {
            w.client(h.key(), h.acq(), op, ClientEvent.Op.RELEASE, ClientEvent.Type.FAIL, h.token(), null, "lost");
            return "lost";
        } catch (DistributedLockException e) {
            w.client(
                    h.key(), h.acq(), op, ClientEvent.Op.RELEASE, ClientEvent.Type.INFO, h.token(), null, e.toString());
            return "failed: " + e.getClass().getSimpleName() + ": " + e.getMessage();
        } catch (RuntimeException e) {
            w.client(
                    h.key(), h.acq(), op, ClientEvent.Op.RELEASE, ClientEvent.Type.INFO, h.token(), null, e.toString());
            return "other: " + e;
        }
    }
}
