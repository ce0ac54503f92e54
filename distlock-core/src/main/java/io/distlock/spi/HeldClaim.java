package io.distlock.spi;

import java.util.Objects;

/** One hold granted by a {@link ClaimStore}, as the engine hands it back to release and renew it. */
public record HeldClaim(LockKey key, OwnerId owner, Mode mode, long fencingToken) {
    public HeldClaim {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(mode, "mode");
    }
}
