package io.distlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The contract across OS processes: child JVMs with their own clients contend for one lock through the store, and a
 * process that dies does not hold up the others. Needs {@link BackendUnderTest#childClient()}.
 */
public interface MultiProcessContract extends BackendUnderTest {

    /** How long a store may take to evict the queue entry of a waiter whose process died. */
    default Duration deadWaiterEviction() {
        return Duration.ofSeconds(10);
    }

    private ChildClient child() {
        return childClient().orElseThrow(() -> new AssertionError("MultiProcessContract needs childClient()"));
    }

    @Test
    default void counter_twoProcessesFourThreadsEach_noLostIncrements() throws Exception {
        ChildClient child = child();
        String name = uniqueName();
        Path file = Files.createTempFile("distlock-counter", ".txt");
        try {
            List<ChildProcess> processes = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                processes.add(ChildProcess.start(
                        "counter", child.factory().getName(), child.argument(), name, file.toString(), "3000", "4"));
            }
            long total = 0;
            for (ChildProcess p : processes) {
                try (p) {
                    int exit = p.waitFor(Timing.seconds(60));
                    assertThat(exit).as("child exit; output %s", p.lines()).isZero();
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
            assertThat(state.acceptedWrites()).isEqualTo(total);
            assertThat(state.value()).as("no lost increments").isEqualTo(total);
        } finally {
            Files.deleteIfExists(file);
        }
    }

    @Test
    default void fairLock_waiterProcessDies_doesNotBlockTheQueue() throws Exception {
        ChildClient child = child();
        String name = uniqueName();
        DistributedLock holder = newClient().fairLock(name);
        holder.lock();
        try (ChildProcess p = ChildProcess.start("wait", child.factory().getName(), child.argument(), name)) {
            p.awaitLine("WAITING", Timing.seconds(30));
            Timing.sleep(Duration.ofMillis(1500)); // queued in the store by now
            p.kill();
        }
        holder.unlock();
        DistributedLock later = newClient().fairLock(name);
        long bound = Timing.scaled(deadWaiterEviction()).plusSeconds(5).toMillis();
        assertThat(later.tryLock(bound, TimeUnit.MILLISECONDS)).isTrue();
        later.unlock();
        Eventually.within(Timing.scaled(deadWaiterEviction()), "queue drained", () -> residue(name)
                .isEmpty());
    }
}
