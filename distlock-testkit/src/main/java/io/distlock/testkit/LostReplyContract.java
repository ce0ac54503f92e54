package io.distlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedCountDownLatch;
import io.distlock.LockClient;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Store calls whose reply is lost after they took effect: the client retries them, and the store must not apply them
 * twice. Implemented by a fixture that can make a client whose store calls lose their replies.
 */
public interface LostReplyContract extends BackendUnderTest {

    /**
     * A new client, not tracked, whose every {@code countDown} round trip takes effect in the store and then fails the
     * first time it is sent, as a reply lost on the network would; the same call sent again gets its reply.
     */
    LockClient createClientLosingCountDownReplies(Duration watchdogLease);

    /** Seed: a count-down retried after a lost reply is counted twice, and the latch opens early. */
    @Test
    default void countDown_replyLostAndRetried_countsOnce() {
        String name = uniqueName();
        LockClient lossy = createClientLosingCountDownReplies(defaultLease());
        try {
            DistributedCountDownLatch latch = lossy.countDownLatch(name);
            DistributedCountDownLatch observer = newClient().countDownLatch(name);
            assertThat(latch.trySetCount(3)).isTrue();
            latch.countDown();
            assertThat(observer.getCount())
                    .as("after one count-down whose reply was lost")
                    .isEqualTo(2);
            latch.countDown();
            assertThat(observer.getCount()).isEqualTo(1);
            latch.countDown();
            assertThat(observer.getCount()).isZero();
        } finally {
            lossy.close();
        }
    }
}
