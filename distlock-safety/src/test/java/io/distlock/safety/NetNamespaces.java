package io.distlock.safety;

import io.distlock.testkit.fault.Fault;
import io.distlock.testkit.fault.FaultLog;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;

/**
 * One network namespace per server (FAULTS.md mode B): namespace {@code dlk<tag>b} holds a bridge, each member
 * namespace {@code dlk<tag>m<i>} is joined to it by a veth pair and has the address {@code 198.18.<net>.<i + 1>}
 * (the benchmarking range, only ever on links inside these namespaces), and the root namespace is joined to the
 * bridge too (address {@code .254}), so this JVM's fault proxies reach every member. A member is cut off from all the
 * others, and from the clients, by setting its port on the bridge down: its packets are dropped without a FIN or a
 * reset, as in a real partition. Finer cuts drop IPv4 packets with queue disciplines ({@code tc}): one direction of a
 * member's traffic ({@link #cutOneWay}), or every packet between two groups of members while the root namespace
 * still reaches both ({@link #split}). Everything is deleted at {@link #close()} and, if the JVM ends first, by a
 * shutdown hook; the root end of the link, and every queue discipline, goes with its namespace.
 */
final class NetNamespaces implements AutoCloseable {
    private final String tag;
    private final int net;
    private final int size;
    private final List<String> created = new ArrayList<>();
    private final Thread hook;
    private boolean closed;
    private volatile long lastDropped = -1;

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

    /** Which of a member's packets a one-way cut drops. */
    enum Way {
        /** The packets sent to the member: it can send but not receive. */
        IN,
        /** The packets the member sends: it can receive but not send. */
        OUT
    }

    /**
     * Cuts one direction of member {@code i}'s traffic with every other member and every client for {@code
     * duration}, then restores it; logged to {@code log} as {@code partition-in} or {@code partition-out}. Every IPv4
     * packet going that way is dropped silently (no reset, no ICMP); ARP still passes, so the other direction keeps
     * working for the whole cut. {@link Way#IN} drops on the member's bridge port, {@link Way#OUT} on the member's own
     * end of its link. The drop is a queue discipline on that device, which goes with the namespace at {@link
     * #close()} or in the shutdown hook.
     */
    Fault cutOneWay(int i, Way way, String name, Duration duration, FaultLog log) {
        String ns = way == Way.IN ? namespace("b") : namespace("m" + i);
        String dev = way == Way.IN ? "p" + i : "eth0";
        return Fault.start(
                way == Way.IN ? "partition-in" : "partition-out",
                name,
                duration,
                () -> dropIp(ns, dev, List.of(List.of("match", "u32", "0", "0"))),
                () -> {
                    lastDropped = dropped(ns, dev);
                    must("tc", "-n", ns, "qdisc", "del", "dev", dev, "root");
                },
                log);
    }

    /**
     * Splits the members in two for {@code duration}: no IPv4 packet passes between a member of {@code side} and one
     * that is not, either way, while each side works within itself and the root namespace still reaches everyone (the
     * test's own connections, the fenced resource); then joins them again. Logged to {@code log} as {@code
     * partition}. The drops are queue disciplines on the bridge ports, matching the sources of the other side.
     */
    Fault split(Set<Integer> side, String name, Duration duration, FaultLog log) {
        return dropBetween((j, k) -> side.contains(j) != side.contains(k), name, duration, log);
    }

    /**
     * Cuts the one link between members {@code a} and {@code b} for {@code duration}: no IPv4 packet passes between
     * them, either way, while each still reaches every other member and the root namespace (a one-link partition, as
     * {@link #split}); logged to {@code log} as {@code partition}.
     */
    Fault cutLink(int a, int b, String name, Duration duration, FaultLog log) {
        if (a == b || a < 0 || b < 0 || a >= size || b >= size) {
            throw new IllegalArgumentException("a link needs two members of 0.." + (size - 1) + ": " + a + ", " + b);
        }
        return dropBetween((j, k) -> (j == a && k == b) || (j == b && k == a), name, duration, log);
    }

    /** Drops, on member {@code j}'s bridge port, every IPv4 packet from a member {@code k} with {@code cut(j, k)}. */
    private Fault dropBetween(
            java.util.function.BiPredicate<Integer, Integer> cut, String name, Duration duration, FaultLog log) {
        String bridgeNs = namespace("b");
        List<Integer> ports = new ArrayList<>();
        return Fault.start(
                "partition",
                name,
                duration,
                () -> {
                    for (int j = 0; j < size; j++) {
                        List<List<String>> from = new ArrayList<>();
                        for (int k = 0; k < size; k++) {
                            if (j != k && cut.test(j, k)) {
                                from.add(List.of("match", "ip", "src", address(k) + "/32"));
                            }
                        }
                        if (from.isEmpty()) {
                            continue;
                        }
                        try {
                            dropIp(bridgeNs, "p" + j, from);
                            ports.add(j);
                        } catch (RuntimeException e) {
                            for (int k : ports) {
                                run(true, "tc", "-n", bridgeNs, "qdisc", "del", "dev", "p" + k, "root");
                            }
                            throw e;
                        }
                    }
                },
                () -> {
                    boolean ok = true;
                    long drops = 0;
                    for (int j : ports) {
                        drops += Math.max(0, dropped(bridgeNs, "p" + j));
                        ok &= run(true, "tc", "-n", bridgeNs, "qdisc", "del", "dev", "p" + j, "root") == 0;
                    }
                    lastDropped = drops;
                    if (!ok) {
                        throw new IllegalStateException("could not remove every drop of " + name);
                    }
                },
                log);
    }

    /**
     * How many packets the last {@link #cutOneWay}, {@link #split} or {@link #cutLink} dropped, read as it healed (-1 if unknown): the
     * evidence that the cut was in force.
     */
    long lastDropped() {
        return lastDropped;
    }

    /** The packets the dropping FIFO on {@code dev} in {@code ns} has dropped so far, or -1. */
    private static long dropped(String ns, String dev) {
        try {
            Process p = new ProcessBuilder("tc", "-n", ns, "-s", "qdisc", "show", "dev", dev)
                    .redirectErrorStream(true)
                    .start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                return -1;
            }
            Matcher m = DROPPED.matcher(out);
            return m.find() ? Long.parseLong(m.group(1)) : -1;
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** The drop count of the FIFO behind class 1:20 in {@code tc -s qdisc show}. */
    private static final Pattern DROPPED =
            Pattern.compile("qdisc pfifo 20: [^\\n]*\\n\\s*Sent \\d+ bytes \\d+ pkt \\(dropped (\\d+)");

    /** The root namespace's address on the bridge: where members reach services of the test JVM. */
    String rootAddress() {
        return prefix() + "254";
    }

    /**
     * Drops the IPv4 packets leaving {@code dev} in {@code ns} that match one of {@code matches} (u32 selectors): an
     * HTB root whose default class passes everything, and a class behind a FIFO of length 0, where the filters send
     * what is to be dropped (this kernel has neither netem nor the drop action, but a FIFO that holds nothing drops
     * every packet it is given). Nothing is left on the device if a step fails.
     */
    private static void dropIp(String ns, String dev, List<List<String>> matches) {
        try {
            must("tc", "-n", ns, "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "10");
            must(
                    "tc", "-n", ns, "class", "add", "dev", dev, "parent", "1:", "classid", "1:10", "htb", "rate",
                    "10gbit");
            must(
                    "tc", "-n", ns, "class", "add", "dev", dev, "parent", "1:", "classid", "1:20", "htb", "rate",
                    "10gbit");
            must("tc", "-n", ns, "qdisc", "add", "dev", dev, "parent", "1:20", "handle", "20:", "pfifo", "limit", "0");
            for (List<String> m : matches) {
                List<String> filter = new ArrayList<>(List.of(
                        "tc",
                        "-n",
                        ns,
                        "filter",
                        "add",
                        "dev",
                        dev,
                        "parent",
                        "1:",
                        "protocol",
                        "ip",
                        "prio",
                        "1",
                        "u32"));
                filter.addAll(m);
                filter.addAll(List.of("flowid", "1:20"));
                must(filter.toArray(new String[0]));
            }
        } catch (RuntimeException e) {
            run(false, "tc", "-n", ns, "qdisc", "del", "dev", dev, "root");
            throw e;
        }
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
