package io.distlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLock;
import io.distlock.LockHold;
import io.distlock.LockLostException;
import io.distlock.MultiLock;
import io.distlock.MultiLockHold;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A multi-lock's members of one client taken and released together, on a fake store that AcquiresTogether. */
@Timeout(30)
class MultiLockTogetherTest {
    static final List<String> NAMES = List.of("a", "b", "c", "d", "e", "f", "g", "h");

    final FakeLockStore store = new FakeLockStore();
    final List<LockEngine> engines = new ArrayList<>();

    LockEngine engine() {
        store.acquiresTogether = true;
        LockEngine e =
                LockEngine.create(store.view(), EngineConfig.defaults().withWatchdogLease(Duration.ofSeconds(30)));
        engines.add(e);
        return e;
    }

    MultiLock multi(LockEngine e) {
        List<DistributedLock> locks = new ArrayList<>();
        for (String n : NAMES) {
            locks.add(e.lock(n));
        }
        return MultiLock.of(locks);
    }

    Map<String, String> holders() {
        synchronized (store) {
            Map<String, String> m = new TreeMap<>();
            store.holders.forEach((k, v) -> m.put(k, v.value()));
            return m;
        }
    }

    @AfterEach
    void close() {
        engines.forEach(LockEngine::close);
    }

    @Test
    void uncontended_lockAndUnlock_areOneBatchedCallEach() {
        MultiLock multi = multi(engine());
        multi.lock();
        assertThat(holders()).containsOnlyKeys(NAMES);
        assertThat(multi.fencingTokens()).containsOnlyKeys(NAMES);
        multi.unlock();
        assertThat(holders()).isEmpty();
        assertThat(store.log).containsExactly("acquireAll " + NAMES, "releaseAll [h, g, f, e, d, c, b, a]");
        assertThat(store.tryAcquireCalls).hasValue(0);
        assertThat(store.releaseCalls).hasValue(0);
    }

    @Test
    void oneMemberBusy_keepsTheEarlierOnes_releasesTheLaterOnes_thenWaitsForItInOrder() throws Exception {
        LockEngine other = engine();
        DistributedLock otherD = other.lock("d");
        LockHold busy = otherD.acquire();
        MultiLock multi = multi(engine());
        store.log.clear();

        CompletableFuture<Boolean> taken = CompletableFuture.supplyAsync(() -> {
            try {
                boolean got = multi.tryLock(20, TimeUnit.SECONDS);
                Map<String, Long> tokens = multi.fencingTokens();
                multi.unlock();
                return got && tokens.size() == NAMES.size();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        // the batch found d busy: a, b, c kept, e..h released again, and d awaited on its own
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!store.log.contains("acquire d") && System.nanoTime() < until) {
            Thread.sleep(5);
        }
        assertThat(store.log).startsWith("acquireAll " + NAMES, "releaseAll [e, f, g, h]", "acquire d");
        Map<String, String> during = holders();
        assertThat(during).containsOnlyKeys("a", "b", "c", "d");
        assertThat(during.get("d")).isNotEqualTo(during.get("a"));

        busy.release();
        assertThat(taken.get(10, TimeUnit.SECONDS)).isTrue();
        assertThat(holders()).isEmpty();
        // after d, the rest of the run is tried together again
        assertThat(store.log).contains("acquireAll [e, f, g, h]");
    }

    @Test
    void tryLock_withoutWait_memberBusy_leavesNothingBehind() {
        LockEngine other = engine();
        other.lock("f").lock();
        MultiLock multi = multi(engine());
        assertThat(multi.tryLock()).isFalse();
        assertThat(holders()).containsOnlyKeys("f");
    }

    @Test
    void reentrantMultiLock_usesThePathOfOneByOne_andCountsDown() {
        MultiLock multi = multi(engine());
        multi.lock();
        store.log.clear();
        multi.lock(); // re-entry: no store call
        assertThat(multi.getHoldCount()).isEqualTo(2);
        assertThat(store.log).isEmpty();
        multi.unlock();
        assertThat(holders()).containsOnlyKeys(NAMES);
        multi.unlock();
        assertThat(holders()).isEmpty();
        assertThatThrownBy(multi::unlock).isInstanceOf(IllegalMonitorStateException.class);
    }

    @Test
    void holds_areTakenAndReleasedTogether_lossIsReported() throws Exception {
        MultiLock multi = multi(engine());
        MultiLockHold hold = multi.acquire();
        assertThat(hold.fencingTokens()).containsOnlyKeys(NAMES);
        assertThat(store.log).containsExactly("acquireAll " + NAMES);
        store.expire("c"); // the store lost c
        assertThatThrownBy(hold::release).isInstanceOf(LockLostException.class);
        assertThat(store.releaseAllCalls).hasValue(1);
        assertThat(holders()).isEmpty();
    }

    @Test
    void threadUnlock_memberLostInTheStore_throwsLockLost_releasesTheRest() {
        MultiLock multi = multi(engine());
        multi.lock();
        store.expire("b");
        assertThatThrownBy(multi::unlock).isInstanceOf(LockLostException.class);
        assertThat(holders()).isEmpty();
        assertThatThrownBy(multi::unlock).isInstanceOf(IllegalMonitorStateException.class);
    }
}
