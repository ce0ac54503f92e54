package io.distlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedLock;
import io.distlock.LockClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Contract 9: fair locks grant in request order, across clients. */
public interface FairnessContract extends BackendUnderTest {

    @Test
    default void fairLock_grantsInRequestOrder() throws Exception {
        String name = uniqueName();
        List<LockClient> clients = List.of(newClient(), newClient(), newClient());
        DistributedLock holder = clients.get(0).fairLock(name);
        holder.lock();
        List<Integer> order = Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            int id = i;
            DistributedLock lock = clients.get(i % 3).fairLock(name);
            Thread t = new Thread(() -> {
                try {
                    if (lock.tryLock(Timing.seconds(20).toMillis(), TimeUnit.MILLISECONDS)) {
                        order.add(id);
                        Timing.sleep(Duration.ofMillis(20));
                        lock.unlock();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            threads.add(t);
            t.start();
            Timing.sleep(Duration.ofMillis(250)); // each waiter is queued before the next asks
        }
        holder.unlock();
        for (Thread t : threads) {
            t.join(Timing.seconds(25).toMillis());
        }
        assertThat(order).containsExactly(0, 1, 2, 3, 4);
        assertThat(residue(name)).isEmpty();
    }

    @Test
    default void fairLock_andLock_ofOneName_areOneLock() {
        String name = uniqueName();
        DistributedLock fair = newClient().fairLock(name);
        DistributedLock plain = newClient().lock(name);
        fair.lock();
        try {
            assertThat(plain.tryLock()).isFalse();
        } finally {
            fair.unlock();
        }
        assertThat(plain.tryLock()).isTrue();
        assertThat(newClient().fairLock(name).tryLock()).isFalse();
        plain.unlock();
    }
}
