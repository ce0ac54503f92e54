package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLock;
import io.distlock.DistributedLockException;
import io.distlock.LockClient;
import io.distlock.testkit.server.RedisServer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code replicaAcks}: grants wait for replicas and fail loudly, leaving nothing, when too few acknowledge. */
class RedisReplicaAcksIT {
    private static RedisServer master;
    private static RedisServer replica;

    @BeforeAll
    static void start() {
        master = RedisServer.started();
        replica = RedisServer.started("--replicaof", "127.0.0.1", Integer.toString(master.port()));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!replica.command("INFO", "replication").contains("master_link_status:up")) {
            assertThat(System.nanoTime() - deadline)
                    .as("replica linked within 10 s")
                    .isNegative();
            RedisServerSleep.sleep(50);
        }
    }

    @AfterAll
    static void stop() {
        replica.close();
        master.close();
    }

    @Test
    void replicaAcks_met_grantsAsUsual() throws Exception {
        try (LockClient client = RedisLockClient.builder()
                .uri(master.uri())
                .replicaAcks(1, Duration.ofSeconds(2))
                .build()) {
            DistributedLock lock = client.lock("acks-met");
            assertThat(lock.tryLock(1, TimeUnit.SECONDS)).isTrue();
            assertThat(lock.fencingToken()).isPositive();
            assertThat(replica.command("GET", "distlock:{acks-met}:hold")).isNotEmpty();
            lock.unlock();
        }
    }

    @Test
    void replicaAcks_notMet_throwsClearly_andLeavesNoHold() {
        try (LockClient client = RedisLockClient.builder()
                        .uri(master.uri())
                        .replicaAcks(2, Duration.ofMillis(100))
                        .build();
                LockClient other = RedisLockClient.create(master.uri())) {
            DistributedLock lock = client.lock("acks-not-met");
            assertThatThrownBy(lock::tryLock)
                    .isInstanceOf(DistributedLockException.class)
                    .hasMessageContaining("only 1 of the required 2 replicas");
            assertThat(lock.isHeldByCurrentThread()).isFalse();
            assertThat(master.command("EXISTS", "distlock:{acks-not-met}:hold")).isEqualTo("0");
            DistributedLock theirs = other.lock("acks-not-met");
            assertThat(theirs.tryLock()).as("no silent grant blocks others").isTrue();
            theirs.unlock();
        }
    }

    /** Sleeps without a checked exception. */
    private static final class RedisServerSleep {
        static void sleep(long millis) {
            try {
                Thread.sleep(millis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }
}
