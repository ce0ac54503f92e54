package io.distlock.internal;

import io.distlock.spi.OwnerId;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * How many acquires and latch awaits of one client may wait at once. An acquire that may wait counts from its start
 * to its return; one over the limit is refused before it sends anything to the store.
 */
final class WaiterLimit {
    private final int max;
    private final String clientId;
    private final AtomicInteger waiting = new AtomicInteger();

    WaiterLimit(int max, String clientId) {
        this.max = max;
        this.clientId = clientId;
    }

    /**
     * Counts one more waiter, or throws when {@code max} wait already, naming {@code what} (made only then). Pair with
     * {@link #exit()}.
     */
    void enter(Supplier<String> what) {
        if (waiting.incrementAndGet() > max) {
            waiting.decrementAndGet();
            throw new RejectedExecutionException("lock client " + OwnerId.redact(clientId) + " already has " + max
                    + " acquires and awaits waiting (maxWaiters); refused " + what.get());
        }
    }

    void exit() {
        waiting.decrementAndGet();
    }
}
