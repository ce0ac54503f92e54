package io.distlock.jdbc;

import io.distlock.LockInfo;
import io.distlock.spi.Claim;
import io.distlock.spi.ClaimAdmin;
import io.distlock.spi.ClaimStore;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import java.util.Optional;
import java.util.Set;

/**
 * What both JDBC stores are to the engine: a store of locks with its admin. The steps that follow from inspect and
 * the owner-checked release are written once here.
 */
interface JdbcStore extends ClaimStore, ClaimAdmin {

    @Override
    default Set<Claim.Kind> kinds() {
        return Set.of(Claim.Kind.LOCK);
    }

    @Override
    default int available(LockKey key, Claim.Kind kind, int size) {
        return inspect(key).isPresent() ? 0 : 1;
    }

    /** Ends {@code owner}'s hold through the owner-checked release: a lock that changed hands keeps its holder. */
    @Override
    default Optional<LockInfo> forceRelease(LockKey key, OwnerId owner) {
        Optional<LockInfo> info = inspect(key);
        return info.isPresent() && release(HeldClaim.lock(key, owner, 0)) ? info : Optional.empty();
    }
}
