package io.distlock.spi;

import io.distlock.LockInfo;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The atomic steps a store performs for an exclusive lock. Each method is a single round trip (or as few as the store
 * allows) that never waits for another owner; waiting, re-entry, lease renewal, owner identity and argument checks are
 * done by the core, which calls these methods with valid arguments only.
 *
 * <p>The store sees one hold per owner: re-entry is counted in the client. Every method throws an unchecked
 * exception ({@link io.distlock.DistributedLockException} or the client library's own) when the store cannot be
 * reached; the core wraps it with the operation and lock name.
 *
 * <p>Implementations must be thread-safe: one store instance serves every lock and thread of a client.
 *
 * <p>What a store can do beyond these steps it says by implementing the ability interfaces, which the engine
 * discovers once: {@link HandsOff}, {@link GrantsWithWakeUp}, {@link ReportsLoss}, {@link FreeSubscriptions}, and
 * the properties {@link QueueOrdered} (holds are queue positions) and {@link SessionHolds} (no lease of the store's
 * own).
 *
 * <p>A step may be called on an interrupted thread (a waiter that is being interrupted). It must still complete, or
 * fail with an exception, and leave the interrupt flag set; the core decides what the interrupt means.
 */
public interface LockStore extends AutoCloseable {

    /**
     * Takes the lock for {@code owner} if nobody holds it.
     *
     * <p>With {@code queue} false, the attempt leaves nothing behind when it fails (a non-fair try). With {@code
     * queue} true, the owner joins the name's queue if it is not in it yet, and is granted the lock only when it is at
     * the head; the entry stays until the owner acquires or the core calls {@link #abandon}, or until it goes
     * unrefreshed for longer than the store's waiter timeout (so a waiter that died is evicted). A store whose holds
     * are queue positions by construction (ZooKeeper, etcd) is {@link QueueOrdered}.
     *
     * <p>The fencing token of a grant is strictly greater than every token the store issued before for this name.
     *
     * @param lease how long the hold lasts, and whether the watchdog renews it; its length is ignored by stores whose
     *     holds last a session
     */
    Attempt tryAcquire(LockKey key, OwnerId owner, Lease lease, boolean queue);

    /**
     * The owner gave up waiting (timeout, interrupt, cancellation): removes its queue entry, and also a hold that
     * the store granted it but the core never saw, so no grant is left that nobody owns. Owner-checked; a no-op when
     * there is nothing of the owner's.
     */
    void abandon(LockKey key, OwnerId owner);

    /**
     * Ends the owner's hold.
     *
     * @return true if the owner held the lock and now does not; false if it did not hold it (expired, taken over,
     *     removed), in which case nothing was changed
     */
    boolean release(LockKey key, OwnerId owner);

    /**
     * Extends every given hold that its owner still has to {@code lease} from now, in as few round trips as the store
     * allows (one per node for a whole batch is the target). Owner-checked: never extends a hold of another owner,
     * never recreates a missing one.
     *
     * @return the holds that are gone (the owner no longer holds them); the rest were renewed
     */
    Set<HeldLock> renew(Collection<HeldLock> holds, Duration lease);

    /**
     * Registers {@code wakeUp} to be called when the lock with this name may have become free (released, expired,
     * queue moved). The registration is in force when this method returns, so an attempt made after it cannot miss a
     * release. The wake-up runs on the store's I/O thread and must not block. The core keeps at most one subscription
     * per name per client.
     */
    Subscription subscribe(LockKey key, Runnable wakeUp);

    /** The current hold of a lock, if any. */
    Optional<LockInfo> inspect(LockKey key);

    /** The current holds whose names start with {@code prefix}, at most {@code limit} of them. */
    List<LockInfo> list(String prefix, int limit);

    /** Removes the current hold whoever owns it; see {@link io.distlock.LockAdmin#forceUnlock}. */
    Optional<LockInfo> forceRelease(LockKey key);

    /** Closes the connections this store opened (not those it was given). Idempotent. */
    @Override
    void close();
}
