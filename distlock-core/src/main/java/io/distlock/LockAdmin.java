package io.distlock;

import java.util.List;
import java.util.Optional;

/**
 * Operations for operators and tools ({@code distlock status}, {@code list}, {@code force-unlock}). They read or
 * change the store directly, bypassing owner checks; application code should not need them.
 */
public interface LockAdmin {

    /**
     * What the store has for a name: the holder of a lock; the holders and waiters of a read-write lock or semaphore;
     * the count of a latch. Empty when the name is not in use.
     *
     * @throws DistributedLockException if the store cannot be read
     */
    Optional<LockInfo> inspect(String name);

    /**
     * The names in use now (locks, read-write locks, semaphores, latches) that start with {@code prefix} (empty for all), at most {@code limit} of them.
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

    /**
     * Removes one hold of a name, whoever's it is: the hold of {@code owner} (an owner id as {@link #inspect} shows it)
     * on a lock, read-write lock or semaphore. Its owner finds it lost at its next renewal or release; the others keep
     * theirs.
     *
     * @return the name as it was before, or empty if {@code owner} held nothing of it
     * @throws DistributedLockException if the store cannot be changed
     */
    Optional<LockInfo> forceRelease(String name, String owner);
}
