package io.distlock.spi;

/** The answer to {@link HandsOff#handOff}: what became of the hold and of the owner it was handed to. */
public sealed interface HandOff {

    /**
     * The receiving owner holds the lock now, with this fresh fencing token.
     *
     * @param spareTokens how many tokens after {@code fencingToken} the store reserved for this hold, as in {@link
     *     Attempt.Acquired#spareTokens()}; 0 for stores that reserve none
     */
    record Granted(long fencingToken, int spareTokens) implements HandOff {
        public Granted {
            if (spareTokens < 0) {
                throw new IllegalArgumentException("spareTokens must not be negative: " + spareTokens);
            }
        }
    }

    /**
     * The giving owner did not hold the lock (expired, taken over, removed); nothing was changed.
     *
     * @return the one instance
     */
    static HandOff notHeld() {
        return Answer.NOT_HELD;
    }

    /**
     * The giving owner's hold ended, but the receiving owner could not take it over: in a store that queues every
     * waiter, owners of other clients were ahead of it. The receiving owner is now in the store's queue, as after a
     * {@code tryAcquire} with {@code queue = true} that answered busy, and waits there.
     *
     * @return the one instance
     */
    static HandOff queued() {
        return Answer.QUEUED;
    }

    static HandOff granted(long fencingToken) {
        return new Granted(fencingToken, 0);
    }

    static HandOff granted(long fencingToken, int spareTokens) {
        return new Granted(fencingToken, spareTokens);
    }

    /** The answers without data. */
    enum Answer implements HandOff {
        NOT_HELD,
        QUEUED
    }
}
