package io.distlock.spi;

import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * A {@link ClaimStore} whose wake-ups for a read-write lock or semaphore name the waiting owners that can pass now
 * (Redis: a release walks the name's queue as the grants would go and names the owners it reaches). The engine
 * subscribes its claim waiters through it instead of {@link ClaimStore#subscribe}, wakes only the waiters a wake-up
 * names, and does not wake its waiters after a release the store confirmed, since that release's own wake-up names
 * who passes. So a release costs one attempt per waiter it lets pass, not one per waiter of the client.
 */
public interface WakesOwners {

    /**
     * As {@link ClaimStore#subscribe}; {@code wakeUp} gets, for each wake-up, which owners it is for. After a
     * re-subscription, when wake-ups may have been missed, the store passes a predicate that accepts every owner.
     * Runs on the store's I/O thread and must not block.
     */
    Subscription subscribe(LockKey key, Consumer<Predicate<OwnerId>> wakeUp);
}
