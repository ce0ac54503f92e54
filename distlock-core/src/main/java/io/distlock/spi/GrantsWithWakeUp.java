package io.distlock.spi;

import java.util.function.Predicate;

/**
 * A {@link ClaimStore} that can give the lock straight to a waiting client with its wake-up, so a waiter takes it
 * without a round trip. The engine discovers it once and subscribes through it instead of {@link ClaimStore#subscribe}.
 */
public interface GrantsWithWakeUp {

    /**
     * As {@link ClaimStore#subscribe}, and the store offers a {@link Grant} to {@code takeGrant} (on its I/O thread;
     * the taker does not block), which answers true when a waiting owner of the client took the hold as it is. When
     * the taker answers false, the store treats the message as a plain wake-up: the client's waiters try again, and a
     * store attempt of theirs may take the hold over, or, with nobody waiting, the store passes the grant on. A store
     * offers a grant only when it can tell that the grant is newer than every answer of the name it has returned to
     * the client, so that a grant that has ended (taken over by an attempt, expired, passed on) is never offered; it
     * records each answer before returning it, in a way an offer in progress sees (Redis: under one monitor, held
     * while it offers). The taker refuses while an attempt of the client for the name is on its way.
     */
    Subscription subscribe(LockKey key, Runnable wakeUp, Predicate<Grant> takeGrant);
}
