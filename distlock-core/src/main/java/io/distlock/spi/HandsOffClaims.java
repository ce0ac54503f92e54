package io.distlock.spi;

/**
 * A {@link ClaimStore} that can end a read-write lock's or semaphore's hold and ask for a waiting claim of the same
 * client in one round trip. The engine discovers it once and calls it when a hold ends while a local waiter of the
 * name waits, so the permits go to that waiter without a wake-up and a second round trip.
 *
 * <p>The waiter's own attempt ({@link ClaimStore#tryAcquire tryAcquire(to, true)}) may be on its way at the same time.
 * So both steps answer one acquire ({@link Claim#request()}) with one grant: a claim whose owner holds a live grant
 * made for the same request, in the same mode, gets that grant again, its lease restarted from now, rather than a
 * second one. A grant of the same owner made for another request is not returned this way.
 */
public interface HandsOffClaims {

    /**
     * In one atomic step: ends {@code from} as {@link ClaimStore#release} would (owner- and token-checked), then asks
     * for {@code to} (a claim of the same name) as {@link ClaimStore#tryAcquire tryAcquire(to, true)} would: granted
     * when it fits beside the live holds and the waiters queued before it, otherwise queued (it keeps its place, or
     * joins the queue if it had none). The waiters the released permits let pass are woken as after a release.
     *
     * @return {@link HandOff.Granted} with {@code to}'s token; {@link HandOff#notHeld()} if {@code from} was gone
     *     (expired, removed): nothing was changed; {@link HandOff#queued()} if {@code from} ended and {@code to} now
     *     waits in the queue
     */
    HandOff handOff(HeldClaim from, Claim to);
}
