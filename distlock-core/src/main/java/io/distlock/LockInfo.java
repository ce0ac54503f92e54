package io.distlock;

import java.time.Duration;
import java.util.Objects;

/**
 * A snapshot of one held lock as the store sees it.
 *
 * @param name the lock's name
 * @param owner the owner id written in the store ({@code clientId} followed by a thread or hold suffix); after local
 *     hand-offs between threads of one client without a round trip, the owner that acquired the hold from the store
 * @param remainingLease the lease left, by the store's clock; {@link Duration#ZERO} where the store keeps no lease
 *     (a ZooKeeper session, a database session) and the hold lasts while its owner is connected
 * @param fencingToken the token of the hold, or -1 where the store cannot tell another client's token (JDBC's
 *     session-bound modes); where the store reserves tokens for local hand-offs (Redis), the last token reserved: the
 *     holder's token is at most this, and every later grant's is greater
 * @param waiters how many owners wait in the store's queue, or -1 where the store cannot tell
 */
public record LockInfo(String name, String owner, Duration remainingLease, long fencingToken, int waiters) {
    public LockInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(remainingLease, "remainingLease");
    }
}
