package io.distlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedCountDownLatch;
import io.distlock.DistributedLock;
import io.distlock.DistributedSemaphore;
import io.distlock.LockClient;
import io.distlock.LockInfo;
import io.distlock.PermitHold;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The read-write lock, semaphore and latch contracts across OS processes: child JVMs with clients of their own hold
 * permits and read locks and are killed as a crash would end them (their holds come back within one lease), write
 * locks fence a counter shared by processes, and a latch's zero crosses processes. Needs {@link
 * BackendUnderTest#childClient()}.
 */
public interface MultiProcessSynchronizerContract extends BackendUnderTest {

    /**
     * How long the holds of a killed child JVM may outlive it: the watchdog lease of the child's client (its factory's;
     * 30 s by default) or the store's session timeout, plus the store's slack.
     */
    default Duration childHoldRelease() {
        return Duration.ofSeconds(35);
    }

    /** How long a waiter in one process may take to learn that another process opened the latch. */
    default Duration crossProcessWakeUp() {
        return Duration.ofSeconds(5);
    }

    private ChildClient child() {
        return childClient()
                .orElseThrow(() -> new AssertionError("MultiProcessSynchronizerContract needs childClient()"));
    }

    private ChildProcess start(String mode, String name, String... more) {
        ChildClient c = child();
        List<String> args = new ArrayList<>(List.of(mode, c.factory().getName(), c.argument(), name));
        args.addAll(List.of(more));
        return ChildProcess.start(args.toArray(String[]::new));
    }

    @Test
    default void semaphore_holderProcessKilled_permitsComeBackWithinOneLease() throws Exception {
        String name = uniqueName();
        DistributedSemaphore s = newClient().semaphore(name, 3);
        try (ChildProcess p = start("permits", name, "3", "2")) {
            p.awaitLine("HELD", Timing.seconds(30));
            assertThat(s.availablePermits())
                    .as("permits left while the child holds two")
                    .isEqualTo(1);
            assertThat(s.tryAcquire(2)).isEmpty();
            p.kill();
        }
        Optional<PermitHold> all = s.tryAcquire(3, Timing.scaled(childHoldRelease()));
        assertThat(all).as("every permit within one lease of the kill").isPresent();
        all.orElseThrow().release();
        Eventually.within(Timing.seconds(5), "nothing left: " + residue(name), () -> residue(name)
                .isEmpty());
    }

    /** The killed reader's hold ends by its own lease while a reader of this process keeps renewing its own. */
    @Test
    default void readLock_readerProcessKilled_holdEndsWithinOneLease_whileAnotherReaderRenews() throws Exception {
        String name = uniqueName();
        LockClient parent = newClient(Duration.ofSeconds(2));
        DistributedLock reader = parent.readWriteLock(name).readLock();
        reader.lock();
        try (ChildProcess p = start("read", name)) {
            p.awaitLine("HELD", Timing.seconds(30));
            assertThat(holders(parent, name)).as("two readers").isEqualTo(2);
            p.kill();
        }
        Eventually.within(
                Timing.scaled(childHoldRelease()), "the killed reader's hold ended", () -> holders(parent, name) == 1);
        assertThat(reader.isHeldByCurrentThread()).as("the renewed reader").isTrue();
        DistributedLock writer = newClient().readWriteLock(name).writeLock();
        assertThat(writer.tryLock())
                .as("a writer while the renewed reader holds")
                .isFalse();
        reader.unlock();
        assertThat(writer.tryLock())
                .as("a writer at once after the last live reader")
                .isTrue();
        writer.unlock();
    }

    @Test
    default void writeLock_counterAcrossTwoProcesses_noLostIncrements() throws Exception {
        String name = uniqueName();
        Path file = Files.createTempFile("distlock-write-counter", ".txt");
        try {
            List<ChildProcess> processes = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                processes.add(start("write-counter", name, file.toString(), "3000", "3"));
            }
            long total = 0;
            for (ChildProcess p : processes) {
                try (p) {
                    assertThat(p.waitFor(Timing.seconds(60)))
                            .as("child exit; output %s", p.lines())
                            .isZero();
                    String result = p.lines().stream()
                            .filter(l -> l.startsWith("RESULT "))
                            .findFirst()
                            .orElseThrow(() -> new AssertionError("no RESULT from child: " + p.lines()));
                    long increments = Long.parseLong(result.substring(7).trim());
                    assertThat(increments).as("increments of one process").isPositive();
                    total += increments;
                }
            }
            FileFencedCounter.State state = new FileFencedCounter(file).state();
            assertThat(state.rejected()).as("stale tokens").isZero();
            assertThat(state.value()).as("no lost increments").isEqualTo(total);
        } finally {
            Files.deleteIfExists(file);
        }
    }

    @Test
    default void latch_openedInAnotherProcess_wakesWaiterHere() throws Exception {
        String name = uniqueName();
        DistributedCountDownLatch latch = newClient().countDownLatch(name);
        assertThat(latch.trySetCount(1)).isTrue();
        AtomicBoolean opened = new AtomicBoolean();
        Thread waiter = new Thread(() -> {
            try {
                opened.set(latch.await(Timing.seconds(60)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        waiter.start();
        try (ChildProcess p = start("count-down", name)) {
            assertThat(p.waitFor(Timing.seconds(30)))
                    .as("child exit; output %s", p.lines())
                    .isZero();
            assertThat(p.lines()).contains("COUNTED");
        }
        waiter.join(Timing.scaled(crossProcessWakeUp()).toMillis());
        assertThat(opened.get())
                .as("woken within %s of the other process's count-down", crossProcessWakeUp())
                .isTrue();
    }

    @Test
    default void latch_openedHere_wakesWaiterInAnotherProcess() throws Exception {
        String name = uniqueName();
        DistributedCountDownLatch latch = newClient().countDownLatch(name);
        assertThat(latch.trySetCount(1)).isTrue();
        try (ChildProcess p = start("await", name)) {
            p.awaitLine("WAITING", Timing.seconds(30));
            Timing.sleep(Duration.ofMillis(500)); // the child waits in the store by now
            assertThat(p.lines()).doesNotContain("OPENED");
            latch.countDown();
            p.awaitLine("OPENED", Timing.scaled(crossProcessWakeUp()));
            assertThat(p.waitFor(Timing.seconds(10))).isZero();
        }
    }

    private static int holders(LockClient client, String name) {
        return client.admin()
                .inspect(name)
                .map(LockInfo::holders)
                .map(List::size)
                .orElse(0);
    }
}
