package io.distlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedLock;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** A quick end-to-end check of one backend set-up (credentials, TLS, a topology): hold, wait, release, wake. */
public final class Handover {
    private Handover() {}

    /**
     * {@code holder} takes the lock on the calling thread; {@code waiter} (of another client) waits for it on a thread
     * of its own and must get it, with a greater fencing token, within 5 s of the release: woken by the store's
     * notification (which therefore works with these settings), not by the holder's lease running out.
     */
    public static void holdThenHandOver(DistributedLock holder, DistributedLock waiter) throws InterruptedException {
        holder.lock();
        long first = holder.fencingToken();
        AtomicLong acquiredAt = new AtomicLong();
        AtomicLong token = new AtomicLong();
        Thread waiting = new Thread(() -> {
            try {
                if (waiter.tryLock(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS)) {
                    acquiredAt.set(System.nanoTime());
                    token.set(waiter.fencingToken());
                    waiter.unlock();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        waiting.start();
        Timing.sleep(Duration.ofMillis(300));
        assertThat(acquiredAt).as("acquired while held").hasValue(0);
        long releasedAt = System.nanoTime();
        holder.unlock();
        waiting.join(Timing.seconds(15).toMillis());
        assertThat(acquiredAt.get()).as("the waiter acquired").isNotZero();
        assertThat(token.get()).as("the waiter's fencing token").isGreaterThan(first);
        assertThat(TimeUnit.NANOSECONDS.toMillis(acquiredAt.get() - releasedAt))
                .as("milliseconds from the release to the waiter's grant")
                .isLessThan(Timing.seconds(5).toMillis());
    }
}
