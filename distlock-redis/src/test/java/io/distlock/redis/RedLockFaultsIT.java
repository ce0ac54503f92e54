package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockHold;
import io.distlock.testkit.Eventually;
import io.distlock.testkit.RecordingLockListener;
import io.distlock.testkit.Timing;
import io.distlock.testkit.fault.Fault;
import io.distlock.testkit.fault.FaultLog;
import io.distlock.testkit.fault.FaultProxy;
import io.distlock.testkit.server.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The RedLock scenarios L3r, L5r and L6r of the fault catalogue (FAULTS.md 4.3) on 5 redis-server processes, each
 * reached through a {@link FaultProxy}; the checks read the nodes directly.
 */
class RedLockFaultsIT {
    static final RedLockNodes nodes = new RedLockNodes(5);
    static final List<FaultProxy> proxies = new ArrayList<>();

    static {
        for (RedisServer s : nodes.servers) {
            proxies.add(FaultProxy.start("n" + proxies.size(), "127.0.0.1", s.port(), FaultLog.NONE));
        }
    }

    @AfterAll
    static void stop() {
        proxies.forEach(FaultProxy::close);
        nodes.close();
    }

    private static String[] proxyUris() {
        return proxies.stream().map(p -> "redis://" + p.address()).toArray(String[]::new);
    }

    private static RedLockClient client(Duration nodeTimeout) {
        return RedLockClient.builder()
                .nodes(proxyUris())
                .leaseTime(Duration.ofSeconds(3))
                .nodeTimeout(nodeTimeout)
                .build();
    }

    private static List<String> holders(String name) {
        List<String> out = new ArrayList<>();
        for (RedisServer s : nodes.servers) {
            out.add(nodes.holder(s, name));
        }
        return out;
    }

    private static String name() {
        return "redlock-faults-" + UUID.randomUUID();
    }

    /**
     * L3r, slow majority: 3 of 5 nodes answer after 9.95 s (4.975 s each way), within the node timeout and within the
     * 10 s lease, but past the lease less the clock-drift margin (102 ms). All 5 grant, but the validity is gone: the
     * client reports not acquired, and once it has answered no node keeps a hold for the name (each key was deleted
     * before it could expire: the fast nodes' at once, the slow nodes' 4.975 s after the round).
     */
    @Test
    @Timeout(90)
    void l3r_slowMajority_pastTheLeaseLessDrift_isNotAcquired_andLeavesNoKey() throws Exception {
        String name = name();
        Duration lease = Duration.ofSeconds(10);
        Duration delay = Duration.ofMillis(4975);
        try (RedLockClient client = client(Duration.ofSeconds(15))) {
            // every node runs the scripts once first: a node that does not know a script costs a second round trip
            client.lock(name + "-warm").tryAcquire(Duration.ZERO).orElseThrow().release();
            slowRound(client, name, lease, delay);
        }
    }

    private static void slowRound(RedLockClient client, String name, Duration lease, Duration delay)
            throws InterruptedException {
        try (Fault n2 = proxies.get(2).delay(delay, Duration.ZERO, Duration.ofMinutes(1));
                Fault n3 = proxies.get(3).delay(delay, Duration.ZERO, Duration.ofMinutes(1));
                Fault n4 = proxies.get(4).delay(delay, Duration.ZERO, Duration.ofMinutes(1))) {
            Optional<LockHold> hold = client.lock(name).tryAcquire(Duration.ZERO, lease);
            assertThat(hold)
                    .as("acquired although the round outlasted the lease less the drift")
                    .isEmpty();
            assertThat(holders(name)).as("hold keys left on the nodes").containsOnly((String) null);
        }
    }

    /**
     * L5r, partial unlock: the replies to the release are dropped by 2 of the 5 nodes (which still run it). The
     * release succeeds (3 nodes confirmed it), another client acquires at once, and no node keeps the first owner's
     * hold beyond its expiry.
     */
    @Test
    @Timeout(60)
    void l5r_unlockRepliesDroppedFromTwoNodes_releaseSucceeds_nodesFree_nextAcquireNotBlocked() throws Exception {
        String name = name();
        try (RedLockClient a = client(Duration.ofSeconds(1));
                RedLockClient b = client(Duration.ofSeconds(1))) {
            var lock = a.lock(name);
            RecordingLockListener listener = new RecordingLockListener();
            lock.addListener(listener);
            LockHold hold = lock.tryAcquire(Timing.seconds(5)).orElseThrow(); // renewed by the watchdog
            String owner = Objects.requireNonNull(nodes.holder(nodes.servers.get(0), name), "hold key on n0");
            assertThat(holders(name)).containsOnly(owner);
            try (Fault n3 = proxies.get(3).dropReplies(Duration.ofMinutes(1));
                    Fault n4 = proxies.get(4).dropReplies(Duration.ofMinutes(1))) {
                hold.release();
                assertThat(listener.lost()).as("told lost").isEmpty();
                assertThat(listener.released()).containsExactly(hold.fencingToken());
            }
            assertThat(proxies.get(3).droppedReplies() + proxies.get(4).droppedReplies())
                    .as("replies dropped")
                    .isGreaterThanOrEqualTo(2);
            LockHold next = b.lock(name)
                    .tryAcquire(Duration.ZERO, Duration.ofSeconds(5))
                    .orElseThrow(() -> new AssertionError("the next acquisition is blocked"));
            Duration expiry = Duration.ofMillis(3000 + 3000 / 100 + 2);
            Eventually.within(
                    Timing.scaled(expiry.plusSeconds(2)),
                    "no node keeps the first owner's hold after its expiry",
                    () -> !holders(name).contains(owner));
            next.release();
        }
        assertThat(holders(name)).containsOnly((String) null);
    }

    /** L6r: one node listed 3 times, by the same address or under three names, is refused, naming the argument. */
    @Test
    @Timeout(60)
    void l6r_sameNodeListedThreeTimes_isRefused() {
        String n0 = nodes.servers.get(0).uri();
        String n1 = nodes.servers.get(1).uri();
        String n2 = nodes.servers.get(2).uri();
        assertThatThrownBy(() -> RedLockClient.builder().nodes(n0, n1, n0, n2, n0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("uris")
                .hasMessageContaining(":" + nodes.servers.get(0).port() + " (3 times)");

        try (FaultProxy second = FaultProxy.start(nodes.servers.get(0).port());
                FaultProxy third = FaultProxy.start(nodes.servers.get(0).port())) {
            String[] sameServer = {
                "redis://" + proxies.get(0).address(),
                n1,
                "redis://" + second.address(),
                n2,
                "redis://" + third.address()
            };
            assertThatThrownBy(() -> RedLockClient.builder()
                            .nodes(sameServer)
                            .nodeTimeout(Duration.ofSeconds(1))
                            .build())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("uris")
                    .hasMessageContaining("3 times")
                    .hasMessageContaining(proxies.get(0).address())
                    .hasMessageContaining(second.address())
                    .hasMessageContaining(third.address());
        }
    }
}
