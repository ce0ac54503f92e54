package io.distlock.spi;

import java.util.Objects;

/**
 * A hold that the store gave to this client while one of its owners waited, announced with the wake-up (see {@link
 * GrantsWithWakeUp#subscribe}). A waiting owner of the client may take it as
 * it is, without a round trip: the store keeps it under {@code storeOwner}, which renewal, release and hand-off then
 * use.
 *
 * @param storeOwner the id the store keeps the hold under (not an owner of the client; unique to this grant)
 * @param fencingToken the grant's fencing token, greater than every token the store issued before for the name
 * @param spareTokens tokens after {@code fencingToken} reserved for local successions of this hold, as in {@link
 *     Attempt.Acquired}
 * @param validUntilNanos until when, as a {@link System#nanoTime()} reading, the hold lasts at least without a renewal
 *     (a lower bound: the store has taken off every delay it cannot rule out); the taker must renew it before then
 */
public record Grant(OwnerId storeOwner, long fencingToken, int spareTokens, long validUntilNanos) {
    public Grant {
        Objects.requireNonNull(storeOwner, "storeOwner");
        if (spareTokens < 0) {
            throw new IllegalArgumentException("spareTokens must not be negative: " + spareTokens);
        }
    }
}
