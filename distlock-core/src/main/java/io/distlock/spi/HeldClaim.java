package io.distlock.spi;

import java.util.Objects;

/**
 * One hold granted by a {@link ClaimStore}, as the engine hands it back to release, renew or abandon it.
 *
 * @param key the name
 * @param kind what the name is used as, as in the claim that was granted
 * @param owner the owner the store keeps the hold under
 * @param mode the claim's mode
 * @param fencingToken the token of the grant
 */
public record HeldClaim(LockKey key, Claim.Kind kind, OwnerId owner, Mode mode, long fencingToken) {
    public HeldClaim {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(mode, "mode");
    }

    /** A lock's hold: exclusive. */
    public static HeldClaim lock(LockKey key, OwnerId owner, long fencingToken) {
        return new HeldClaim(key, Claim.Kind.LOCK, owner, Mode.EXCLUSIVE, fencingToken);
    }
}
