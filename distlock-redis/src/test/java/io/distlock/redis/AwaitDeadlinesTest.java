package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** No server: the futures stand for commands that are answered, fail, or never get an answer. */
// in a thread of its own: a wait that never ends ignores the interrupt a same-thread timeout would send
@Timeout(value = 20, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class AwaitDeadlinesTest {
    private static final long SLACK_NANOS = TimeUnit.SECONDS.toNanos(2); // a loaded CI machine, not the 10 ms period

    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final String checkerName = "test-deadlines-" + INSTANCES.incrementAndGet();
    private final AwaitDeadlines deadlines = new AwaitDeadlines(checkerName, TimeUnit.SECONDS.toNanos(1));

    @Test
    void await_answered_returnsAnswer() throws Exception {
        assertThat(deadlines.await(CompletableFuture.completedFuture("OK"), System.nanoTime() + seconds(5)))
                .isEqualTo("OK");

        CompletableFuture<String> later = new CompletableFuture<>();
        CompletableFuture.delayedExecutor(50, TimeUnit.MILLISECONDS).execute(() -> later.complete("late OK"));
        assertThat(deadlines.await(later, System.nanoTime() + seconds(5))).isEqualTo("late OK");
    }

    @Test
    void await_failed_throwsCause() {
        IllegalStateException failure = new IllegalStateException("ERR wrong number of arguments");
        assertThatThrownBy(
                        () -> deadlines.await(CompletableFuture.failedFuture(failure), System.nanoTime() + seconds(5)))
                .isInstanceOf(ExecutionException.class)
                .hasCause(failure);
    }

    @Test
    void await_noAnswer_timesOutNearDeadlineAndCancelsCommand() {
        CompletableFuture<String> command = new CompletableFuture<>();
        long start = System.nanoTime();
        long deadline = start + TimeUnit.MILLISECONDS.toNanos(200);

        assertThatThrownBy(() -> deadlines.await(command, deadline)).isInstanceOf(TimeoutException.class);

        long ended = System.nanoTime();
        assertThat(ended - deadline).as("ended after the deadline").isGreaterThanOrEqualTo(0);
        assertThat(ended - deadline).as("ended soon after the deadline").isLessThan(SLACK_NANOS);
        assertThat(command).isCancelled(); // a command not yet sent is then never sent
    }

    @Test
    void await_deadlineAlreadyPassed_timesOut() {
        CompletableFuture<String> command = new CompletableFuture<>();
        assertThatThrownBy(() -> deadlines.await(command, System.nanoTime() - 1))
                .isInstanceOf(TimeoutException.class);
        assertThat(command).isCancelled();
    }

    @Test
    void await_cancelledBySomebodyElse_throwsCancellation() {
        CompletableFuture<String> command = new CompletableFuture<>();
        CompletableFuture.delayedExecutor(50, TimeUnit.MILLISECONDS).execute(() -> command.cancel(false));
        assertThatThrownBy(() -> deadlines.await(command, System.nanoTime() + seconds(30)))
                .isInstanceOf(CancellationException.class);
    }

    @Test
    void await_interrupted_keepsWaitingAndKeepsInterrupt() throws Exception {
        CompletableFuture<String> command = new CompletableFuture<>();
        AtomicReference<Object> outcome = new AtomicReference<>();
        AtomicReference<Boolean> interruptedAfter = new AtomicReference<>();
        Thread waiter = waitInThread(command, System.nanoTime() + seconds(30), outcome, interruptedAfter);

        waiter.interrupt();
        waiter.join(200);
        assertThat(waiter.isAlive()).as("an interrupt does not end the wait").isTrue();

        command.complete("OK");
        waiter.join(TimeUnit.NANOSECONDS.toMillis(SLACK_NANOS));
        assertThat(outcome.get()).isEqualTo("OK");
        assertThat(interruptedAfter.get()).as("interrupt kept for the caller").isTrue();
    }

    @Test
    void await_checkerEndedWhenIdle_newWaitStartsOne() throws Exception {
        deadlines.await(CompletableFuture.completedFuture("start the checker"), System.nanoTime() + seconds(5));
        assertThat(deadlines.checking()).isTrue();
        long until = System.nanoTime() + seconds(20);
        while (deadlines.checking() || checkerThreads() > 0) {
            assertThat(System.nanoTime() - until)
                    .as("checker ends after 1 s without waits")
                    .isNegative();
            Thread.sleep(20);
        }

        CompletableFuture<String> command = new CompletableFuture<>();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100);
        assertThatThrownBy(() -> deadlines.await(command, deadline)).isInstanceOf(TimeoutException.class);
        assertThat(System.nanoTime() - deadline).isLessThan(SLACK_NANOS);
    }

    @Test
    void await_manyThreads_eachTimesOutOnItsOwnDeadline() throws Exception {
        CompletableFuture<String> answered = new CompletableFuture<>();
        CompletableFuture<String> unanswered = new CompletableFuture<>();
        AtomicReference<Object> first = new AtomicReference<>();
        Thread waiter = waitInThread(
                answered, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300), first, new AtomicReference<>());

        assertThatThrownBy(() -> deadlines.await(unanswered, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50)))
                .isInstanceOf(TimeoutException.class);
        answered.complete("OK");
        waiter.join(TimeUnit.NANOSECONDS.toMillis(SLACK_NANOS));
        assertThat(first.get())
                .as("a later deadline is not cut short by an earlier one")
                .isEqualTo("OK");
        assertThat(answered).isNotCancelled();
    }

    @Test
    void slots_ofEndedThreads_dropped() throws Exception {
        deadlines.await(CompletableFuture.completedFuture("mine"), System.nanoTime() + seconds(5));
        Thread other = new Thread(() -> {
            try {
                deadlines.await(CompletableFuture.completedFuture("other"), System.nanoTime() + seconds(5));
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        other.start();
        other.join();
        assertThat(deadlines.slots()).isBetween(1, 2);

        // the checker drops ended threads' slots on a scan; a wait in progress keeps it scanning
        CompletableFuture<String> command = new CompletableFuture<>();
        assertThatThrownBy(() -> deadlines.await(command, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100)))
                .isInstanceOf(TimeoutException.class);
        assertThat(deadlines.slots()).as("only this thread's slot left").isEqualTo(1);
    }

    @Test
    void await_checkerEndingAndStartingOften_everyWaitStillTimesOut() throws Exception {
        // a checker that ends as soon as a scan finds no wait in progress and none begun since the last: waits keep
        // arriving while one ends, and each must still be bounded. Pauses of up to 50 ms between the waits (each
        // lasts until the checker cancels it) leave scans with nothing to do, so checkers end and start again
        // (asserted below); the narrow window between a last scan and an end is not forced.
        String name = checkerName + "-restless";
        AwaitDeadlines restless = new AwaitDeadlines(name, 0);
        int threads = 4;
        int waitsEach = 150;
        AtomicInteger timedOut = new AtomicInteger();
        List<Thread> waiters = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread waiter = new Thread(() -> {
                for (int i = 0; i < waitsEach; i++) {
                    LockSupport.parkNanos(ThreadLocalRandom.current().nextLong(TimeUnit.MILLISECONDS.toNanos(50)));
                    long deadline = System.nanoTime();
                    try {
                        restless.await(new CompletableFuture<>(), deadline);
                    } catch (TimeoutException e) {
                        if (System.nanoTime() - deadline < SLACK_NANOS) {
                            timedOut.incrementAndGet();
                        }
                    } catch (ExecutionException e) {
                        throw new AssertionError(e);
                    }
                }
            });
            waiter.setDaemon(true);
            waiter.start();
            waiters.add(waiter);
        }
        Set<Long> checkers = new HashSet<>();
        long until = System.nanoTime() + seconds(30);
        while (waiters.stream().anyMatch(Thread::isAlive) && System.nanoTime() - until < 0) {
            Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().equals(name))
                    .forEach(t -> checkers.add(t.getId()));
            Thread.sleep(2);
        }
        for (Thread waiter : waiters) {
            assertThat(waiter.isAlive()).as("every wait ended").isFalse();
        }
        assertThat(timedOut).hasValue(threads * waitsEach);
        assertThat(checkers.size())
                .as("checkers that ended and were started again")
                .isGreaterThan(2);
    }

    @Test
    void await_nestedOnSameThread_outerWaitStillTimesOut() {
        // a ForkJoinPool worker runs queued tasks inside CompletableFuture.get(): a second wait inside the first one
        CompletableFuture<String> inner = CompletableFuture.completedFuture("inner");
        AtomicReference<Object> innerOutcome = new AtomicReference<>();
        CompletableFuture<String> outer = new CompletableFuture<>() {
            @Override
            public String get() throws InterruptedException, ExecutionException {
                try {
                    innerOutcome.set(deadlines.await(inner, System.nanoTime() + seconds(5)));
                } catch (TimeoutException e) {
                    innerOutcome.set(e);
                }
                return super.get();
            }
        };
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200);

        assertThatThrownBy(() -> deadlines.await(outer, deadline)).isInstanceOf(TimeoutException.class);
        assertThat(System.nanoTime() - deadline).isLessThan(SLACK_NANOS);
        assertThat(innerOutcome.get()).isEqualTo("inner");
        assertThat(outer).isCancelled();
    }

    @Test
    void await_cancelThrows_otherWaitsStillTimeOut() throws Exception {
        // a command whose cancellation throws (a listener of the command's) must not stop the checker's scan
        List<CompletableFuture<String>> throwing = new ArrayList<>();
        List<Thread> stuck = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            CompletableFuture<String> command = new CompletableFuture<>() {
                @Override
                public boolean cancel(boolean mayInterruptIfRunning) {
                    throw new IllegalStateException("a listener failed");
                }
            };
            throwing.add(command);
            stuck.add(waitInThread(command, System.nanoTime(), new AtomicReference<>(), new AtomicReference<>()));
        }

        CompletableFuture<String> command = new CompletableFuture<>();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100);
        assertThatThrownBy(() -> deadlines.await(command, deadline)).isInstanceOf(TimeoutException.class);
        assertThat(System.nanoTime() - deadline).isLessThan(SLACK_NANOS);

        throwing.forEach(c -> c.complete("released"));
        for (Thread t : stuck) {
            t.join(TimeUnit.NANOSECONDS.toMillis(SLACK_NANOS));
        }
    }

    @Test
    void await_slowCancellation_otherWaitsStillTimeOutInTime() throws Exception {
        // a cancellation that takes longer than the slack (a user's CommandListener that a Lettuce command's cancel
        // calls, say) must not hold up the deadlines of the other waits
        CountDownLatch cancelling = new CountDownLatch(1);
        CountDownLatch releaseCancel = new CountDownLatch(1);
        AtomicInteger cancels = new AtomicInteger();
        CompletableFuture<String> slow = blockingCancel(cancelling, releaseCancel, cancels);
        AtomicReference<Object> slowOutcome = new AtomicReference<>();
        Thread slowWaiter = waitInThread(slow, System.nanoTime() + millis(50), slowOutcome, new AtomicReference<>());
        try {
            assertThat(cancelling.await(SLACK_NANOS, TimeUnit.NANOSECONDS))
                    .as("the slow command's cancellation began")
                    .isTrue();

            CompletableFuture<String> other = new CompletableFuture<>();
            long deadline = System.nanoTime() + millis(100);
            assertThatThrownBy(() -> deadlines.await(other, deadline)).isInstanceOf(TimeoutException.class);
            assertThat(System.nanoTime() - deadline)
                    .as("the other wait ended while the slow cancellation still ran")
                    .isLessThan(SLACK_NANOS);
            assertThat(other).isCancelled();
            assertThat(slow).as("the slow cancellation has not returned").isNotDone();
            assertThat(cancels.get())
                    .as("a cancellation under way is not handed off again")
                    .isEqualTo(1);
        } finally {
            releaseCancel.countDown();
            slowWaiter.join(TimeUnit.NANOSECONDS.toMillis(SLACK_NANOS));
        }
        assertThat(slowOutcome.get()).isInstanceOf(TimeoutException.class);
        assertThat(slow).isCancelled();
    }

    @Test
    void await_inCancellationCallback_boundedAndCheckerGoesOn() throws Exception {
        // a callback that a cancellation runs (on a thread cancelling for the checker), and that waits itself, must not
        // stop the checker
        CompletableFuture<String> first = new CompletableFuture<>();
        AtomicReference<Object> callbackOutcome = new AtomicReference<>();
        first.whenComplete((v, e) -> callbackOutcome.set(waitOutcome(new CompletableFuture<>(), millis(50))));
        assertThatThrownBy(() -> deadlines.await(first, System.nanoTime())).isInstanceOf(TimeoutException.class);

        assertLaterWaitStillTimesOut();
        assertThat(awaitSet(callbackOutcome)).isInstanceOf(TimeoutException.class);
    }

    @Test
    void await_allCancellersBusy_checkerCancelsItselfAndGoesOn() throws Exception {
        // with every canceller thread stuck in a cancellation, the checker cancels on its own thread, as it did before
        // it had them; a callback that this runs there and that waits itself is bounded and does not stop the checker
        CountDownLatch release = new CountDownLatch(1);
        List<Thread> stuck = occupyCancellers(release);
        try {
            CompletableFuture<String> first = new CompletableFuture<>();
            AtomicReference<Object> callbackOutcome = new AtomicReference<>();
            AtomicReference<Thread> callbackThread = new AtomicReference<>();
            first.whenComplete((v, e) -> {
                callbackThread.set(Thread.currentThread());
                callbackOutcome.set(waitOutcome(new CompletableFuture<>(), millis(50)));
            });
            assertThatThrownBy(() -> deadlines.await(first, System.nanoTime())).isInstanceOf(TimeoutException.class);

            assertLaterWaitStillTimesOut();
            assertThat(awaitSet(callbackOutcome)).isInstanceOf(TimeoutException.class);
            // the callback ran where the cancellation ran (the checker), or on the woken waiter that helped complete
            assertThat(Objects.requireNonNull(callbackThread.get()).getName())
                    .isIn(checkerName, Thread.currentThread().getName());
        } finally {
            release.countDown();
            for (Thread t : stuck) {
                t.join(TimeUnit.NANOSECONDS.toMillis(SLACK_NANOS));
            }
        }
    }

    @Test
    void slots_ofIdleLiveThreads_forgottenAndTakenBackOnNextWait() throws Exception {
        AwaitDeadlines quick = new AwaitDeadlines(checkerName + "-quick", TimeUnit.MILLISECONDS.toNanos(100));
        CountDownLatch goOn = new CountDownLatch(1);
        AtomicReference<Object> laterOutcome = new AtomicReference<>();
        Thread idle = new Thread(() -> {
            try {
                quick.await(CompletableFuture.completedFuture("once"), System.nanoTime() + seconds(5));
                goOn.await();
                laterOutcome.set(
                        quick.await(new CompletableFuture<>(), System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50)));
            } catch (Exception e) {
                laterOutcome.set(e);
            }
        });
        idle.start();
        // keep the checker scanning with waits of this thread's for longer than the idle time
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(600);
        while (System.nanoTime() - until < 0) {
            CompletableFuture<String> answered = new CompletableFuture<>();
            CompletableFuture.delayedExecutor(20, TimeUnit.MILLISECONDS).execute(() -> answered.complete("OK"));
            quick.await(answered, System.nanoTime() + seconds(5));
        }
        assertThat(idle.isAlive()).isTrue();
        assertThat(quick.slots())
                .as("the idle thread's slot is no longer looked at")
                .isEqualTo(1);

        goOn.countDown();
        idle.join(TimeUnit.NANOSECONDS.toMillis(SLACK_NANOS) + 100);
        assertThat(laterOutcome.get()).as("its next wait is bounded again").isInstanceOf(TimeoutException.class);
    }

    @Test
    void shortWaitsBetweenScans_keepTheCheckerAndTheSlot() throws Exception {
        // waits that are over before any scan sees them in progress (answered at once), one every 5 ms for ten times
        // the idle time: they are activity, so the checker goes on and the thread's slot stays looked at. A checker
        // that counted only the waits it caught in progress ended about every 200 ms (9-10 checkers in 2 s), and each
        // next wait started another, on the waiting thread. Slack for a loaded machine: a pause as long as the idle
        // time may still end one
        String name = checkerName + "-short";
        AwaitDeadlines quick = new AwaitDeadlines(name, TimeUnit.MILLISECONDS.toNanos(200));
        Set<Long> checkers = new HashSet<>();
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2000);
        int forgotten = 0;
        assertThat(quick.await(CompletableFuture.completedFuture("OK"), System.nanoTime() + seconds(5)))
                .isEqualTo("OK");
        while (System.nanoTime() - until < 0) {
            Thread.sleep(5);
            if (quick.slots() == 0) { // looked at before the next wait, which puts a forgotten slot back
                forgotten++;
            }
            Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().equals(name))
                    .forEach(t -> checkers.add(t.getId()));
            assertThat(quick.await(CompletableFuture.completedFuture("OK"), System.nanoTime() + seconds(5)))
                    .isEqualTo("OK");
        }
        assertThat(checkers).as("checker threads seen").hasSizeBetween(1, 3);
        assertThat(forgotten)
                .as("looks at which the waiting thread's slot was forgotten")
                .isLessThanOrEqualTo(2);
    }

    @Test
    void checker_diesOfError_anotherTakesOverTheWaits() throws Exception {
        // every canceller busy, so that the checker cancels on its own thread and the Error reaches it
        CountDownLatch release = new CountDownLatch(1);
        List<Thread> occupied = occupyCancellers(release);
        AtomicInteger cancels = new AtomicInteger();
        AtomicReference<String> thrownOn = new AtomicReference<>();
        CompletableFuture<String> poison = new CompletableFuture<>() {
            @Override
            public boolean cancel(boolean mayInterruptIfRunning) {
                if (cancels.incrementAndGet() == 1) {
                    thrownOn.set(Thread.currentThread().getName());
                    throw new AssertionError("an Error in a callback of the command's"); // not caught by the scan
                }
                return super.cancel(mayInterruptIfRunning);
            }
        };
        AtomicReference<Object> poisonOutcome = new AtomicReference<>();
        Thread poisoned = new Thread(() -> {
            try {
                poisonOutcome.set(deadlines.await(poison, System.nanoTime()));
            } catch (Exception e) {
                poisonOutcome.set(e);
            }
        });
        poisoned.start();

        CompletableFuture<String> command = new CompletableFuture<>();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100);
        assertThatThrownBy(() -> deadlines.await(command, deadline)).isInstanceOf(TimeoutException.class);
        assertThat(System.nanoTime() - deadline).isLessThan(SLACK_NANOS);
        poisoned.join(TimeUnit.NANOSECONDS.toMillis(SLACK_NANOS));
        assertThat(poisonOutcome.get()).isInstanceOf(TimeoutException.class);
        assertThat(thrownOn.get()).as("the Error reached the checker").isEqualTo(checkerName);
        assertThat(cancels.get()).as("the successor sent the command again").isGreaterThanOrEqualTo(2);
        release.countDown();
        for (Thread t : occupied) {
            t.join(TimeUnit.NANOSECONDS.toMillis(SLACK_NANOS));
        }
    }

    @Test
    void checker_inheritsNoThreadLocalsOfTheThreadThatStartedIt() {
        InheritableThreadLocal<String> callerState = new InheritableThreadLocal<>();
        callerState.set("the first caller's");
        AtomicReference<String> seenByChecker = new AtomicReference<>("not cancelled");
        CompletableFuture<String> command = new CompletableFuture<>() {
            @Override
            public boolean cancel(boolean mayInterruptIfRunning) {
                seenByChecker.set(String.valueOf(callerState.get())); // on a canceller thread, started by the checker
                return super.cancel(mayInterruptIfRunning);
            }
        };
        assertThatThrownBy(() -> deadlines.await(command, System.nanoTime())).isInstanceOf(TimeoutException.class);
        assertThat(seenByChecker.get()).isEqualTo("null");
    }

    private long checkerThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals(checkerName))
                .count();
    }

    private static long seconds(long n) {
        return Duration.ofSeconds(n).toNanos();
    }

    /**
     * A thread that awaits {@code command} and puts its answer or exception in {@code outcome} and whether it was
     * interrupted afterwards in {@code interruptedAfter}; returned once it is parked in its wait.
     */
    /** A later wait on this test's checker still ends by its deadline (plus slack). */
    private void assertLaterWaitStillTimesOut() throws InterruptedException {
        CompletableFuture<String> second = new CompletableFuture<>();
        long deadline = System.nanoTime() + millis(100);
        AtomicReference<Object> secondOutcome = new AtomicReference<>();
        Thread waiter = waitInThread(second, deadline, secondOutcome, new AtomicReference<>());
        waiter.join(TimeUnit.NANOSECONDS.toMillis(SLACK_NANOS) + 100);
        assertThat(secondOutcome.get()).as("a later wait still ends").isInstanceOf(TimeoutException.class);
    }

    /** The answer of a wait of {@code nanos} for {@code command}, or what it threw. */
    private Object waitOutcome(CompletableFuture<?> command, long nanos) {
        try {
            return deadlines.await(command, System.nanoTime() + nanos);
        } catch (Exception e) {
            return e;
        }
    }

    /** The value {@code ref} is set to within the slack. */
    private static Object awaitSet(AtomicReference<Object> ref) throws InterruptedException {
        long until = System.nanoTime() + SLACK_NANOS;
        while (ref.get() == null) {
            assertThat(System.nanoTime() - until).as("set in time").isNegative();
            Thread.sleep(5);
        }
        return ref.get();
    }

    /**
     * A command whose cancel blocks (counting {@code cancelling} down, and {@code cancels} up) until {@code release},
     * then cancels it.
     */
    private static CompletableFuture<String> blockingCancel(
            CountDownLatch cancelling, CountDownLatch release, AtomicInteger cancels) {
        return new CompletableFuture<>() {
            @Override
            public boolean cancel(boolean mayInterruptIfRunning) {
                cancels.incrementAndGet();
                cancelling.countDown();
                try {
                    release.await(SLACK_NANOS * 3, TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return super.cancel(mayInterruptIfRunning);
            }
        };
    }

    /** Every canceller thread stuck in a cancellation until {@code release}; the threads of the waits behind them. */
    private List<Thread> occupyCancellers(CountDownLatch release) throws InterruptedException {
        CountDownLatch cancelling = new CountDownLatch(AwaitDeadlines.CANCELLERS);
        List<Thread> waiters = new ArrayList<>();
        for (int i = 0; i < AwaitDeadlines.CANCELLERS; i++) {
            CompletableFuture<String> blocked = blockingCancel(cancelling, release, new AtomicInteger());
            waiters.add(waitInThread(
                    blocked, System.nanoTime() + millis(50), new AtomicReference<>(), new AtomicReference<>()));
        }
        assertThat(cancelling.await(SLACK_NANOS, TimeUnit.NANOSECONDS))
                .as("every canceller busy")
                .isTrue();
        return waiters;
    }

    private static long millis(long n) {
        return TimeUnit.MILLISECONDS.toNanos(n);
    }

    private Thread waitInThread(
            CompletableFuture<?> command,
            long deadline,
            AtomicReference<Object> outcome,
            AtomicReference<Boolean> interruptedAfter)
            throws InterruptedException {
        Thread waiter = new Thread(() -> {
            try {
                outcome.set(deadlines.await(command, deadline));
            } catch (Exception e) {
                outcome.set(e);
            }
            interruptedAfter.set(Thread.currentThread().isInterrupted());
        });
        waiter.start();
        awaitWaiting(waiter);
        return waiter;
    }

    /** Until {@code waiter} is parked in its wait. */
    private static void awaitWaiting(Thread waiter) throws InterruptedException {
        long until = System.nanoTime() + seconds(10);
        while (waiter.getState() != Thread.State.WAITING) {
            assertThat(System.nanoTime() - until).as("waiter parks").isNegative();
            Thread.sleep(5);
        }
    }
}
