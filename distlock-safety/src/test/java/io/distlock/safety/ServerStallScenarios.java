package io.distlock.safety;

import static io.distlock.testkit.history.Property.L3;
import static io.distlock.testkit.history.Property.L4;
import static io.distlock.testkit.history.Property.LIN;
import static io.distlock.testkit.history.Property.S1;
import static io.distlock.testkit.history.Property.S3;

import io.distlock.testkit.Timing;
import io.distlock.testkit.fault.Fault;
import io.distlock.testkit.fault.FaultLog;
import io.distlock.testkit.history.Acquisition;
import io.distlock.testkit.history.CheckReport;
import io.distlock.testkit.history.FencedResourceClient;
import io.distlock.testkit.history.History;
import io.distlock.testkit.history.RecordedHold;
import io.distlock.testkit.history.RecordedLock;
import io.distlock.testkit.server.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;

/*
 * Overview
 *
 * R5 of FAULTS.md: the Redis server stalls while its processes and connections stay up, by one of its own commands:
 *   sleep        DEBUG SLEEP <s>: the server's one thread sleeps; nothing is read, run or answered, and keys expire
 *                meanwhile by the clock (their deletion waits for the server to wake).
 *   pause-all    CLIENT PAUSE <ms> ALL: every client's commands wait; the server itself runs.
 *   pause-write  CLIENT PAUSE <ms> WRITE: commands that may write wait (scripts among them), reads are answered.
 * for (a) half the lease and (b) twice it, on a redis-server of the scenario's own (DEBUG is refused unless the server
 * was started with enable-debug-command).
 *
 * c1 takes the lock uncontended (its lease counts from its own acquire; a hold handed over by a release counts from
 * its waiter's last request, and may have little of it left), reads the counter, c2 and c3 start the fenced-counter
 * workload (W1) through proxies, and the stall starts at once; c1 then checks its hold every 20 ms for the stall plus the lease, writes the counter if
 * its hold is still valid, and releases. Judged as G8: S1, S3, LIN, L3 and L4 by the checker; and on c1's hold, from
 * its history: (a) it is not reported lost, its checks stay true and its write is accepted (a stall of half the lease
 * ends before its lease does: the last renewal before the stall was sent at most a renewal interval earlier); (b) it
 * is reported lost, and neither a check says valid nor the loss is reported later than the lease after the stall
 * began (the last renewal was sent before the stall, so the lease counted from that send has ended by then), give or
 * take DEADLINE_SLACK for recording. Measured: how long after the stall began c1 last believed in its hold and when it
 * was told it was lost, and how many holds of c2 and c3 were lost.
 */
/** R5: the Redis server stalled by DEBUG SLEEP or CLIENT PAUSE (tier 2). */
final class ServerStallScenarios {
    /** Recording slack for the deadline checks of (b): a check's event is written just after isValid() answered. */
    private static final Duration DEADLINE_SLACK = Duration.ofMillis(300);

    private ServerStallScenarios() {}

    /**
     * R5 on a redis-server of its own (with {@code enable-debug-command yes}): stalled by {@code how} ("sleep",
     * "pause-all", "pause-write") for {@code stall}; {@code variant} is "a" (half the lease) or "b" (twice the lease).
     */
    static CheckReport r5ServerStalled(long seed, String how, Duration stall, String variant)
            throws InterruptedException {
        try (RedisStores.Standalone store = new RedisStores.Standalone("--enable-debug-command", "yes");
                Scenario s = new Scenario(
                        "R5" + variant + "-" + how,
                        "Redis stalled (" + how + ") for " + stall.toMillis() + " ms",
                        "tier2",
                        store,
                        seed);
                FencedResourceClient resource =
                        new FencedResourceClient("127.0.0.1", s.resource.port(), Duration.ofSeconds(5))) {
            Duration lease = store.expiry();
            Duration run = Timing.seconds(4).plus(stall).plus(lease.multipliedBy(2));
            for (String c : List.of("c2", "c3")) {
                var unused = s.client(c, true); // connected before c1's hold starts
            }
            RecordedLock l1 = new RecordedLock(s.client("c1", true).lock(s.key()), s.history("c1"));
            // uncontended, so the hold's lease counts from its own acquire: a hold handed over by a release counts
            // from its waiter's last request and may have little of its lease left when the stall begins
            RecordedHold h = l1.tryAcquire(Timing.seconds(10))
                    .orElseThrow(() -> new AssertionError("c1 got no hold within 10 s"));
            OptionalLong read = h.check() ? resource.read(h) : OptionalLong.empty();
            for (String c : List.of("c2", "c3")) {
                s.workload(c, s.client(c, true), 2, run, Tier1Scenarios.WAIT, Tier1Scenarios.THINK);
            }
            Fault f = stall(store.server.port(), how, stall, s.faultLog());
            long stalledAt = f.startedAt();
            long lastOk = Long.MIN_VALUE;
            long checkUntil = stalledAt + stall.plus(lease).toNanos();
            while (System.nanoTime() - checkUntil < 0) {
                if (!h.check()) {
                    break;
                }
                lastOk = System.nanoTime();
                Timing.sleep(Duration.ofMillis(20));
            }
            if (!f.awaitHealed(stall.plusSeconds(10))) {
                throw new AssertionError("the stall did not end within " + stall.plusSeconds(10));
            }
            boolean wrote = read.isPresent() && h.check() && resource.write(h, read.getAsLong() + 1);
            var unused = h.release();
            s.endWorkloads();
            List<String> broken = judge(s, variant, h.token(), stalledAt, lastOk, wrote, lease);
            s.probe(List.of("c1", "c2", "c3"), lease.plusSeconds(5));
            s.leftovers(Timing.scaled(lease.plusSeconds(5)));
            CheckReport r = s.finish(
                    Scenario.expect(Tier1Scenarios.must(store, S1, S3, L3, L4, LIN), Tier1Scenarios.doc(store)));
            if (!broken.isEmpty()) {
                throw new AssertionError(String.join("; ", broken));
            }
            return r;
        }
    }

    /** The checks of R5 beyond the checker's (see the overview); returns what broke. */
    private static List<String> judge(
            Scenario s, String variant, long token, long stalledAt, long lastOk, boolean wrote, Duration lease) {
        List<Acquisition> all = Acquisition.of(History.load(s.dir));
        Acquisition c1 = all.stream()
                .filter(a -> a.process().equals("c1") && a.token() != null && a.token() == token)
                .findFirst()
                .orElseThrow(() -> new AssertionError("c1's hold with token " + token + " is not in its history"));
        long othersLost = all.stream()
                .filter(a -> !a.process().equals("c1") && a.tLost() != null)
                .count();
        long deadline = stalledAt + lease.plus(DEADLINE_SLACK).toNanos();
        Long lostAt = c1.tLost();
        String believed = lastOk == Long.MIN_VALUE ? "none" : Long.toString((lastOk - stalledAt) / 1_000_000);
        String told = lostAt == null ? "never" : Long.toString((lostAt - stalledAt) / 1_000_000);
        s.measure("c1LastValidAfterStallMillis", believed);
        s.measure("c1LostReportedAfterStallMillis", told);
        s.measure("c1Wrote", wrote);
        s.measure("othersHoldsLost", othersLost);
        s.note("c1 (token " + token + ") last valid at +" + believed + " ms, told lost at +" + told
                + " ms after the stall began; its write " + (wrote ? "accepted" : "not made or refused")
                + "; holds of c2 and c3 lost: " + othersLost);
        List<String> broken = new ArrayList<>();
        if (variant.equals("a")) {
            if (lostAt != null) {
                broken.add("R5a: a stall of half the lease lost c1's hold (told at +" + told + " ms)");
            }
            if (!wrote) {
                broken.add("R5a: c1's write after a stall of half the lease was not accepted");
            }
            if (othersLost > 0) {
                broken.add("R5a: a stall of half the lease lost " + othersLost + " hold(s) of c2 and c3");
            }
        } else {
            if (lostAt == null) {
                broken.add("R5b: c1 was never told its hold was lost");
            } else if (lostAt > deadline) {
                broken.add(String.format(
                        Locale.ROOT,
                        "R5b: c1 was told its hold was lost at +%s ms, after its deadline (lease %d ms + %d ms slack)",
                        told,
                        lease.toMillis(),
                        DEADLINE_SLACK.toMillis()));
            }
            if (lastOk != Long.MIN_VALUE && lastOk > deadline) {
                broken.add("R5b: c1's hold was valid at +" + believed + " ms, past its deadline");
            }
            if (c1.checkOkAfterLost() != null) {
                broken.add("R5b: c1's hold was valid again after it was reported lost");
            }
            if (wrote) {
                broken.add("R5b: c1 wrote after a stall of twice the lease");
            }
        }
        return broken;
    }

    /** Starts the stall; it ends by itself after {@code stall} (DEBUG SLEEP cannot be healed earlier). */
    private static Fault stall(int port, String how, Duration stall, FaultLog log) {
        String target = "redis:" + port;
        return switch (how) {
            case "sleep" -> {
                Thread sleeper = new Thread(
                        () -> RedisServer.command(
                                port, "DEBUG", "SLEEP", String.format(Locale.ROOT, "%.3f", stall.toMillis() / 1000.0)),
                        "r5-debug-sleep");
                sleeper.setDaemon(true);
                yield Fault.start(
                        "redis-debug-sleep",
                        target,
                        stall,
                        () -> {
                            sleeper.start();
                            awaitStalled(port);
                        },
                        () -> {
                            try {
                                sleeper.join(Timing.seconds(10).toMillis());
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        },
                        log);
            }
            case "pause-all", "pause-write" ->
                Fault.start(
                        "redis-client-" + how,
                        target,
                        stall,
                        () -> {
                            String reply = RedisServer.command(
                                    port,
                                    "CLIENT",
                                    "PAUSE",
                                    Long.toString(stall.toMillis()),
                                    how.equals("pause-all") ? "ALL" : "WRITE");
                            if (!reply.trim().equals("OK")) {
                                throw new IllegalStateException("CLIENT PAUSE answered " + reply);
                            }
                        },
                        () -> RedisServer.command(port, "CLIENT", "UNPAUSE"),
                        log);
            default -> throw new IllegalArgumentException("no stall " + how);
        };
    }

    /**
     * Returns once the server is asleep: a PING on a connection of its own goes unanswered for 50 ms (the DEBUG SLEEP
     * was read), or after 1 s at most.
     */
    private static void awaitStalled(int port) {
        long end = System.nanoTime() + Duration.ofSeconds(1).toNanos();
        while (System.nanoTime() - end < 0) {
            Thread ping = new Thread(() -> RedisServer.command(port, "PING"), "r5-ping");
            ping.setDaemon(true);
            ping.start();
            try {
                ping.join(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            if (ping.isAlive()) {
                return;
            }
        }
    }
}
