package io.distlock.bench;

import io.distlock.DistributedLock;
import io.distlock.MultiLock;
import io.distlock.redis.RedLockClient;
import io.distlock.redis.RedisLockClient;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.Lock;
import org.redisson.Redisson;
import org.redisson.RedissonMultiLock;
import org.redisson.RedissonRedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Issue 24's rows: an 8-name multi-lock on one Redis client against Redisson's {@code RedissonMultiLock} over the same
 * names, and RedLock over 5 nodes against Redisson's {@code RedissonRedLock}; uncontended, one thread, lock() then
 * unlock() per op. Each round runs distlock then Redisson for one phase each; the report gives every round's ratio
 * and the median of 3 rounds, and the server commands per op (from {@code INFO commandstats}, which counts the commands run inside scripts too). The redis-server
 * processes are started here on free loopback ports, so no shared store is touched.
 */
final class MultiLockBench {
    private static final int NAMES = 8;
    private static final int ROUNDS = 3;

    private MultiLockBench() {}

    static void run(Duration phase, PrintStream out) {
        List<Server> servers = new ArrayList<>();
        try {
            for (int i = 0; i < 6; i++) {
                servers.add(Server.start());
            }
            Server single = servers.get(0);
            List<Server> five = servers.subList(1, 6);
            String run = Long.toString(System.nanoTime(), 36);
            out.println();
            out.println("## Multi-lock and RedLock (issue 24), uncontended, one thread, lock()+unlock() per op");
            out.println();
            multi(single, run, phase, out);
            redLock(five, run, phase, out);
        } finally {
            servers.forEach(Server::close);
        }
    }

    private static void multi(Server server, String run, Duration phase, PrintStream out) {
        try (RedisLockClient client = RedisLockClient.create(server.uri())) {
            RedissonClient redisson = Redisson.create(config(server.uri()));
            try {
                List<DistributedLock> ours = new ArrayList<>();
                List<RLock> theirs = new ArrayList<>();
                for (int i = 0; i < NAMES; i++) {
                    ours.add(client.lock("ml:" + run + ":" + i));
                    theirs.add(redisson.getLock("ml:" + run + ":r:" + i));
                }
                Lock distlock = MultiLock.of(ours);
                Lock peer = new RedissonMultiLock(theirs.toArray(new RLock[0]));
                compare(
                        "8-name multi-lock, one Redis client: distlock MultiLock ÷ RedissonMultiLock",
                        distlock,
                        peer,
                        List.of(server),
                        phase,
                        out);
            } finally {
                redisson.shutdown();
            }
        }
    }

    @SuppressWarnings("deprecation") // RedissonRedLock is deprecated by Redisson; it is the peer the issue names
    private static void redLock(List<Server> five, String run, Duration phase, PrintStream out) {
        String[] uris = five.stream().map(Server::uri).toArray(String[]::new);
        // a 2 s node timeout: on a loaded machine the 200 ms default counts late answers as missing votes
        try (RedLockClient client = RedLockClient.builder()
                .nodes(uris)
                .nodeTimeout(Duration.ofSeconds(2))
                .build()) {
            List<RedissonClient> redissons = new ArrayList<>();
            try {
                List<RLock> theirs = new ArrayList<>();
                for (String u : uris) {
                    RedissonClient r = Redisson.create(config(u));
                    redissons.add(r);
                    theirs.add(r.getLock("rl:" + run + ":r"));
                }
                Lock distlock = client.lock("rl:" + run);
                Lock peer = new RedissonRedLock(theirs.toArray(new RLock[0]));
                compare(
                        "RedLock over 5 nodes: distlock RedLockClient ÷ RedissonRedLock",
                        distlock,
                        peer,
                        five,
                        phase,
                        out);
            } finally {
                redissons.forEach(RedissonClient::shutdown);
            }
        }
    }

    private static Config config(String uri) {
        Config c = new Config();
        c.useSingleServer().setAddress(uri);
        return c;
    }

    private static void compare(
            String title, Lock distlock, Lock peer, List<Server> servers, Duration phase, PrintStream out) {
        cycle(distlock, Duration.ofSeconds(1)); // warm-up
        cycle(peer, Duration.ofSeconds(1));
        double[] ours = new double[ROUNDS];
        double[] theirs = new double[ROUNDS];
        double[] ratios = new double[ROUNDS];
        double oursCommands = 0;
        double theirsCommands = 0;
        for (int r = 0; r < ROUNDS; r++) {
            long before = commands(servers);
            long[] o = cycle(distlock, phase);
            long middle = commands(servers);
            long[] t = cycle(peer, phase);
            long after = commands(servers);
            ours[r] = o[0] * 1e9 / o[1];
            theirs[r] = t[0] * 1e9 / t[1];
            ratios[r] = ours[r] / theirs[r];
            oursCommands = (middle - before) / (double) o[0];
            theirsCommands = (after - middle) / (double) t[0];
        }
        out.println("### " + title);
        out.println();
        out.println("| round | distlock ops/s | Redisson ops/s | ratio |");
        out.println("| --- | --- | --- | --- |");
        for (int r = 0; r < ROUNDS; r++) {
            out.printf("| %d | %.0f | %.0f | %.2f× |%n", r + 1, ours[r], theirs[r], ratios[r]);
        }
        out.printf("| median | %.0f | %.0f | **%.2f×** |%n", median(ours), median(theirs), median(ratios));
        out.println();
        out.printf(
                "Server commands per lock()+unlock(), scripts' inner commands included (last round, summed over the nodes,"
                        + " INFO commandstats): distlock"
                        + " %.1f, Redisson %.1f%n%n",
                oursCommands, theirsCommands);
    }

    /** lock()+unlock() for {@code phase}: {ops, nanos}. */
    private static long[] cycle(Lock lock, Duration phase) {
        long start = System.nanoTime();
        long end = start + phase.toNanos();
        long ops = 0;
        long now;
        do {
            lock.lock();
            lock.unlock();
            ops++;
            now = System.nanoTime();
        } while (now - end < 0);
        return new long[] {ops, now - start};
    }

    private static double median(double[] values) {
        double[] v = values.clone();
        Arrays.sort(v);
        return v[v.length / 2];
    }

    private static long commands(List<Server> servers) {
        long total = 0;
        for (Server s : servers) {
            for (String line : s.cli("INFO", "commandstats").split("\n")) {
                int at = line.indexOf("calls=");
                if (line.startsWith("cmdstat_") && !line.startsWith("cmdstat_info") && at >= 0) {
                    int end = line.indexOf(',', at);
                    total += Long.parseLong(line.substring(at + 6, end));
                }
            }
        }
        return total;
    }

    /** A redis-server process on a free loopback port, without persistence. */
    private record Server(Process process, int port, Path dir) implements AutoCloseable {
        static Server start() {
            try {
                int port;
                try (ServerSocket s = new ServerSocket(0)) {
                    port = s.getLocalPort();
                }
                Path dir = Files.createTempDirectory("distlock-bench-redis-");
                Process p = new ProcessBuilder(
                                "redis-server",
                                "--port",
                                Integer.toString(port),
                                "--bind",
                                "127.0.0.1",
                                "--save",
                                "",
                                "--appendonly",
                                "no",
                                "--dir",
                                dir.toString(),
                                "--logfile",
                                dir.resolve("redis.log").toString())
                        .redirectErrorStream(true)
                        .start();
                Server server = new Server(p, port, dir);
                long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
                while (!server.cli("PING").contains("PONG")) {
                    if (System.nanoTime() - deadline > 0) {
                        throw new IllegalStateException("redis-server on port " + port + " did not start");
                    }
                    Thread.sleep(50);
                }
                return server;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }

        String uri() {
            return "redis://127.0.0.1:" + port;
        }

        String cli(String... args) {
            List<String> cmd = new ArrayList<>(List.of("redis-cli", "-p", Integer.toString(port)));
            cmd.addAll(List.of(args));
            try {
                Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
                String text = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
                p.waitFor();
                return text;
            } catch (IOException e) {
                return "";
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "";
            }
        }

        @Override
        public void close() {
            process.destroy();
        }
    }
}
