package io.distlock.spi;

/**
 * A {@link ClaimStore} whose holds the engine ends itself when their fixed lease runs out or when it finds them lost,
 * through {@link #abandonHold}: a store that keeps no lease of its own, where a hold lasts while its owner's session
 * does (a ZooKeeper session, a database connection), or one whose own expiry is coarser than a fixed lease (etcd's
 * lease TTLs are whole seconds).
 */
public interface SessionHolds {

    /**
     * Ends one hold that the engine found lost or whose fixed lease ran out, so no grant outlives it. Unlike {@link
     * ClaimStore#abandon}, it ends only that hold (the grant with the hold's fencing token), never a newer entry or hold
     * of the same owner: the owner the store keeps the hold under may already be acquiring again, and its new attempt
     * must not be undone. A no-op when that hold is gone already.
     */
    void abandonHold(HeldClaim hold);
}
