package io.distlock;

import java.util.List;
import java.util.Optional;

/**
 * Operations for operators and tools ({@code distlock status}, {@code list}, {@code force-unlock}). They read or
 * change the store directly, bypassing owner checks; application code should not need them.
 */
public interface LockAdmin {

    /**
     * The current holder of a lock, if any.
     *
     * @throws DistributedLockException if the store cannot be read
     */
    Optional<LockInfo> inspect(String name);

    /**
     * The locks held now whose names start with {@code prefix} (empty for all), at most {@code limit} of them.
     *
     * @throws IllegalArgumentException if {@code limit} is not positive
     * @throws DistributedLockException if the store cannot be read
     */
    List<LockInfo> list(String prefix, int limit);

    /**
     * Removes the current hold of a lock whoever owns it. The owner finds its hold lost at its next renewal or
     * release. Fencing still protects resources: the next holder gets a greater token.
     *
     * @return the hold that was removed, or empty if nobody held the lock
     * @throws DistributedLockException if the store cannot be changed
     */
    Optional<LockInfo> forceUnlock(String name);
}
