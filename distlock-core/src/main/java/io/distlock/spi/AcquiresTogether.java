package io.distlock.spi;

import java.util.List;

/**
 * A {@link ClaimStore} that can try several lock claims, and release several lock holds, in fewer round trips than one
 * each (Redis: the scripts pipelined on one connection). The engine uses it for the members of one client in a
 * multi-lock: the claims are of distinct names, all of kind {@link Claim.Kind#LOCK}, and none may wait or queue.
 */
public interface AcquiresTogether {

    /**
     * Tries every claim once, as {@link ClaimStore#tryAcquire tryAcquire(claim, false)} would, with the answers in the
     * claims' order. Each claim is decided on its own: some may be granted while others are busy.
     *
     * @throws RuntimeException when the store cannot be reached or an answer is missing; any of the claims may then
     *     have been granted, and the engine abandons each
     */
    List<Attempt> tryAcquireAll(List<Claim> claims);

    /**
     * Ends every hold, owner-checked, as {@link ClaimStore#release} would, with the answers in the holds' order: true
     * if the owner had the hold and now does not, false if it was gone.
     *
     * @throws RuntimeException when the store cannot be reached or an answer is missing; any of the holds may then have
     *     been released or not, and the engine leaves them to their leases
     */
    List<Boolean> releaseAll(List<HeldClaim> holds);
}
