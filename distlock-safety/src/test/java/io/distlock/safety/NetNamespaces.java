package io.distlock.safety;

import io.distlock.testkit.fault.Fault;
import io.distlock.testkit.fault.FaultLog;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * One network namespace per server (FAULTS.md mode B): namespace {@code dlk<tag>b} holds a bridge, each member
 * namespace {@code dlk<tag>m<i>} is joined to it by a veth pair and has the address {@code 198.18.<net>.<i + 1>}
 * (the benchmarking range, only ever on links inside these namespaces), and the root namespace is joined to the
 * bridge too (address {@code .254}), so this JVM's fault proxies reach every member. A member is cut off from all the
 * others, and from the clients, by setting its port on the bridge down: its packets are dropped without a FIN or a
 * reset, as in a real partition. Everything is deleted at {@link #close()} and, if the JVM ends first, by a shutdown
 * hook; the root end of the link goes with its namespace.
 */
final class NetNamespaces implements AutoCloseable {
    private final String tag;
    private final int net;
    private final int size;
    private final List<String> created = new ArrayList<>();
    private final Thread hook;
    private boolean closed;

    /** Skips the calling test (a JUnit assumption) unless this JVM runs as root and {@code ip netns} works. */
    static void assumeAvailable() {
        String user = System.getProperty("user.name");
        Assumptions.assumeTrue("root".equals(user), "partitions need network namespaces: run as root, not " + user);
        String probe =
                "dlkprobe" + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x10000));
        boolean ok = run(false, "ip", "netns", "add", probe) == 0;
        if (ok) {
            run(false, "ip", "netns", "delete", probe);
        }
        Assumptions.assumeTrue(ok, "partitions need `ip netns add`, which failed here");
    }

    NetNamespaces(int size) {
        this.size = size;
        this.tag = Integer.toHexString(0x1000 + ThreadLocalRandom.current().nextInt(0xE000));
        this.net = 1 + ThreadLocalRandom.current().nextInt(250);
        this.hook = new Thread(this::deleteAll, "netns-cleanup-" + tag);
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            String bridgeNs = namespace("b");
            must("ip", "netns", "add", bridgeNs);
            created.add(bridgeNs);
            must("ip", "-n", bridgeNs, "link", "add", "br0", "type", "bridge");
            must("ip", "-n", bridgeNs, "link", "set", "br0", "up");
            // the root namespace's leg: dlk<tag>r here, rt on the bridge
            String rootLeg = "dlk" + tag + "r";
            must("ip", "link", "add", rootLeg, "type", "veth", "peer", "name", "rt", "netns", bridgeNs);
            must("ip", "-n", bridgeNs, "link", "set", "rt", "master", "br0", "up");
            must("ip", "addr", "add", prefix() + "254/24", "dev", rootLeg);
            must("ip", "link", "set", rootLeg, "up");
            for (int i = 0; i < size; i++) {
                String ns = namespace("m" + i);
                must("ip", "netns", "add", ns);
                created.add(ns);
                must("ip", "-n", ns, "link", "set", "lo", "up");
                must("ip", "-n", ns, "link", "add", "eth0", "type", "veth", "peer", "name", "p" + i, "netns", bridgeNs);
                must("ip", "-n", bridgeNs, "link", "set", "p" + i, "master", "br0", "up");
                must("ip", "-n", ns, "addr", "add", address(i) + "/24", "dev", "eth0");
                must("ip", "-n", ns, "link", "set", "eth0", "up");
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    private String namespace(String what) {
        return "dlk" + tag + what;
    }

    private String prefix() {
        return "198.18." + net + ".";
    }

    int size() {
        return size;
    }

    /** The address of member {@code i} in its namespace. */
    String address(int i) {
        return prefix() + (i + 1);
    }

    /** {@code command} run inside member {@code i}'s namespace. */
    List<String> inside(int i, List<String> command) {
        List<String> all = new ArrayList<>(List.of("ip", "netns", "exec", namespace("m" + i)));
        all.addAll(command);
        return all;
    }

    /**
     * Cuts member {@code i} off from every other member and from every client for {@code duration} (its port on the
     * bridge goes down), then joins it again; logged to {@code log} as {@code partition}.
     */
    Fault isolate(int i, String name, Duration duration, FaultLog log) {
        String bridgeNs = namespace("b");
        return Fault.start(
                "partition",
                name,
                duration,
                () -> must("ip", "-n", bridgeNs, "link", "set", "p" + i, "down"),
                () -> must("ip", "-n", bridgeNs, "link", "set", "p" + i, "up"),
                log);
    }

    private static void must(String... command) {
        if (run(true, command) != 0) {
            throw new IllegalStateException("failed: " + String.join(" ", command));
        }
    }

    private static int run(boolean show, String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return -1;
            }
            if (p.exitValue() != 0 && show) {
                System.out.printf(Locale.ROOT, "NETNS %s: %s%n", String.join(" ", command), out.strip());
            }
            return p.exitValue();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    private synchronized void deleteAll() {
        if (closed) {
            return;
        }
        closed = true;
        // deleting a namespace deletes its veth ends and so their peers, the root leg included
        for (int i = created.size() - 1; i >= 0; i--) {
            run(true, "ip", "netns", "delete", created.get(i));
        }
        run(false, "ip", "link", "delete", "dlk" + tag + "r");
    }

    @Override
    public void close() {
        deleteAll();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            // the JVM is shutting down: the hook runs (or ran) deleteAll, which is idempotent
        }
    }
}
