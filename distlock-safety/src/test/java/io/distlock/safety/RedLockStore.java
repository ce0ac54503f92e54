package io.distlock.safety;

import io.distlock.testkit.server.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;

/**
 * RedLock on five independent {@code redis-server} processes on free loopback ports, without persistence unless
 * asked for: clients
 * ({@code RedLockClient}, 2 s watchdog lease, 500 ms node timeout) reach each node through a fault proxy of their
 * own, so a client can be cut off from some nodes only.
 */
final class RedLockStore extends Store {
    static final Duration LEASE = Duration.ofSeconds(2);
    static final Duration NODE_TIMEOUT = Duration.ofMillis(500);
    final List<RedisServer> nodes = new ArrayList<>();

    RedLockStore(int count) {
        this(count, new String[0]);
    }

    /** {@code count} nodes started with {@code serverArgs} (e.g. persistence: a restart keeps the data then). */
    RedLockStore(int count, String... serverArgs) {
        try {
            for (int i = 0; i < count; i++) {
                nodes.add(RedisServer.started(serverArgs));
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    @Override
    String name() {
        return "redlock";
    }

    @Override
    List<Integer> ports() {
        return nodes.stream().map(RedisServer::port).toList();
    }

    @Override
    String spec(String clientId, String prefix, List<Integer> ports) {
        StringJoiner uris = new StringJoiner(",");
        ports.forEach(p -> uris.add("redis://127.0.0.1:" + p));
        return Clients.spec(
                "kind",
                "redlock",
                "uri",
                uris.toString(),
                "prefix",
                prefix,
                "lease",
                Long.toString(LEASE.toMillis()),
                "timeout",
                Long.toString(NODE_TIMEOUT.toMillis()),
                "id",
                clientId);
    }

    @Override
    String prefix(String scenarioId) {
        return scenarioId + ":";
    }

    /** The keys live on the nodes for the lease plus the drift margin (1% + 2 ms). */
    @Override
    Duration expiry() {
        return LEASE.plusMillis(LEASE.toMillis() / 100 + 2);
    }

    @Override
    Duration renewInterval() {
        return LEASE.dividedBy(3);
    }

    @Override
    Leftovers leftovers(String prefix) {
        List<String> left = new ArrayList<>();
        for (int i = 0; i < nodes.size(); i++) {
            RedisServer n = nodes.get(i);
            if (n.isRunning()) {
                for (String k : RedisStores.keys(n.port(), prefix)) {
                    left.add("n" + i + ":" + k);
                }
            }
        }
        return new Leftovers(left.size(), String.join(", ", left));
    }

    @Override
    public void close() {
        nodes.forEach(RedisServer::close);
    }
}
