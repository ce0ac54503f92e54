package io.distlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockHold;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The builder's {@code asyncExecutor}: where futures complete, and who owns its lifecycle. */
class InMemoryAsyncExecutorTest {

    @Test
    void asyncExecutor_given_completesFuturesOnIt_andIsLeftRunningAfterClose() throws Exception {
        ExecutorService given = Executors.newFixedThreadPool(2, r -> new Thread(r, "users-executor"));
        try {
            InMemoryLockServer server = InMemoryLockServer.create();
            LockHold held;
            try (InMemoryLockClient holder =
                            InMemoryLockClient.builder().server(server).build();
                    InMemoryLockClient waiter = InMemoryLockClient.builder()
                            .server(server)
                            .asyncExecutor(given)
                            .build()) {
                held = holder.lock("k").acquire();
                AtomicReference<String> thread = new AtomicReference<>();
                CompletableFuture<LockHold> seen = waiter.lock("k")
                        .acquireAsync()
                        .thenApply(h -> {
                            thread.set(Thread.currentThread().getName());
                            return h;
                        });
                Timing.sleep(Duration.ofMillis(100));
                assertThat(seen).isNotDone();
                held.release();
                LockHold h = seen.get(10, TimeUnit.SECONDS);
                assertThat(thread.get()).isEqualTo("users-executor");
                h.releaseAsync().get(10, TimeUnit.SECONDS);
            }
            assertThat(given.isShutdown())
                    .as("a given executor is the caller's to shut down")
                    .isFalse();
            assertThat(given.submit(() -> "still runs").get(10, TimeUnit.SECONDS))
                    .isEqualTo("still runs");
        } finally {
            given.shutdownNow();
        }
    }

    @Test
    @SuppressWarnings("NullAway") // passing null on purpose
    void asyncExecutor_null_throwsNullPointer_namingTheArgument() {
        assertThatThrownBy(() -> InMemoryLockClient.builder().asyncExecutor(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("asyncExecutor");
    }
}
