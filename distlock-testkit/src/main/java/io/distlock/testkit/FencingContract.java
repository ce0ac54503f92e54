package io.distlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLock;
import io.distlock.LockClient;
import io.distlock.LockHold;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Contract 7: every fresh acquisition has a token strictly greater than every token issued before for the name. */
public interface FencingContract extends BackendUnderTest {

    @Test
    default void tokens_increaseAcrossClientsAndAcquisitions() throws Exception {
        String name = uniqueName();
        LockClient a = newClient();
        LockClient b = newClient();
        long previous = Long.MIN_VALUE;
        for (int i = 0; i < 20; i++) {
            DistributedLock lock = (i % 2 == 0 ? a : b).lock(name);
            long token;
            if (i % 3 == 0) {
                try (LockHold hold = lock.acquire()) {
                    token = hold.fencingToken();
                }
            } else {
                lock.lock();
                token = lock.fencingToken();
                lock.unlock();
            }
            assertThat(token).as("acquisition %d", i).isGreaterThan(previous);
            previous = token;
        }
    }

    @Test
    default void token_increasesAfterHoldExpired() {
        String name = uniqueName();
        DistributedLock lock = newClient().lock(name);
        assertThat(lock.tryLock()).isTrue();
        long first = lock.fencingToken();
        expireHold(name);
        DistributedLock other = newClient().lock(name);
        assertThat(other.tryLock()).isTrue();
        assertThat(other.fencingToken()).isGreaterThan(first);
        other.unlock();
    }

    @Test
    default void fencingToken_withoutHold_throwsIllegalMonitorState() {
        DistributedLock lock = newClient().lock(uniqueName());
        assertThatThrownBy(lock::fencingToken).isExactlyInstanceOf(IllegalMonitorStateException.class);
    }

    /** Seed 003: a holder paused past its lease must not be able to write once another holder has. */
    @Test
    default void pausedHolder_staleWriteIsRejected() throws Exception {
        String name = uniqueName();
        FencedResource resource = new FencedResource();
        DistributedLock paused = newClient().lock(name);
        DistributedLock next = newClient().lock(name);
        Object pausedAcquisition = new Object();
        assertThat(paused.tryLock(0, 400, TimeUnit.MILLISECONDS)).isTrue();
        long pausedToken = paused.fencingToken();
        assertThat(resource.read(pausedToken, pausedAcquisition)).hasValue(0);
        // the holder stalls (GC, swap, network) past its lease; another owner takes over and writes
        assertThat(next.tryLock(Timing.seconds(5).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        Object nextAcquisition = new Object();
        assertThat(resource.write(next.fencingToken(), nextAcquisition, 1)).isTrue();
        next.unlock();
        // the stalled holder wakes up and writes what it computed from its stale read
        assertThat(resource.write(pausedToken, pausedAcquisition, 1)).isFalse();
        assertThat(resource.rejected()).isEqualTo(1);
        assertThat(resource.value()).isEqualTo(1);
    }

    /** Hand-over between threads of one client (one round trip where the store can) still issues fresh tokens. */
    @Test
    default void tokens_increaseAcrossThreadsOfOneClient() throws Exception {
        String name = uniqueName();
        LockClient client = newClient();
        List<Long> tokens = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch gate = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            threads.add(new Thread(() -> {
                DistributedLock lock = client.lock(name);
                try {
                    gate.await();
                    for (int i = 0; i < 25; i++) {
                        lock.lock();
                        try {
                            tokens.add(lock.fencingToken());
                        } finally {
                            lock.unlock();
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        threads.forEach(Thread::start);
        gate.countDown();
        for (Thread t : threads) {
            t.join(Timing.seconds(20).toMillis());
        }
        assertThat(tokens).hasSize(100);
        for (int i = 1; i < tokens.size(); i++) {
            assertThat(tokens.get(i)).as("token %d", i).isGreaterThan(tokens.get(i - 1));
        }
        assertThat(residue(name)).isEmpty();
    }
}
