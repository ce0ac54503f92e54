package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.distlock.DistributedLock;
import io.distlock.DistributedLockException;
import io.distlock.LockLostException;
import io.distlock.testkit.fault.Fault;
import io.distlock.testkit.fault.FaultLog;
import io.distlock.testkit.fault.FaultProxy;
import io.distlock.testkit.server.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * A RedLock release that the nodes applied but whose answers were lost with their connections (FAULTS.md G6): Lettuce
 * writes the release again once it has reconnected to a node, and that second write finds the hold gone. When such
 * nodes are the quorum, the release must answer "unknown" ({@link DistributedLockException}), never "lost": the
 * caller's own release ended the hold. Three nodes, each behind a {@link FaultProxy} that can forward a release, drop
 * its answer and close the connection (and do the same to every connection for 200 ms, so the reconnect is tried a
 * few times); the node timeout, 2 s, outlasts the reconnect.
 */
class RedLockReleaseReplyLostIT {
    static final RedLockNodes nodes = new RedLockNodes(3);
    static final List<FaultProxy> proxies = new ArrayList<>();
    private static final Duration FAULT = Duration.ofMillis(200);

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

    private static RedLockClient viaProxies() {
        return RedLockClient.builder()
                .nodes(proxies.stream().map(p -> "redis://" + p.address()).toArray(String[]::new))
                .leaseTime(Duration.ofSeconds(6))
                .nodeTimeout(Duration.ofSeconds(2))
                .build();
    }

    private static String name() {
        return "redlock-g6-" + UUID.randomUUID();
    }

    /** What {@code release} threw while the first {@code faulty} proxies dropped answers; each dropped at least one. */
    private static @Nullable Throwable releasedWhileAnswersDrop(int faulty, Runnable release) {
        long[] before = new long[faulty];
        List<Fault> faults = new ArrayList<>();
        for (int i = 0; i < faulty; i++) {
            before[i] = proxies.get(i).droppedReplies();
            faults.add(proxies.get(i).dropReplies(FAULT));
        }
        Throwable thrown = catchThrowable(release::run);
        faults.forEach(Fault::close);
        for (int i = 0; i < faulty; i++) {
            assertThat(proxies.get(i).droppedReplies() - before[i])
                    .as("node %d's answer to the release was dropped", i)
                    .isPositive();
        }
        return thrown;
    }

    /**
     * One release without a fault, so that every node has the release script cached: otherwise the faulty release's
     * EVALSHA is answered NOSCRIPT (not applied), and only its EVAL, sent after the fault, ends the hold.
     */
    private static void cacheTheReleaseScript(DistributedLock lock) {
        lock.lock();
        lock.unlock();
    }

    private static void assertNothingHeld(String name) {
        assertThat(nodes.residue(name)).as("no node keeps a key of the name").isEmpty();
        try (RedLockClient other = nodes.client(Duration.ofSeconds(6))) {
            DistributedLock lock = other.lock(name);
            assertThat(lock.tryLock()).as("the release took effect").isTrue();
            lock.unlock();
        }
    }

    @Test
    void release_appliedOnAQuorumWhoseAnswersWereLost_isUnknown_notLost() {
        String name = name();
        try (RedLockClient holder = viaProxies()) {
            DistributedLock lock = holder.lock(name);
            cacheTheReleaseScript(lock);
            lock.lock();
            Throwable thrown = releasedWhileAnswersDrop(2, lock::unlock);
            assertThat(thrown)
                    .as("an applied release whose answers were lost on 2 of 3 nodes")
                    .isInstanceOf(DistributedLockException.class)
                    .isNotInstanceOf(LockLostException.class)
                    .hasMessageContaining("unknown");
        }
        assertNothingHeld(name);
    }

    @Test
    void release_whoseAnswerWasLostOnAMinority_isReleased() {
        String name = name();
        try (RedLockClient holder = viaProxies()) {
            DistributedLock lock = holder.lock(name);
            cacheTheReleaseScript(lock);
            lock.lock();
            Throwable thrown = releasedWhileAnswersDrop(1, lock::unlock);
            assertThat(thrown)
                    .as("2 of 3 nodes answered that they ended the hold")
                    .isNull();
        }
        assertNothingHeld(name);
    }
}
