package io.distlock.zookeeper;

/**
 * A queue entry this client created for an owner.
 *
 * @param path the entry's path, without Curator's namespace
 * @param czxid the zxid that created the entry, from which the tokens of its grant are derived
 * @param session the session the entry is ephemeral to
 * @param epoch the connection epoch (ZkSession) the entry was made or granted in; a hold of an earlier epoch is
 *     presumed lost
 * @param alone the entry was the lock node's only child when granted, so release may delete the lock node too
 * @param held the entry was granted: it is never granted again (its token, and the successions' after it, were
 *     issued), so an attempt of its owner that finds it ends it and queues anew
 */
record OwnEntry(String path, long czxid, long session, long epoch, boolean alone, boolean held) {
    OwnEntry granted(long atEpoch, boolean isAlone) {
        return new OwnEntry(path, czxid, session, atEpoch, isAlone, true);
    }

    /** The fencing token of a grant of this entry. */
    long token() {
        return ZooKeeperLockStore.tokenOf(czxid);
    }
}
