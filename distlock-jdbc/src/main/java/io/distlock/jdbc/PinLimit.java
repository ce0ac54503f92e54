package io.distlock.jdbc;

import io.distlock.DistributedLockException;
import java.sql.SQLException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;

/**
 * The per-client bound on pinned connections in ROW_LOCK and ADVISORY (maxPinnedConnections): a hold, and an attempt
 * for its round trip, takes a permit before it asks the pool for a connection, and gives it back with the connection.
 * When the client's holds use every permit, an acquire fails at once with a DistributedLockException naming the limit,
 * instead of blocking in the pool while the connections that would be returned are the ones this client pins.
 * Permits that other attempts use are waited for, briefly: they are not holds.
 */
final class PinLimit {
    /** How long an attempt waits for a permit that other attempts of this client use. */
    private static final long WAIT_MILLIS = 2_000;

    private final int max;
    private final Semaphore permits;
    private final String mode;

    PinLimit(int max, String mode) {
        this.max = max;
        this.permits = new Semaphore(max);
        this.mode = mode;
    }

    /**
     * Takes a permit for an attempt. With none free: when the holds ({@code heldPins}, the connections they pin) use
     * fewer than the limit, the others are in use by attempts, each for a round trip, so it waits for one (up to
     * {@link #WAIT_MILLIS}) and answers false, "busy, try again", if none came in time; when the holds use them all, it
     * throws {@link DistributedLockException} naming the limit.
     */
    boolean take(IntSupplier heldPins) {
        if (permits.tryAcquire()) {
            return true;
        }
        if (heldPins.getAsInt() >= max) {
            throw new DistributedLockException(
                    mode + " mode pins one connection per held lock, and this client already pins " + max
                            + " (maxPinnedConnections); release a lock, raise maxPinnedConnections(..) within your"
                            + " pool's size, or use Mode.TABLE, which pins none",
                    new SQLException("too many pinned connections"));
        }
        try {
            return permits.tryAcquire(WAIT_MILLIS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the caller's wait sees it
            return false;
        }
    }

    /** Gives back a permit: its hold ended, or its attempt did not become one. */
    void release() {
        permits.release();
    }
}
