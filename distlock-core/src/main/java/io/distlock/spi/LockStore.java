package io.distlock.spi;

import io.distlock.LockInfo;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

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
     * are queue positions by construction (ZooKeeper, etcd) reports {@link Traits#queuesEveryWaiter()}.
     *
     * <p>The fencing token of a grant is strictly greater than every token the store issued before for this name.
     *
     * @param lease how long the hold lasts unless renewed; ignored by stores whose holds last a session
     */
    Attempt tryAcquire(LockKey key, OwnerId owner, Duration lease, boolean queue);

    /**
     * The owner gave up waiting (timeout, interrupt, cancellation): removes its queue entry, and also a hold that
     * the store granted it but the core never saw, so no grant is left that nobody owns. Owner-checked; a no-op when
     * there is nothing of the owner's.
     */
    void abandon(LockKey key, OwnerId owner);

    /**
     * Ends one hold that the core found lost, in a store that keeps no lease of its own ({@link
     * Traits#expiresHolds()} false), so no grant outlives it. Unlike {@link #abandon}, it ends only that hold (the
     * grant with the hold's fencing token), never a newer entry or hold of the same owner: the owner the store keeps
     * the hold under may already be acquiring again (a succession passed the hold on and that owner waits), and its
     * new attempt must not be undone. A no-op when that hold is gone already.
     *
     * <p>The default calls {@link #abandon}, for stores whose owners cannot acquire again before this call returns.
     */
    default void abandonHold(HeldLock hold) {
        abandon(hold.key(), hold.owner());
    }

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
     * Hands the lock from {@code from} to {@code to} in one round trip, with a fresh fencing token and {@code lease},
     * when {@link Traits#handsOff()} is true. Called by the core when a thread of the same client waits for the lock
     * that {@code from} releases. The receiving owner may already have an entry in the store's queue (a store that
     * {@link Traits#queuesEveryWaiter() queues every waiter}); the store then grants that entry if it is next, so the
     * token stays greater than every token issued before.
     *
     * @return {@link HandOff.Granted} with the new hold's token; {@link HandOff#notHeld()} if {@code from} did not hold
     *     the lock (nothing was changed); {@link HandOff#queued()} only from a store that queues every waiter, when
     *     {@code from}'s hold ended but owners of other clients were ahead of {@code to}, which now waits in the queue
     * @throws UnsupportedOperationException if the store does not hand off (the core never calls it then)
     */
    default HandOff handOff(LockKey key, OwnerId from, OwnerId to, Duration lease) {
        throw new UnsupportedOperationException(
                "this store does not hand off: " + getClass().getName());
    }

    /**
     * Registers {@code wakeUp} to be called when the lock with this name may have become free (released, expired,
     * queue moved). The registration is in force when this method returns, so an attempt made after it cannot miss a
     * release. The wake-up runs on the store's I/O thread and must not block. The core keeps at most one subscription
     * per name per client.
     */
    Subscription subscribe(LockKey key, Runnable wakeUp);

    /**
     * As {@link #subscribe(LockKey, Runnable)}, for a store that can give the lock straight to a waiting client with
     * its wake-up: it then offers the {@link Grant} to {@code takeGrant} (on its I/O thread; the taker does not block),
     * which answers true when a waiting owner of the client took the hold as it is. When the taker answers false, the
     * store treats the message as a plain wake-up: the client's waiters try again, and a store attempt of theirs may
     * take the hold over, or, with nobody waiting, the store passes the grant on. A store offers a grant only when it
     * can tell that the grant is newer than every answer of the name it has returned to the client, so that a grant
     * that has ended (taken over by an attempt, expired, passed on) is never offered; it records each answer before
     * returning it, in a way an offer in progress sees (Redis: under one monitor, held while it offers). The taker
     * refuses while an attempt of the client for the name is on its way. The default ignores
     * {@code takeGrant}.
     */
    default Subscription subscribe(LockKey key, Runnable wakeUp, Predicate<Grant> takeGrant) {
        return subscribe(key, wakeUp);
    }

    /**
     * Lets the store tell the client at once that its holds may be gone (a session suspended or expired, a connection
     * lost), instead of at the next watchdog tick. The core calls this once, when it starts; the store may call {@code
     * checkNow} from any thread, as often as it likes, and the core then runs {@link #renew} for every renewed hold at
     * once, marking the gone ones lost. Stores that cannot tell keep the default, which ignores it.
     */
    default void onPossibleLoss(Runnable checkNow) {}

    /** The current hold of a lock, if any. */
    Optional<LockInfo> inspect(LockKey key);

    /** The current holds whose names start with {@code prefix}, at most {@code limit} of them. */
    List<LockInfo> list(String prefix, int limit);

    /** Removes the current hold whoever owns it; see {@link io.distlock.LockAdmin#forceUnlock}. */
    Optional<LockInfo> forceRelease(LockKey key);

    /** What this store can do; constant for the store's life. */
    Traits traits();

    /** Closes the connections this store opened (not those it was given). Idempotent. */
    @Override
    void close();

    /**
     * The capabilities the core adapts to.
     *
     * @param queuesEveryWaiter a waiting attempt always uses {@code queue = true}, also for a non-fair lock (a store
     *     whose holds are queue positions). Without {@code handsOff}, every waiting owner of the client is in the
     *     store's queue and the store's order is the order. With {@code handsOff}, the waiters of a non-fair lock in
     *     one client line up behind the first, which alone keeps a place in the store's queue, and a release hands the
     *     lock to the first local waiter ({@link #handOff} may answer {@link HandOff#queued()}); a fair lock still
     *     queues every waiter
     * @param expiresHolds the store ends a hold by itself when its lease runs out; when false the core releases a
     *     fixed-lease hold at its end
     * @param handsOff {@link #handOff} is supported
     * @param subscribesFreely {@link #subscribe} costs no round trip once the client is set up (Redis: one channel
     *     per client, subscribed once), and an attempt made while subscribed tells the store that the client waits:
     *     an acquire that may wait, for a name that was busy for this client a moment ago, subscribes before its first
     *     attempt, which then counts as the re-check after subscribing (one attempt less per contended acquire)
     */
    record Traits(boolean queuesEveryWaiter, boolean expiresHolds, boolean handsOff, boolean subscribesFreely) {
        /** Traits of a store whose subscription may cost a round trip. */
        public Traits(boolean queuesEveryWaiter, boolean expiresHolds, boolean handsOff) {
            this(queuesEveryWaiter, expiresHolds, handsOff, false);
        }
    }
}
