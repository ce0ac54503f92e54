package io.distlock.spi;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One request for a hold of a name, as the engine hands it to a {@link ClaimStore}: a lock is an exclusive claim of
 * one permit, a read lock a shared claim and a write lock an exclusive claim on the same name, a semaphore's
 * acquisition a shared claim of some of its permits.
 *
 * <p>The store grants it when it is compatible with every live hold of the name and with every waiter queued before
 * it (granting in queue order): an {@link Mode#EXCLUSIVE} claim when nobody else holds anything of the name; a {@link
 * Mode#SHARED} claim when no other owner holds it exclusively and the permits of all shared holds, this one included,
 * fit in {@code size}. One exception keeps a downgrade from waiting for itself: a shared claim of an owner that holds
 * the name exclusively is granted at once.
 *
 * @param key the name
 * @param kind what the name is; a name in use as one kind refuses claims of another with {@link
 *     IllegalStateException}
 * @param mode exclusive or shared
 * @param permits how many permits the hold takes (1 for a lock; 1 to {@code size} for a semaphore)
 * @param size the permits the name has in all: the semaphore's size, stored by its first user (a claim with another
 *     size is refused with {@link IllegalStateException} naming both); {@link Integer#MAX_VALUE} for a read-write lock
 * @param owner who the hold belongs to; an owner has at most one hold per mode of a name
 * @param lease the hold's lease, as the caller gave it: renewed by the engine's watchdog, or fixed
 * @param spareTokens how many fencing tokens after the grant's own the engine asks the store to reserve for the
 *     client's local successions of the hold (the engine's policy); a store reserves at most that, fewer where its
 *     token arithmetic allows fewer, and says how many in {@link Attempt.Acquired}, {@link HandOff.Granted} or {@link
 *     Grant}
 * @param request which acquire the claim is: unique among the claims of the JVM, the same for every attempt and
 *     hand-off of one acquire, so that a store can tell the acquire's own grant from an earlier hold of the same owner
 *     (see {@link HandsOffClaims})
 */
public record Claim(
        LockKey key,
        Kind kind,
        Mode mode,
        int permits,
        int size,
        OwnerId owner,
        Lease lease,
        int spareTokens,
        long request) {

    private static final AtomicLong REQUESTS = new AtomicLong();

    /** What a name is used as. */
    public enum Kind {
        LOCK("lock"),
        READ_WRITE_LOCK("read-write lock"),
        SEMAPHORE("semaphore");

        private final String label;

        Kind(String label) {
            this.label = label;
        }

        /** How messages name the kind. */
        public String label() {
            return label;
        }
    }

    public Claim {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(lease, "lease");
        if (size < 1) {
            throw new IllegalArgumentException("size must be positive: " + size);
        }
        if (permits < 1 || permits > size) {
            throw new IllegalArgumentException("permits must be between 1 and " + size + ": " + permits);
        }
        if (spareTokens < 0) {
            throw new IllegalArgumentException("spareTokens must not be negative: " + spareTokens);
        }
        if (kind == Kind.LOCK && (mode != Mode.EXCLUSIVE || size != 1)) {
            throw new IllegalArgumentException("a lock is an exclusive claim of 1 permit of 1: " + mode + ", " + size);
        }
    }

    /** The claim of an exclusive lock: one permit of one. */
    public static Claim lock(LockKey key, OwnerId owner, Lease lease, int spareTokens) {
        return new Claim(key, Kind.LOCK, Mode.EXCLUSIVE, 1, 1, owner, lease, spareTokens, REQUESTS.incrementAndGet());
    }

    /** A read-write lock's or a semaphore's claim, which reserves no spare tokens. */
    public static Claim of(LockKey key, Kind kind, Mode mode, int permits, int size, OwnerId owner, Lease lease) {
        return new Claim(key, kind, mode, permits, size, owner, lease, 0, REQUESTS.incrementAndGet());
    }

    /** The hold this claim becomes when granted with {@code fencingToken}. */
    public HeldClaim held(long fencingToken) {
        return new HeldClaim(key, kind, owner, mode, fencingToken);
    }
}
