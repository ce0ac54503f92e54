package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** No server: the futures stand for commands that are answered, fail, or never get an answer. */
@Timeout(60) // a checker that never ends a wait would otherwise hang the build
class AwaitDeadlinesTest {
    private static final long SLACK_NANOS = TimeUnit.SECONDS.toNanos(2); // a loaded CI machine, not the 10 ms period

    private final AwaitDeadlines deadlines = new AwaitDeadlines("test-deadlines");

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
        Thread waiter = new Thread(() -> {
            try {
                outcome.set(deadlines.await(command, System.nanoTime() + seconds(30)));
            } catch (Exception e) {
                outcome.set(e);
            }
            interruptedAfter.set(Thread.currentThread().isInterrupted());
        });
        waiter.start();
        awaitWaiting(waiter);

        waiter.interrupt();
        waiter.join(200);
        assertThat(waiter.isAlive()).as("an interrupt does not end the wait").isTrue();

        command.complete("OK");
        waiter.join(TimeUnit.NANOSECONDS.toMillis(SLACK_NANOS));
        assertThat(outcome.get()).isEqualTo("OK");
        assertThat(interruptedAfter.get()).as("interrupt kept for the caller").isTrue();
    }

    @Test
    void await_checkerIdle_wakesForNewWait() throws Exception {
        deadlines.await(CompletableFuture.completedFuture("start the checker"), System.nanoTime() + seconds(5));
        long until = System.nanoTime() + seconds(20);
        while (!deadlines.idle()) {
            assertThat(System.nanoTime() - until)
                    .as("checker goes idle after 1 s without waits")
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
        Thread waiter = new Thread(() -> {
            try {
                first.set(deadlines.await(answered, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300)));
            } catch (Exception e) {
                first.set(e);
            }
        });
        waiter.start();
        awaitWaiting(waiter);

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

    private static long seconds(long n) {
        return Duration.ofSeconds(n).toNanos();
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
