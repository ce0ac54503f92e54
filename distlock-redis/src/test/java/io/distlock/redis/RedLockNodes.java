package io.distlock.redis;

import io.distlock.testkit.server.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Five redis-server processes on free loopback ports for RedLock tests, with behind-the-back helpers. */
final class RedLockNodes implements AutoCloseable {
    static final KeyLayout layout = new KeyLayout("distlock:redlock:");
    final List<RedisServer> servers = new ArrayList<>();

    RedLockNodes(int count) {
        for (int i = 0; i < count; i++) {
            servers.add(RedisServer.started());
        }
    }

    String[] uris() {
        return servers.stream().map(RedisServer::uri).toArray(String[]::new);
    }

    RedLockClient client(Duration watchdogLease) {
        // generous: the machine running the tests is shared, and a late answer counts as a missing vote
        return RedLockClient.builder()
                .nodes(uris())
                .leaseTime(watchdogLease)
                .nodeTimeout(Duration.ofSeconds(2))
                .build();
    }

    /** Deletes the hold key of {@code name} on every running node (the fence counters stay). */
    void expireHold(String name) {
        for (RedisServer s : servers) {
            if (s.isRunning()) {
                onNode(s, c -> RedisKeys.expireHold(c.sync(), layout, name));
            }
        }
    }

    /** Every key of {@code name} on every running node except the fence counters. */
    List<String> residue(String name) {
        List<String> all = new ArrayList<>();
        for (RedisServer s : servers) {
            if (s.isRunning()) {
                onNode(s, c -> all.addAll(RedisKeys.residue(c.sync(), layout, name)));
            }
        }
        return all;
    }

    /** The owner id in the hold key of {@code name} on one node, or null. */
    String holder(RedisServer s, String name) {
        String[] out = new String[1];
        onNode(s, c -> out[0] = c.sync().get(RedisKeys.holdKey(layout, name)));
        return out[0];
    }

    /** Deletes the hold key of {@code name} on the given nodes only. */
    void deleteHold(String name, int... which) {
        for (int i : which) {
            onNode(servers.get(i), c -> c.sync().del(RedisKeys.holdKey(layout, name)));
        }
    }

    /** The fence counter of {@code name} on one node, 0 when it has none. */
    long fence(RedisServer s, String name) {
        String[] out = new String[1];
        onNode(s, c -> out[0] = c.sync().get(KeyLayout.key(layout.tag(name), KeyLayout.FENCE)));
        return out[0] == null ? 0 : Long.parseLong(out[0]);
    }

    static void onNode(RedisServer s, java.util.function.Consumer<StatefulRedisConnection<String, String>> op) {
        RedisClient lettuce = RedisClient.create(s.uri());
        try (StatefulRedisConnection<String, String> c = lettuce.connect()) {
            op.accept(c);
        } finally {
            lettuce.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    @Override
    public void close() {
        for (RedisServer s : servers) {
            s.close();
        }
    }
}
