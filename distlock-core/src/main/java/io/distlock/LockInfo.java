package io.distlock;

import io.distlock.spi.OwnerId;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * A snapshot of one name in use as the store sees it: a held lock, a read-write lock or semaphore with holds or
 * waiters, or a count-down latch that is counting. Owner ids are bearer credentials for the owner's release:
 * {@link #toString()} shows them {@link OwnerId#redact redacted}, {@link #owner()} as they are.
 *
 * @param name the name
 * @param owner the owner id of the first hold ({@code clientId} followed by a thread or hold suffix); after local
 *     hand-offs of a lock between threads of one client without a round trip, the owner that acquired the hold from
 *     the store; empty when nothing is held (a latch, a semaphore with only waiters)
 * @param remainingLease the lease left of the first hold, by the store's clock; {@link Duration#ZERO} where the store
 *     keeps no lease (a ZooKeeper session, a database session) and the hold lasts while its owner is connected; for a
 *     latch, the time left before its data expires
 * @param fencingToken the token of the first hold, or -1 where the store cannot tell another client's token (JDBC's
 *     session-bound modes); where the store reserves tokens for local hand-offs (Redis), the last token reserved: the
 *     holder's token is at most this, and every later grant's is greater
 * @param waiters how many owners wait in the store's queue, or -1 where the store cannot tell
 * @param kind what the name is used as
 * @param holders every hold of the name, with its permits, lease left and token (one for a lock)
 * @param count a latch's count; 0 for the other kinds
 */
public record LockInfo(
        String name,
        String owner,
        Duration remainingLease,
        long fencingToken,
        int waiters,
        Kind kind,
        List<Holder> holders,
        long count) {

    /** What a name is used as. */
    public enum Kind {
        LOCK,
        READ_WRITE_LOCK,
        SEMAPHORE,
        COUNT_DOWN_LATCH
    }

    /**
     * One hold of a name.
     *
     * @param owner the owner id written in the store
     * @param exclusive whether the hold excludes every other (a lock, a write lock) or shares the name (a read lock,
     *     permits)
     * @param permits how many permits it has (1 for locks)
     * @param remainingLease the lease left, as for {@link LockInfo#remainingLease()}
     * @param fencingToken its fencing token, as for {@link LockInfo#fencingToken()}
     */
    public record Holder(String owner, boolean exclusive, int permits, Duration remainingLease, long fencingToken) {
        public Holder {
            Objects.requireNonNull(owner, "owner");
            Objects.requireNonNull(remainingLease, "remainingLease");
        }

        @Override
        public String toString() {
            return "Holder[owner=" + redact(owner) + ", exclusive=" + exclusive + ", permits=" + permits
                    + ", remainingLease=" + remainingLease + ", fencingToken=" + fencingToken + "]";
        }
    }

    public LockInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(remainingLease, "remainingLease");
        Objects.requireNonNull(kind, "kind");
        holders = List.copyOf(holders);
    }

    /** A held lock: one exclusive holder. */
    public LockInfo(String name, String owner, Duration remainingLease, long fencingToken, int waiters) {
        this(
                name,
                owner,
                remainingLease,
                fencingToken,
                waiters,
                Kind.LOCK,
                List.of(new Holder(owner, true, 1, remainingLease, fencingToken)),
                0);
    }

    /** A read-write lock or semaphore with these holders (the first one's fields fill the lock-shaped ones). */
    public static LockInfo ofHolders(String name, Kind kind, List<Holder> holders, int waiters) {
        Holder first = holders.isEmpty() ? null : holders.get(0);
        return new LockInfo(
                name,
                first == null ? "" : first.owner(),
                first == null ? Duration.ZERO : first.remainingLease(),
                first == null ? 0 : first.fencingToken(),
                waiters,
                kind,
                holders,
                0);
    }

    /** A count-down latch that is counting, whose data expires after {@code expiresIn}. */
    public static LockInfo ofLatch(String name, long count, Duration expiresIn) {
        return new LockInfo(name, "", expiresIn, 0, 0, Kind.COUNT_DOWN_LATCH, List.of(), count);
    }

    @Override
    public String toString() {
        return "LockInfo[name=" + name + ", owner=" + redact(owner) + ", remainingLease=" + remainingLease
                + ", fencingToken=" + fencingToken + ", waiters=" + waiters + ", kind=" + kind + ", holders=" + holders
                + ", count=" + count + "]";
    }

    /** An owner id ({@code <clientId>:<suffix>}) redacted; anything else (a database session number) as it is. */
    private static String redact(String owner) {
        return owner.indexOf(':') < 0 ? owner : OwnerId.redact(owner);
    }
}
