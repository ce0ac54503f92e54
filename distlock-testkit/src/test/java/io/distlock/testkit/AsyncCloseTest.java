package io.distlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedLock;
import io.distlock.LockClient;
import io.distlock.LockHold;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Timeout;

/**
 * A client closed while its asynchronous waiters are being handed the lock: each waiter's future ends, either with
 * the hold (released by the close) or with the client's closed exception, and nothing is left in the store.
 */
@Timeout(30)
class AsyncCloseTest {

    @RepeatedTest(10)
    void close_whileAReleaseHandsTheLockToAsyncWaiters_endsEveryWaitCleanly() throws Exception {
        InMemoryLockServer server = InMemoryLockServer.create();
        LockClient client = server.newClient();
        DistributedLock lock = client.lock("l");
        LockHold first = lock.acquire();
        List<CompletableFuture<LockHold>> waits = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            waits.add(lock.acquireAsync());
        }
        Thread.sleep(20);
        CompletableFuture<Void> release = CompletableFuture.runAsync(first::release);
        client.close();
        release.handle((v, e) -> null).get(5, TimeUnit.SECONDS);
        for (CompletableFuture<LockHold> w : waits) {
            Throwable failure = null;
            try {
                w.get(5, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                failure = e.getCause();
            }
            if (failure != null) {
                assertThat(failure)
                        .as("a wait the close ended")
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("closed");
            }
        }
        Eventually.within(java.time.Duration.ofSeconds(5), "nothing left", () -> server.residue("l")
                .isEmpty());
        server.close();
    }
}
