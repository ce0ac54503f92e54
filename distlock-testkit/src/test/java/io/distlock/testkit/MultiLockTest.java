package io.distlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLock;
import io.distlock.LockClient;
import io.distlock.LockHold;
import io.distlock.LockListener;
import io.distlock.LockLostException;
import io.distlock.MultiLock;
import io.distlock.MultiLockHold;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What a multi-lock adds to its members: canonical order, one wait budget, rollback, tokens by name, losses. */
class MultiLockTest {
    static final InMemoryLockServer first = InMemoryLockServer.create();
    static final InMemoryLockServer second = InMemoryLockServer.create();
    private final List<LockClient> clients = new ArrayList<>();

    @AfterAll
    static void stop() {
        first.close();
        second.close();
    }

    @AfterEach
    void closeClients() {
        clients.forEach(LockClient::close);
    }

    private LockClient client(InMemoryLockServer server) {
        LockClient c = server.newClient();
        clients.add(c);
        return c;
    }

    private static String name() {
        return "multi-" + System.nanoTime();
    }

    @Test
    void of_badInput_isRejectedNamingIt() {
        LockClient a = client(first);
        LockClient b = client(second);
        assertThatThrownBy(() -> MultiLock.of(nullArray())).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> MultiLock.of(List.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("empty");
        assertThatThrownBy(() -> MultiLock.of(a.lock("x"), b.lock("x")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'x'");
    }

    @Test
    void acquireAsync_takesEveryMember_releaseAsyncFreesThemAll() throws Exception {
        LockClient a = client(first);
        LockClient b = client(second);
        String n = name();
        MultiLock multi = MultiLock.of(a.lock(n + "-1"), b.lock(n + "-2"));
        LockHold hold = multi.acquireAsync().get(10, TimeUnit.SECONDS);
        assertThat(hold.isValid()).isTrue();
        assertThat(((MultiLockHold) hold).fencingTokens()).containsOnlyKeys(n + "-1", n + "-2");
        assertThat(client(first).lock(n + "-1").tryLock()).isFalse();
        assertThat(client(second).lock(n + "-2").tryLock()).isFalse();
        hold.releaseAsync().get(10, TimeUnit.SECONDS);
        assertThat(hold.isValid()).isFalse();
        assertThat(a.admin().inspect(n + "-1")).isEmpty();
        assertThat(b.admin().inspect(n + "-2")).isEmpty();
    }

    @Test
    void tryAcquireAsync_memberBusy_completesEmpty_andReleasesWhatItTook() throws Exception {
        LockClient a = client(first);
        LockClient b = client(second);
        String n = name();
        LockHold blocker = client(second).lock(n + "-2").acquire();
        MultiLock multi = MultiLock.of(a.lock(n + "-1"), b.lock(n + "-2"));
        Optional<LockHold> none = multi.tryAcquireAsync(Duration.ofMillis(300)).get(10, TimeUnit.SECONDS);
        assertThat(none).isEmpty();
        assertThat(a.admin().inspect(n + "-1"))
                .as("the first member, taken then given back")
                .isEmpty();
        blocker.release();
    }

    @Test
    void acquireAsync_cancelledWhileAMemberWaits_leavesNothingBehind() throws Exception {
        LockClient a = client(first);
        LockClient b = client(second);
        String n = name();
        LockHold blocker = client(second).lock(n + "-2").acquire();
        MultiLock multi = MultiLock.of(a.lock(n + "-1"), b.lock(n + "-2"));
        java.util.concurrent.CompletableFuture<LockHold> f = multi.acquireAsync();
        Eventually.within(Duration.ofSeconds(5), "first member taken", () -> a.admin()
                .inspect(n + "-1")
                .isPresent());
        assertThat(f.cancel(false)).isTrue();
        Eventually.within(Duration.ofSeconds(5), "first member released", () -> a.admin()
                .inspect(n + "-1")
                .isEmpty());
        blocker.release();
        Timing.sleep(Duration.ofMillis(300));
        assertThat(b.admin().inspect(n + "-2"))
                .as("no grant to the cancelled acquire")
                .isEmpty();
    }

    @Test
    void members_areInNameOrder_whateverOrderTheyWereGiven() {
        LockClient a = client(first);
        LockClient b = client(second);
        MultiLock multi = MultiLock.of(b.lock("c"), a.lock("a"), b.lock("b"));
        assertThat(multi.members()).extracting(DistributedLock::name).containsExactly("a", "b", "c");
        assertThat(multi.name()).isEqualTo("multi[a, b, c]");
    }

    @Test
    void acquire_takesMembersInCanonicalOrder() throws Exception {
        LockClient a = client(first);
        List<String> calls = new CopyOnWriteArrayList<>();
        String n = name();
        MultiLock multi = MultiLock.of(
                new Recording(a.lock(n + "-z"), calls),
                new Recording(a.lock(n + "-a"), calls),
                new Recording(a.lock(n + "-m"), calls));
        multi.lock();
        multi.unlock();
        try (LockHold h = multi.acquire()) {
            assertThat(h.isValid()).isTrue();
        }
        assertThat(calls)
                .containsExactly(
                        "lock " + n + "-a",
                        "lock " + n + "-m",
                        "lock " + n + "-z",
                        "unlock " + n + "-z",
                        "unlock " + n + "-m",
                        "unlock " + n + "-a",
                        "acquire " + n + "-a",
                        "acquire " + n + "-m",
                        "acquire " + n + "-z");
    }

    @Test
    void tryLock_lastMemberBusy_returnsFalse_releasesTheOthers() throws Exception {
        LockClient a = client(first);
        LockClient b = client(second);
        LockClient other = client(second);
        String n = name();
        LockHold busy = other.lock(n + "-2").acquire();
        MultiLock multi = MultiLock.of(a.lock(n + "-1"), b.lock(n + "-2"));
        assertThat(multi.tryLock(100, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(multi.tryAcquire(Duration.ofMillis(100))).isEmpty();
        assertThat(multi.tryLock()).isFalse();
        assertThat(multi.getHoldCount()).isZero();
        assertThat(first.residue(n + "-1"))
                .as("the member taken first, released again")
                .isEmpty();
        assertThat(client(first).lock(n + "-1").tryLock()).isTrue();
        busy.release();
    }

    @Test
    void interruptedWhileWaitingForALaterMember_releasesTheEarlierOnes() throws Exception {
        LockClient a = client(first);
        LockClient other = client(first);
        String n = name();
        LockHold busy = other.lock(n + "-2").acquire();
        MultiLock multi = MultiLock.of(a.lock(n + "-1"), a.lock(n + "-2"));
        Thread waiter = new Thread(() -> {
            try {
                multi.lockInterruptibly();
            } catch (InterruptedException e) {
                // expected
            }
        });
        waiter.start();
        Eventually.within(Timing.seconds(3), "first member taken", () -> !first.residue(n + "-1")
                .isEmpty());
        waiter.interrupt();
        waiter.join();
        assertThat(first.residue(n + "-1")).isEmpty();
        busy.release();
    }

    @Test
    void tryLock_isOneBudget_laterMembersGetWhatIsLeft() throws Exception {
        LockClient a = client(first);
        LockClient other = client(first);
        String n = name();
        List<long[]> waits = new CopyOnWriteArrayList<>();
        LockHold firstBusy = other.lock(n + "-1").acquire();
        LockHold secondBusy = other.lock(n + "-2").acquire();
        MultiLock multi = MultiLock.of(new Timed(a.lock(n + "-1"), waits), new Timed(a.lock(n + "-2"), waits));
        Thread releaser = new Thread(() -> {
            Timing.sleep(Duration.ofMillis(300));
            firstBusy.release();
        });
        releaser.start();
        long budget = TimeUnit.MILLISECONDS.toNanos(800);
        assertThat(multi.tryLock(budget, TimeUnit.NANOSECONDS)).isFalse();
        releaser.join();
        assertThat(waits).hasSize(2);
        long[] m1 = waits.get(0);
        long[] m2 = waits.get(1);
        assertThat(m1[0]).as("first member's wait").isLessThanOrEqualTo(budget);
        assertThat(m2[0])
                .as("second member's wait: the budget less what the first member took")
                .isLessThanOrEqualTo(budget - (m1[2] - m1[1]));
        secondBusy.release();
    }

    @Test
    void holds_carryEveryMembersToken_byName() throws Exception {
        LockClient a = client(first);
        LockClient b = client(second);
        String n = name();
        MultiLock multi = MultiLock.of(b.lock(n + "-b"), a.lock(n + "-a"));
        MultiLockHold hold = multi.acquire();
        assertThat(hold.fencingTokens()).containsOnlyKeys(n + "-a", n + "-b");
        assertThat(List.copyOf(hold.fencingTokens().keySet())).containsExactly(n + "-a", n + "-b");
        assertThat(hold.fencingToken()).isEqualTo(hold.fencingTokens().get(n + "-a"));
        assertThat(hold.members()).extracting(LockHold::name).containsExactly(n + "-a", n + "-b");
        hold.release();
        multi.lock();
        assertThat(multi.fencingTokens().get(n + "-b"))
                .isGreaterThan(hold.fencingTokens().get(n + "-b"));
        multi.unlock();
        assertThatThrownBy(multi::fencingTokens).isInstanceOf(IllegalMonitorStateException.class);
    }

    @Test
    void oneMemberLost_multiHoldLost_toldOnce_releaseEndsTheRest() throws Exception {
        LockClient a = first.newClient(Duration.ofMillis(900));
        LockClient b = second.newClient(Duration.ofMillis(900));
        clients.add(a);
        clients.add(b);
        String n = name();
        MultiLock multi = MultiLock.of(a.lock(n + "-a"), b.lock(n + "-b"));
        RecordingLockListener listener = new RecordingLockListener();
        multi.addListener(listener);
        MultiLockHold hold = multi.acquire();
        second.expireHold(n + "-b");
        Eventually.within(Timing.seconds(3), "told lost", () -> !listener.lost().isEmpty());
        assertThat(listener.lost()).containsExactly(hold.fencingToken());
        assertThat(hold.isValid()).isFalse();
        assertThat(first.residue(n + "-a"))
                .as("the member still held until the release")
                .isNotEmpty();
        assertThatThrownBy(hold::release).isInstanceOf(LockLostException.class);
        assertThat(first.residue(n + "-a")).isEmpty();
        assertThat(listener.released()).isEmpty();
    }

    @SuppressWarnings("NullAway")
    private static DistributedLock[] nullArray() {
        return null;
    }

    /** Records each call's kind and member name. */
    private static class Recording extends Forwarding {
        private final List<String> calls;

        Recording(DistributedLock delegate, List<String> calls) {
            super(delegate);
            this.calls = calls;
        }

        @Override
        public void lock() {
            calls.add("lock " + name());
            super.lock();
        }

        @Override
        public void unlock() {
            calls.add("unlock " + name());
            super.unlock();
        }

        @Override
        public LockHold acquire() throws InterruptedException {
            calls.add("acquire " + name());
            return super.acquire();
        }
    }

    /** Records each timed tryLock's wait (nanoseconds), start and end. */
    private static class Timed extends Forwarding {
        private final List<long[]> waits;

        Timed(DistributedLock delegate, List<long[]> waits) {
            super(delegate);
            this.waits = waits;
        }

        @Override
        public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
            long start = System.nanoTime();
            try {
                return super.tryLock(time, unit);
            } finally {
                waits.add(new long[] {unit.toNanos(time), start, System.nanoTime()});
            }
        }
    }

    /** Hands every call to another lock. */
    private static class Forwarding implements DistributedLock {
        private final DistributedLock d;

        Forwarding(DistributedLock d) {
            this.d = d;
        }

        @Override
        public String name() {
            return d.name();
        }

        @Override
        public void lock(long leaseTime, TimeUnit unit) {
            d.lock(leaseTime, unit);
        }

        @Override
        public boolean tryLock(long waitTime, long leaseTime, TimeUnit unit) throws InterruptedException {
            return d.tryLock(waitTime, leaseTime, unit);
        }

        @Override
        public void lock() {
            d.lock();
        }

        @Override
        public void lockInterruptibly() throws InterruptedException {
            d.lockInterruptibly();
        }

        @Override
        public boolean tryLock() {
            return d.tryLock();
        }

        @Override
        public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
            return d.tryLock(time, unit);
        }

        @Override
        public void unlock() {
            d.unlock();
        }

        @Override
        public Condition newCondition() {
            return d.newCondition();
        }

        @Override
        public long fencingToken() {
            return d.fencingToken();
        }

        @Override
        public boolean isLocked() {
            return d.isLocked();
        }

        @Override
        public boolean isHeldByCurrentThread() {
            return d.isHeldByCurrentThread();
        }

        @Override
        public int getHoldCount() {
            return d.getHoldCount();
        }

        @Override
        public LockHold acquire() throws InterruptedException {
            return d.acquire();
        }

        @Override
        public Optional<LockHold> tryAcquire(Duration wait) throws InterruptedException {
            return d.tryAcquire(wait);
        }

        @Override
        public Optional<LockHold> tryAcquire(Duration wait, Duration lease) throws InterruptedException {
            return d.tryAcquire(wait, lease);
        }

        @Override
        public java.util.concurrent.CompletableFuture<LockHold> acquireAsync() {
            return d.acquireAsync();
        }

        @Override
        public java.util.concurrent.CompletableFuture<Optional<LockHold>> tryAcquireAsync(Duration wait) {
            return d.tryAcquireAsync(wait);
        }

        @Override
        public java.util.concurrent.CompletableFuture<Optional<LockHold>> tryAcquireAsync(
                Duration wait, Duration lease) {
            return d.tryAcquireAsync(wait, lease);
        }

        @Override
        public void addListener(LockListener listener) {
            d.addListener(listener);
        }

        @Override
        public void removeListener(LockListener listener) {
            d.removeListener(listener);
        }
    }
}
