package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.LockHold;
import io.distlock.testkit.fault.Fault;
import io.distlock.testkit.fault.FaultLog;
import io.distlock.testkit.fault.FaultProxy;
import io.distlock.testkit.server.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A RedLock round that outlasts the validity while fewer than a majority of answers came back (what a client stopped
 * mid-round past its lease sees when it resumes: its commands timed out, their answers unread) is no grant and no
 * failure: the acquire answers "not acquired", not {@code DistributedLockException}. Here the round outlasts the
 * validity the other way: the node timeout (1.5 s) is above the lease (1 s) and 3 of 5 nodes answer after 2 s.
 */
class RedLockLateRoundIT {
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

    @Test
    @Timeout(60)
    void roundPastTheValidity_withoutAMajorityOfAnswers_isNotAcquired_notAFailure() throws Exception {
        String name = "redlock-late-" + UUID.randomUUID();
        try (RedLockClient client = RedLockClient.builder()
                .nodes(proxies.stream().map(p -> "redis://" + p.address()).toArray(String[]::new))
                .nodeTimeout(Duration.ofMillis(1500))
                .build()) {
            // every node runs the scripts once first: a node that does not know a script costs a second round trip
            client.lock(name + "-warm").tryAcquire(Duration.ZERO).orElseThrow().release();
            try (Fault n2 = proxies.get(2).delay(Duration.ofSeconds(1), Duration.ZERO, Duration.ofMinutes(1));
                    Fault n3 = proxies.get(3).delay(Duration.ofSeconds(1), Duration.ZERO, Duration.ofMinutes(1));
                    Fault n4 = proxies.get(4).delay(Duration.ofSeconds(1), Duration.ZERO, Duration.ofMinutes(1))) {
                Optional<LockHold> hold = client.lock(name).tryAcquire(Duration.ZERO, Duration.ofSeconds(1));
                assertThat(hold)
                        .as("acquired although the round outlasted the lease")
                        .isEmpty();
            }
        }
    }
}
