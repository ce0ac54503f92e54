package io.distlock.safety;

import static io.distlock.testkit.history.Property.L3;
import static io.distlock.testkit.history.Property.L4;
import static io.distlock.testkit.history.Property.LIN;
import static io.distlock.testkit.history.Property.S1;
import static io.distlock.testkit.history.Property.S2;
import static io.distlock.testkit.history.Property.S3;

import io.distlock.testkit.Timing;
import io.distlock.testkit.fault.Fault;
import io.distlock.testkit.history.CheckReport;
import io.distlock.testkit.history.ClientEvent;
import io.distlock.testkit.history.History;
import io.distlock.testkit.server.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/*
 * Overview
 *
 * C3 of FAULTS.md: the slot of the scenario's lock (every key of one lock name shares a hash tag, so one slot) is
 * migrated from its master to another master and back, by hand as redis-cli --cluster reshard does it, while three
 * clients in this JVM run the fenced-counter workload (a slow holder c1 and two quick clients, Tier2StoreScenarios).
 *
 * One migration: CLUSTER SETSLOT <slot> IMPORTING <source> on the target, SETSLOT MIGRATING <target> on the source; a
 * window in that state with every key still on the source (clients meet ASK and TRYAGAIN); MIGRATE of the slot's
 * keys, one key at a time with a pause between (so the hold and the fence counter are on different nodes for a
 * while) or all in one MIGRATE; SETSLOT <slot> NODE <target> on the target, the source and the other masters. Each
 * migration is logged as a fault from the first SETSLOT to the last.
 *
 * After each migration the scenario checks that no key of the slot is left on the source and that the fence counter
 * is on the target with the other keys (the keys moved together). The clients must keep every MUST property: S1, S2
 * (no failover, so tokens stay sound), S3, LIN, recovery (L3) and nothing left (L4). The errors the clients met (ASK,
 * MOVED, TRYAGAIN, timeouts) are counted from their histories.
 */
/** C3 (slot migration under load) on a Redis Cluster. */
final class ClusterMigrationScenarios {
    private ClusterMigrationScenarios() {}

    /** A master of the Cluster: its node id and port. */
    record Master(String id, int port) {}

    static CheckReport c3SlotMigration(RedisStores.Cluster store, long seed) throws InterruptedException {
        return Tier2StoreScenarios.underLoad(
                store,
                seed,
                "C3",
                "slot migration of the lock's keys under load",
                Timing.seconds(20),
                s -> {
                    String holdKey = s.prefix + "{" + s.key() + "}:hold";
                    String fenceKey = s.prefix + "{" + s.key() + "}:fence";
                    int any = store.cluster.ports().get(0);
                    int slot = Integer.parseInt(RedisServer.command(any, "CLUSTER", "KEYSLOT", holdKey));
                    if (slot != Integer.parseInt(RedisServer.command(any, "CLUSTER", "KEYSLOT", fenceKey))) {
                        throw new AssertionError("hold and fence keys in different slots");
                    }
                    List<Master> masters = masters(any);
                    Master home = ownerOf(any, slot, masters);
                    Master away = masters.stream()
                            .filter(m -> !m.equals(home))
                            .findFirst()
                            .orElseThrow();
                    s.note("slot " + slot + " of " + holdKey + " is on " + home.port() + "; masters " + masters);
                    migrate(s, slot, home, away, masters, Duration.ofMillis(500), true, fenceKey);
                    Timing.sleep(Duration.ofSeconds(3));
                    migrate(s, slot, away, home, masters, Duration.ofMillis(300), false, fenceKey);
                    Timing.sleep(Duration.ofSeconds(3));
                    migrate(s, slot, home, away, masters, Duration.ZERO, false, fenceKey);
                    Timing.sleep(Duration.ofSeconds(2));
                    migrate(s, slot, away, home, masters, Duration.ofMillis(200), true, fenceKey);
                    countErrors(s);
                },
                List.of(S1, S2, S3, L3, L4, LIN),
                List.of());
    }

    /** Moves {@code slot} from {@code from} to {@code to}, its keys one at a time ({@code oneByOne}) or together. */
    static void migrate(
            Scenario s,
            int slot,
            Master from,
            Master to,
            List<Master> masters,
            Duration window,
            boolean oneByOne,
            String fenceKey)
            throws InterruptedException {
        String target = "slot " + slot + " " + from.port() + "->" + to.port();
        Fault f = Fault.oneShot(
                "migrate",
                target,
                () -> {
                    ok(RedisServer.command(
                            to.port(), "CLUSTER", "SETSLOT", Integer.toString(slot), "IMPORTING", from.id()));
                    ok(RedisServer.command(
                            from.port(), "CLUSTER", "SETSLOT", Integer.toString(slot), "MIGRATING", to.id()));
                    Timing.sleep(window);
                    int moved = 0;
                    for (int round = 0; round < 1000; round++) {
                        String reply = RedisServer.command(
                                from.port(), "CLUSTER", "GETKEYSINSLOT", Integer.toString(slot), "100");
                        List<String> keys = reply.isEmpty() ? List.of() : Arrays.asList(reply.split("\n"));
                        if (keys.isEmpty()) {
                            break;
                        }
                        List<List<String>> batches =
                                oneByOne ? keys.stream().map(List::of).toList() : List.of(keys);
                        for (List<String> batch : batches) {
                            List<String> cmd = new ArrayList<>(
                                    List.of("MIGRATE", "127.0.0.1", Integer.toString(to.port()), "", "0", "5000"));
                            cmd.add("KEYS");
                            cmd.addAll(batch);
                            String r = RedisServer.command(from.port(), cmd.toArray(new String[0]));
                            if (!r.equals("OK") && !r.equals("NOKEY")) {
                                throw new IllegalStateException("MIGRATE " + batch + ": " + r);
                            }
                            moved += batch.size();
                            if (oneByOne) {
                                Timing.sleep(Duration.ofMillis(100));
                            }
                        }
                    }
                    // the target first, then the source (it stops answering ASK), then the others
                    ok(RedisServer.command(to.port(), "CLUSTER", "SETSLOT", Integer.toString(slot), "NODE", to.id()));
                    ok(RedisServer.command(from.port(), "CLUSTER", "SETSLOT", Integer.toString(slot), "NODE", to.id()));
                    for (Master m : masters) {
                        if (!m.equals(to) && !m.equals(from)) {
                            ok(RedisServer.command(
                                    m.port(), "CLUSTER", "SETSLOT", Integer.toString(slot), "NODE", to.id()));
                        }
                    }
                    s.note("moved " + moved + " keys of slot " + slot + (oneByOne ? " one at a time" : " together"));
                },
                s.faultLog());
        String left = RedisServer.command(from.port(), "CLUSTER", "COUNTKEYSINSLOT", Integer.toString(slot));
        String fenceThere = RedisServer.command(to.port(), "EXISTS", fenceKey);
        s.note("slot " + slot + " now on " + to.port() + ": keys left on " + from.port() + " " + left
                + ", fence counter on " + to.port() + " " + (fenceThere.equals("1") ? "yes" : "no") + " ("
                + f.name() + ")");
        if (!left.equals("0") || !fenceThere.equals("1")) {
            throw new AssertionError("the lock's keys did not move together: " + left + " left on " + from.port()
                    + ", fence on the target: " + fenceThere);
        }
    }

    private static void ok(String reply) {
        if (!reply.equals("OK")) {
            throw new IllegalStateException("CLUSTER SETSLOT: " + reply);
        }
    }

    /** The masters of the Cluster, as the node on {@code port} sees them. */
    static List<Master> masters(int port) {
        List<Master> out = new ArrayList<>();
        for (String line : RedisServer.command(port, "CLUSTER", "NODES").split("\n")) {
            String[] f = line.split(" ");
            if (f.length > 2 && f[2].contains("master")) {
                String addr = f[1].split("@")[0];
                out.add(new Master(f[0], Integer.parseInt(addr.substring(addr.lastIndexOf(':') + 1))));
            }
        }
        return out;
    }

    /** The master serving {@code slot}, as the node on {@code port} sees it. */
    static Master ownerOf(int port, int slot, List<Master> masters) {
        for (String line : RedisServer.command(port, "CLUSTER", "NODES").split("\n")) {
            String[] f = line.split(" ");
            if (f.length < 9 || !f[2].contains("master")) {
                continue;
            }
            for (int i = 8; i < f.length; i++) {
                if (f[i].startsWith("[")) {
                    continue;
                }
                String[] range = f[i].split("-");
                int lo = Integer.parseInt(range[0]);
                int hi = range.length > 1 ? Integer.parseInt(range[1]) : lo;
                if (slot >= lo && slot <= hi) {
                    return masters.stream()
                            .filter(m -> m.id().equals(f[0]))
                            .findFirst()
                            .orElseThrow();
                }
            }
        }
        throw new IllegalStateException("no master serves slot " + slot);
    }

    /** Counts the clients' failed calls by the error they met (ASK, MOVED, TRYAGAIN, timeout, other). */
    private static void countErrors(Scenario s) {
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (ClientEvent e : History.load(s.dir).client()) {
            if (e.type() != ClientEvent.Type.FAIL && e.type() != ClientEvent.Type.INFO || e.error() == null) {
                continue;
            }
            String m = e.error().toUpperCase(Locale.ROOT);
            String kind = m.contains("TRYAGAIN")
                    ? "TRYAGAIN"
                    : m.contains("MOVED")
                            ? "MOVED"
                            : m.contains("ASK") ? "ASK" : m.contains("TIMEOUT") ? "timeout" : "";
            if (!kind.isEmpty()) {
                counts.merge(e.f().name().toLowerCase(Locale.ROOT) + " " + kind, 1, Integer::sum);
            }
        }
        s.note("client calls that failed with a redirection or TRYAGAIN during the run: " + counts);
        s.measure("redirectionErrors", counts.toString());
    }
}
