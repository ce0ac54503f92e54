package io.distlock.spi;

import java.util.Objects;

/** One hold the client believes it has, as handed to {@link LockStore#renew}. */
public record HeldLock(LockKey key, OwnerId owner, long fencingToken) {
    public HeldLock {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(owner, "owner");
    }
}
