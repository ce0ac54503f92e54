package io.distlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLock;
import io.distlock.LockClient;
import io.distlock.LockHold;
import io.distlock.LockLostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Contract 4: a release by anyone but the owner throws and changes nothing in the store. */
public interface OwnerCheckContract extends BackendUnderTest {

    @Test
    default void unlock_neverLocked_throwsIllegalMonitorState_leavesNothing() {
        String name = uniqueName();
        DistributedLock lock = newClient().lock(name);
        assertThatThrownBy(lock::unlock)
                .isExactlyInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining(name);
        assertThat(residue(name)).isEmpty();
    }

    @Test
    default void unlock_byOtherThread_throwsAndKeepsHold() throws Exception {
        String name = uniqueName();
        LockClient client = newClient();
        DistributedLock lock = client.lock(name);
        lock.lock();
        try {
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            Thread t = new Thread(() -> {
                try {
                    client.lock(name).unlock();
                } catch (Throwable e) {
                    thrown.set(e);
                }
            });
            t.start();
            t.join();
            assertThat(thrown.get()).isExactlyInstanceOf(IllegalMonitorStateException.class);
            assertThat(lock.isHeldByCurrentThread()).isTrue();
            assertThat(newClient().lock(name).tryLock()).isFalse();
        } finally {
            lock.unlock();
        }
    }

    /** Seed 000: a thread's name is not its identity; two threads with one name are two owners. */
    @Test
    default void sameThreadName_otherThread_isOtherOwner() throws Exception {
        String name = uniqueName();
        LockClient client = newClient();
        AtomicReference<Object> result = new AtomicReference<>();
        String originalName = Thread.currentThread().getName();
        Thread.currentThread().setName("worker");
        DistributedLock lock = client.lock(name);
        lock.lock();
        try {
            Thread t = new Thread(
                    () -> {
                        DistributedLock same = client.lock(name);
                        boolean got = same.tryLock();
                        try {
                            same.unlock();
                            result.set("unlocked (got=" + got + ")");
                        } catch (IllegalMonitorStateException e) {
                            result.set(got ? "got lock" : e);
                        }
                    },
                    "worker");
            t.start();
            t.join();
            assertThat(result.get()).isInstanceOf(IllegalMonitorStateException.class);
            assertThat(lock.isHeldByCurrentThread()).isTrue();
        } finally {
            lock.unlock();
            Thread.currentThread().setName(originalName);
        }
    }

    /** Seed 000 and any release without an owner check: the old owner's release must not free the new owner's hold. */
    @Test
    default void release_afterHoldTakenOver_throwsLockLost_keepsNewHolder() {
        String name = uniqueName();
        DistributedLock old = newClient().lock(name);
        DistributedLock next = newClient().lock(name);
        DistributedLock third = newClient().lock(name);
        assertThat(old.tryLock()).isTrue();
        expireHold(name);
        assertThat(next.tryLock()).isTrue();
        assertThatThrownBy(old::unlock).isInstanceOf(LockLostException.class);
        assertThat(third.tryLock())
                .as("the new holder's hold survived the old owner's release")
                .isFalse();
        assertThat(next.isHeldByCurrentThread()).isTrue();
        next.unlock();
        assertThat(third.tryLock()).isTrue();
        third.unlock();
    }

    /** Seed 000: a release for a missing key must not write anything (no -1 count, no key without expiry). */
    @Test
    default void release_missingHold_leavesNothingBehind() {
        String name = uniqueName();
        DistributedLock lock = newClient().lock(name);
        assertThat(lock.tryLock()).isTrue();
        expireHold(name);
        assertThatThrownBy(lock::unlock).isInstanceOf(LockLostException.class);
        assertThat(residue(name)).isEmpty();
        DistributedLock other = newClient().lock(name);
        assertThat(other.tryLock()).isTrue();
        other.unlock();
    }

    @Test
    default void lockHold_releasedFromAnotherThread() throws Exception {
        String name = uniqueName();
        DistributedLock lock = newClient().lock(name);
        LockHold hold = lock.acquire();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                hold.release();
            } catch (Throwable e) {
                thrown.set(e);
            }
        });
        t.start();
        t.join();
        assertThat(thrown.get()).isNull();
        assertThat(hold.isValid()).isFalse();
        assertThat(residue(name)).isEmpty();
        assertThat(newClient().lock(name).tryAcquire(Duration.ZERO)).isPresent();
    }

    @Test
    default void lockHold_releaseTwice_throws_closeTwice_doesNothing() throws Exception {
        DistributedLock lock = newClient().lock(uniqueName());
        LockHold hold = lock.acquire();
        hold.release();
        assertThatThrownBy(hold::release).isExactlyInstanceOf(IllegalMonitorStateException.class);
        hold.close();
        LockHold second = lock.acquire();
        second.close();
        second.close();
        assertThat(second.isValid()).isFalse();
    }

    /**
     * Owner ids cannot be guessed, so no other process can release a hold by forging its owner: a client id ends with
     * 128 secret bits, which the client's toString, its locks and holds, the store's view, its threads' names and its
     * exception messages leave out.
     */
    @Test
    default void ownerIds_carry128SecretBits_shownOnlyRedacted() throws Exception {
        String name = uniqueName();
        LockClient client = createClient(defaultLease());
        LockClient waiter = newClient();
        String id = client.clientId();
        assertThat(id).matches(".+\\.[0-9a-f]{40}").isNotEqualTo(waiter.clientId());
        List<String> secrets = List.of(secretOf(id), secretOf(waiter.clientId()));
        DistributedLock lock = client.lock(name);
        List<String> shown = new ArrayList<>();
        try (LockHold hold = lock.acquire()) {
            assertThat(waiter.lock(name).tryLock(200, TimeUnit.MILLISECONDS))
                    .as("waits (and so subscribes)")
                    .isFalse();
            shown.addAll(List.of(client.toString(), waiter.toString(), lock.toString(), hold.toString()));
            client.admin().inspect(name).ifPresent(info -> shown.add(info.toString()));
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                shown.add(t.getName());
            }
        } finally {
            client.close();
        }
        assertThatThrownBy(lock::tryLock)
                .isInstanceOf(IllegalStateException.class)
                .satisfies(e -> shown.add(String.valueOf(e.getMessage())));
        for (String secret : secrets) {
            assertThat(shown).noneMatch(s -> s.contains(secret));
        }
    }

    private static String secretOf(String clientId) {
        return clientId.substring(clientId.length() - 32);
    }
}
