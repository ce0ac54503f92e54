package io.distlock.spi;

/**
 * A {@link ClaimStore} that can hand a lock from one owner of the client to another in one round trip. The engine
 * discovers it once and calls it when a thread of the same client waits for the lock that an owner releases.
 */
public interface HandsOff {

    /**
     * Hands the lock from {@code from} to {@code to.owner()} with a fresh fencing token and {@code to.lease()}
     * (reserving up to {@code to.spareTokens()} tokens after it, as a grant does). The receiving owner
     * may already have an entry in the store's queue (a {@link QueueOrdered} store); the store then grants that entry
     * if it is next, so the token stays greater than every token issued before.
     *
     * @return {@link HandOff.Granted} with the new hold's token; {@link HandOff#notHeld()} if {@code from} did not hold
     *     the lock (nothing was changed); {@link HandOff#queued()} only from a {@link QueueOrdered} store, when {@code
     *     from}'s hold ended but owners of other clients were ahead of {@code to}, which now waits in the queue
     */
    HandOff handOff(Claim to, OwnerId from);
}
