package io.distlock.testkit;

import io.distlock.internal.EngineClient;
import io.distlock.internal.EngineConfig;
import io.distlock.internal.LockEngine;
import io.distlock.spi.ClaimStore;
import io.distlock.spi.CounterStore;
import java.time.Duration;
import java.util.function.Function;

/**
 * In-memory clients whose read-write locks, semaphores and latches run over a decorated store: a broken variant, or
 * the standard store with lost replies. Locks keep the standard in-memory store.
 */
final class SyncStoreClients {
    private SyncStoreClients() {}

    static EngineClient client(
            InMemoryLockServer server,
            Duration watchdogLease,
            boolean strictQueue,
            Function<InMemorySyncStore, ClaimStore> claims,
            Function<InMemorySyncStore, CounterStore> counters) {
        InMemorySyncStore sync = new InMemorySyncStore(server);
        EngineConfig config = EngineConfig.defaults().withWatchdogLease(watchdogLease);
        return new DecoratedClient(LockEngine.create(
                InMemoryLockStore.of(server, strictQueue), claims.apply(sync), counters.apply(sync), config));
    }

    /** A client over the standard stores whose count-downs lose their first reply. */
    static EngineClient losingCountDownReplies(InMemoryLockServer server, Duration watchdogLease, boolean strict) {
        return client(server, watchdogLease, strict, s -> s, LosingCountDownReplies::new);
    }

    private static final class DecoratedClient extends EngineClient {
        DecoratedClient(LockEngine engine) {
            super(engine);
        }
    }
}
