package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedLock;
import io.distlock.LockHold;
import io.distlock.testkit.Eventually;
import io.distlock.testkit.RecordingLockListener;
import io.distlock.testkit.Timing;
import io.distlock.testkit.fault.Fault;
import io.distlock.testkit.fault.FaultLog;
import io.distlock.testkit.fault.FaultProxy;
import io.distlock.testkit.server.RedisServer;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A RedLock renewal sets the hold on the nodes that miss it: a hold granted by a bare majority (3 of 5, the other 2
 * cut off by their proxies during the acquire) is on all 5 nodes after a renewal, and then outlives a cut of 2 of the
 * 3 nodes that granted it. The client reaches each node through a {@link FaultProxy}; the checks read the nodes
 * directly.
 */
class RedLockJoinIT {
    private static final Duration LEASE = Duration.ofSeconds(3);

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

    private static RedLockClient client() {
        return RedLockClient.builder()
                .nodes(proxies.stream().map(p -> "redis://" + p.address()).toArray(String[]::new))
                .leaseTime(LEASE)
                .nodeTimeout(Duration.ofSeconds(1))
                .build();
    }

    private static List<String> holders(String name, int... which) {
        List<String> out = new ArrayList<>();
        for (int i : which) {
            out.add(nodes.holder(nodes.servers.get(i), name));
        }
        return out;
    }

    private static Fault cut(int node) {
        return proxies.get(node).reset(Duration.ofMinutes(1)); // healed by close() below, well before
    }

    @Test
    @Timeout(60)
    void bareMajorityHold_isSetOnTheOtherNodesByARenewal_andSurvivesACutOfTwoOfItsNodes() throws Exception {
        String name = "redlock-join-" + UUID.randomUUID();
        try (RedLockClient client = client()) {
            DistributedLock lock = client.lock(name);
            RecordingLockListener listener = new RecordingLockListener();
            lock.addListener(listener);

            LockHold hold;
            String owner;
            try (Fault n3 = cut(3);
                    Fault n4 = cut(4)) {
                hold = lock.tryAcquire(Timing.seconds(5)).orElseThrow();
                owner = Objects.requireNonNull(nodes.holder(nodes.servers.get(0), name), "hold key on n0");
                assertThat(holders(name, 0, 1, 2)).as("granted by n0-n2").containsOnly(owner);
                assertThat(holders(name, 3, 4))
                        .as("n3 and n4 cut off during the grant")
                        .containsOnly((String) null);
            }

            Eventually.within(
                    Timing.seconds(15),
                    "a renewal sets the hold on n3 and n4, with the owner's id",
                    () -> holders(name, 0, 1, 2, 3, 4).stream().allMatch(owner::equals));
            for (int i : new int[] {3, 4}) {
                assertThat(nodes.fence(nodes.servers.get(i), name))
                        .as("fence counter of n%d, which joined the hold", i)
                        .isGreaterThanOrEqualTo(hold.fencingToken());
            }

            try (Fault n0 = cut(0);
                    Fault n1 = cut(1)) {
                // the last renewal before the cut confirmed the hold for one lease: still valid two leases later means
                // a renewal after the cut, reaching only n2-n4, confirmed it
                Timing.sleep(LEASE.multipliedBy(2));
                assertThat(listener.lost()).as("told lost").isEmpty();
                assertThat(hold.isValid()).isTrue();
                assertThat(holders(name, 2, 3, 4)).containsOnly(owner);
                hold.release();
            }
        }
        Eventually.within(Timing.seconds(10), "no key left once the cut nodes' keys expire", () -> nodes.residue(name)
                .isEmpty());
    }

    /**
     * A hold that fewer than a majority confirm is gone: its renewal deletes the minority's keys and sets it on no
     * node, though the other nodes answer that they miss it.
     */
    @Test
    @Timeout(60)
    void holdConfirmedByAMinority_isToldLost_andJoinsNoNode() throws Exception {
        String name = "redlock-join-" + UUID.randomUUID();
        try (RedLockClient client = client()) {
            DistributedLock lock = client.lock(name);
            RecordingLockListener listener = new RecordingLockListener();
            lock.addListener(listener);
            LockHold hold = lock.tryAcquire(Timing.seconds(5)).orElseThrow();
            assertThat(holders(name, 0, 1, 2, 3, 4)).doesNotContainNull();
            nodes.deleteHold(name, 0, 1, 2);
            Eventually.within(Timing.seconds(10), "the hold is told lost", () -> !listener.lost()
                    .isEmpty());
            assertThat(hold.isValid()).isFalse();
            assertThat(holders(name, 0, 1, 2, 3, 4)).containsOnly((String) null);
        }
    }

    /** The two scripts on one node: renewal tells a missing hold from another owner's; joining never overwrites one. */
    @Test
    void joinScript_setsOnlyAMissingHold_andRaisesTheFenceOnlyThen() {
        String name = "redlock-join-" + UUID.randomUUID();
        String tag = RedLockNodes.layout.tag(name);
        String[] keys = {KeyLayout.key(tag, KeyLayout.HOLD), KeyLayout.key(tag, KeyLayout.FENCE)};
        String[] hold = {keys[0]};
        RedLockNodes.onNode(nodes.servers.get(0), c -> {
            var cmd = c.sync();
            assertThat((Long) cmd.eval(RedLockScripts.RENEW.source(), ScriptOutputType.INTEGER, hold, "me", "5000"))
                    .as("renew, no hold")
                    .isZero();
            cmd.set(keys[0], "other", SetArgs.Builder.px(10_000));
            assertThat((Long) cmd.eval(RedLockScripts.RENEW.source(), ScriptOutputType.INTEGER, hold, "me", "5000"))
                    .as("renew, another owner's hold")
                    .isEqualTo(-1);
            assertThat((Long) cmd.eval(RedLockScripts.JOIN.source(), ScriptOutputType.INTEGER, keys, "me", "5000", "7"))
                    .as("join, another owner's hold")
                    .isZero();
            assertThat(cmd.get(keys[0])).isEqualTo("other");
            assertThat(cmd.get(keys[1])).as("fence untouched").isNull();

            cmd.del(keys[0]);
            assertThat((Long) cmd.eval(RedLockScripts.JOIN.source(), ScriptOutputType.INTEGER, keys, "me", "5000", "7"))
                    .as("join, no hold")
                    .isEqualTo(1);
            assertThat(cmd.get(keys[0])).isEqualTo("me");
            assertThat(cmd.pttl(keys[0])).isBetween(1L, 5000L);
            assertThat(cmd.get(keys[1])).as("fence raised to the token").isEqualTo("7");
            assertThat((Long) cmd.eval(RedLockScripts.JOIN.source(), ScriptOutputType.INTEGER, keys, "me", "5000", "3"))
                    .as("join, own hold")
                    .isEqualTo(1);
            assertThat(cmd.get(keys[1])).as("fence never lowered").isEqualTo("7");
            cmd.del(keys[0], keys[1]);
        });
    }
}
