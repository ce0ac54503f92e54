package io.distlock.spi;

import java.time.Duration;
import java.util.Collection;
import java.util.Set;

/**
 * The atomic steps a store performs for holds with a mode and a number of permits: locks, read-write locks and
 * semaphores (see {@link Claim}). This is the one store interface for holds; a store says which kinds it keeps in
 * {@link #kinds()}, and the engine never sends it a claim of another kind.
 *
 * <h2>Round trips</h2>
 * Each method is one round trip (or as few as the store allows) that never waits for another owner; waiting,
 * re-entry, the watchdog, owner identity and argument checks are the engine's, which calls these methods with valid
 * arguments only. The store sees one hold per owner and mode: re-entry is counted in the client.
 *
 * <h2>Failures, threads, interrupts</h2>
 * Every method throws an unchecked exception ({@link io.distlock.DistributedLockException} or the client library's
 * own) when the store cannot be reached; the engine wraps it with the operation and name. Implementations are
 * thread-safe: one store instance serves every name and thread of a client. A step may be called on an interrupted
 * thread (a waiter that is being interrupted); it must still complete, or fail with an exception, and leave the
 * interrupt flag set.
 *
 * <h2>Queue</h2>
 * A claim that may wait joins the name's queue ({@code queue} true), so grants follow request order across clients
 * and a waiting writer holds back readers that come after it. A queue entry lives until the owner is granted, the
 * engine calls {@link #abandon}, or it goes unrefreshed (no new attempt) for longer than the store's waiter timeout,
 * so a waiter that died is evicted. A store whose holds are queue positions by construction (ZooKeeper, etcd) is
 * {@link QueueOrdered}.
 *
 * <h2>Abilities</h2>
 * What a store can do beyond these steps it says by implementing interfaces the engine discovers once: {@link
 * HandsOff}, {@link GrantsWithWakeUp}, {@link ReportsLoss}, {@link FreeSubscriptions}, {@link QueueOrdered}, {@link
 * SessionHolds}, {@link WakesOwners}, {@link AcquiresTogether}; {@link ClaimAdmin} for the operator's steps and {@link CounterStore} for count-down latches.
 */
public interface ClaimStore extends AutoCloseable {

    /** The kinds of name this store keeps. */
    Set<Claim.Kind> kinds();

    /**
     * Why this store does not offer {@code primitives} (for example "read-write locks", not in {@link #kinds()}), as
     * the message of the {@link UnsupportedOperationException} the engine throws; a store whose configuration decides
     * it says which configuration would serve them.
     */
    default String unsupported(String primitives) {
        return primitives + " are not available on this backend yet ("
                + getClass().getSimpleName() + ")";
    }

    /**
     * Grants {@code claim} if it is compatible with the live holds and the waiters queued before it (see {@link
     * Claim}). With {@code queue} true, the owner joins the queue (or refreshes its place) when it is not granted.
     * With {@code queue} false, a failed attempt leaves nothing behind. A store whose holds last a
     * session ({@link SessionHolds}) may ignore the lease's length: the engine ends a fixed-lease hold itself.
     *
     * @return {@link Attempt.Acquired} with a fencing token strictly greater than every token issued before for the
     *     name; {@link Attempt.Busy} with how long the client may wait for a wake-up before it tries again (the time
     *     until the first blocking hold expires, or the waiter refresh interval, whichever is less)
     * @throws IllegalStateException if the name is in use as another kind, or as a semaphore of another size
     */
    Attempt tryAcquire(Claim claim, boolean queue);

    /**
     * The owner gave up waiting: removes its queue entry, and a hold of the claim's mode that the store granted it but
     * the engine never saw. A no-op when there is nothing of the owner's.
     */
    void abandon(Claim claim);

    /**
     * Ends the hold, owner-checked.
     *
     * @return true if the owner had the hold and now does not; false if it was gone (expired, removed), nothing changed
     */
    boolean release(HeldClaim hold);

    /**
     * Extends every given hold its owner still has to {@code lease} from now, in as few round trips as the store
     * allows. Never extends another owner's hold, never recreates a missing one.
     *
     * @return the holds that are gone; the rest were renewed
     */
    Set<HeldClaim> renew(Collection<HeldClaim> holds, Duration lease);

    /**
     * Registers {@code wakeUp} to run when a claim of the name may have become grantable (a release, an abandon, a
     * queue change, a hold that ended). In force when this method returns, so an attempt made after it cannot miss a
     * wake-up; runs on the store's I/O thread and must not block.
     */
    Subscription subscribe(LockKey key, Runnable wakeUp);

    /**
     * How many of the name's {@code size} permits no live hold has now; {@code size} when the name has no holds (for
     * a lock: 1 when it is free, 0 when it is held).
     *
     * @throws IllegalStateException if the name is in use as another kind, or as a semaphore of another size
     */
    int available(LockKey key, Claim.Kind kind, int size);

    /** Closes the connections this store opened (not those it was given). Idempotent. */
    @Override
    void close();
}
