package io.distlock.bench;

import java.io.FileNotFoundException;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The benchmark entry point: {@code java -jar distlock-bench.jar <redis|jdbc|zookeeper|etcd|etcd-sync|etcd-sync-ref|all|quick|redis-keys|redis-clients|redis-uncontended|redis-floor|redis-names|redis-ratios|redis-async|zookeeper-clients|zookeeper-sync|jdbc-sync|redis-sync|redis-sync-ref|multilock|engine> [options]}.
 *
 * <pre>
 * --seconds N          measured seconds per phase (default 5; quick: 2)
 * --redis URI          default redis://127.0.0.1:6379
 * --mariadb JDBC-URL   default jdbc:mariadb://127.0.0.1:3306/test (user root, empty password)
 * --postgres JDBC-URL  default jdbc:postgresql://127.0.0.1:5432/test (user postgres)
 * --zookeeper HOST:PORT  default 127.0.0.1:2181 when it answers, else an in-process TestingServer
 * --etcd URL           default http://127.0.0.1:2379
 * --csv FILE           also write every phase row and target line to FILE as CSV (for scripts/plots.py)
 * </pre>
 */
public final class BenchMain {
    private BenchMain() {}

    /** Runs the selected benchmarks and prints a Markdown report on standard output. */
    public static void main(String[] args) {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", System.getProperty("bench.log", "warn"));
        // the MariaDB driver logs every duplicate-key answer (normal lock contention) as a warning
        System.setProperty("org.slf4j.simpleLogger.log.org.mariadb.jdbc", "error");
        if (args.length == 0 || args[0].equals("-h") || args[0].equals("--help")) {
            usage(System.out);
            return;
        }
        String what = args[0];
        Map<String, String> opts = new HashMap<>();
        for (int i = 1; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                usage(System.err);
                throw new IllegalArgumentException("bad argument: " + args[i]);
            }
            opts.put(args[i].substring(2), args[++i]);
        }
        boolean quick = what.equals("quick");
        Duration phase =
                Duration.ofMillis((long) (Double.parseDouble(opts.getOrDefault("seconds", quick ? "2" : "5")) * 1000));
        String redis = opts.getOrDefault("redis", "redis://127.0.0.1:6379");
        String mariadb = opts.getOrDefault("mariadb", "jdbc:mariadb://127.0.0.1:3306/test");
        String postgres = opts.getOrDefault("postgres", "jdbc:postgresql://127.0.0.1:5432/test");
        String zookeeper = opts.getOrDefault("zookeeper", "");
        String etcd = opts.getOrDefault("etcd", "http://127.0.0.1:2379");
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        String csv = opts.get("csv");
        if (csv != null) {
            try {
                Report.csvTo(new PrintStream(new FileOutputStream(csv), true, StandardCharsets.UTF_8));
            } catch (FileNotFoundException e) {
                throw new UncheckedIOException("--csv " + csv, e);
            }
        }
        List<String> parts = new ArrayList<>();
        switch (what) {
            case "all" -> parts.addAll(List.of("redis", "jdbc", "zookeeper", "etcd"));
            case "redis",
                    "jdbc",
                    "zookeeper",
                    "etcd",
                    "etcd-sync",
                    "etcd-sync-ref",
                    "quick",
                    "redis-keys",
                    "redis-clients",
                    "redis-uncontended",
                    "redis-floor",
                    "redis-names",
                    "redis-ratios",
                    "redis-async",
                    "zookeeper-sync",
                    "zookeeper-clients",
                    "engine",
                    "jdbc-sync",
                    "redis-sync",
                    "redis-sync-ref",
                    "multilock" -> parts.add(what);
            default -> {
                usage(System.err);
                throw new IllegalArgumentException("unknown benchmark: " + what);
            }
        }
        out.println(
                "# distlock benchmark: " + String.join(", ", parts) + " (" + phase.toMillis() / 1000.0 + " s phases)");
        for (String part : parts) {
            long start = System.nanoTime();
            switch (part) {
                case "quick" -> RedisBench.quick(redis, phase, out);
                case "redis" -> RedisBench.run(redis, phase, out);
                case "redis-keys" -> RedisBench.keys(redis, phase, out);
                case "redis-clients" -> RedisBench.clients(redis, phase, out);
                case "redis-uncontended" -> RedisBench.uncontended(redis, phase, out);
                case "redis-floor" -> RedisBench.floorWithBusyCore(redis, phase, out);
                case "redis-names" -> RedisBench.names(redis, phase, out);
                case "redis-ratios" -> RedisBench.ratios(redis, phase, out);
                case "redis-async" -> AsyncBench.run(redis, phase, out);
                case "redis-sync" -> runSync(redis, phase, out);
                case "redis-sync-ref" -> runSyncRef(redis, phase, out);
                case "engine" -> EngineBench.run(redis, phase, out);
                case "multilock" -> MultiLockBench.run(phase, out);
                case "jdbc" -> JdbcBench.run(mariadb, postgres, phase, out);
                case "jdbc-sync" -> JdbcSyncBench.run(mariadb, postgres, phase, out);
                case "zookeeper" -> ZooKeeperBench.run(zookeeper, phase, out);
                case "zookeeper-sync" -> ZooKeeperSyncBench.run(zookeeper, phase, out);
                case "zookeeper-clients" -> ZooKeeperBench.clients(zookeeper, phase, out);
                case "etcd" -> EtcdBench.run(etcd, phase, out);
                case "etcd-sync" -> EtcdSyncBench.run(etcd, phase, out);
                case "etcd-sync-ref" -> EtcdSyncBench.clients(etcd, phase, out);
                default -> throw new AssertionError(part);
            }
            out.printf("%n_%s took %.0f s_%n", part, (System.nanoTime() - start) / 1e9);
        }
        System.exit(0); // peer clients leave non-daemon threads behind
    }

    private static void runSync(String redis, Duration phase, PrintStream out) {
        try {
            RedisSyncBench.run(redis, phase, out);
        } catch (Exception e) {
            throw new IllegalStateException("redis-sync benchmark failed", e);
        }
    }

    private static void runSyncRef(String redis, Duration phase, PrintStream out) {
        try {
            RedisSyncRefBench.run(redis, phase, out);
        } catch (Exception e) {
            throw new IllegalStateException("redis-sync-ref benchmark failed", e);
        }
    }

    private static void usage(PrintStream out) {
        out.println(
                "usage: java -jar distlock-bench.jar <redis|jdbc|zookeeper|etcd|etcd-sync|etcd-sync-ref|all|quick|redis-keys|redis-clients|redis-uncontended|redis-floor|redis-names|redis-ratios|redis-async|zookeeper-clients|zookeeper-sync|jdbc-sync|redis-sync|redis-sync-ref|multilock|engine> [--seconds N]"
                        + " [--redis URI] [--mariadb JDBC-URL] [--postgres JDBC-URL] [--zookeeper HOST:PORT] [--etcd URL] [--csv FILE]");
    }
}
