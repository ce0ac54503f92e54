package io.distlock.spi;

import io.distlock.LockInfo;
import java.util.List;
import java.util.Optional;

/**
 * The operator's steps on the names a store keeps (see {@link io.distlock.LockAdmin}), implemented by every {@link
 * ClaimStore}. They bypass owner checks.
 */
public interface ClaimAdmin {

    /** The holds and waiters of a name, or the count of a latch; empty if not in use. */
    Optional<LockInfo> inspect(LockKey key);

    /** The names in use whose names start with {@code prefix}, in name order, at most {@code limit} of them. */
    List<LockInfo> list(String prefix, int limit);

    /**
     * Ends every hold of the name, whoever owns it, and wakes the waiters; see {@link
     * io.distlock.LockAdmin#forceUnlock}.
     *
     * @return the name as it was before, or empty if nothing held it
     */
    Optional<LockInfo> forceRelease(LockKey key);

    /**
     * Ends every hold of {@code owner} on the name, whatever its mode, and wakes the waiters.
     *
     * @return the name as it was before, or empty if {@code owner} held nothing of it
     */
    Optional<LockInfo> forceRelease(LockKey key, OwnerId owner);
}
