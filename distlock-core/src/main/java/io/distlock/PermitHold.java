package io.distlock;

/**
 * One acquisition of permits of a {@link DistributedSemaphore}, owned by this handle: any thread may release it. The
 * permits have a lease like a lock's hold: renewed by the watchdog, or fixed; a hold found gone is told to the
 * semaphore's listeners like a lost lock, and its release throws {@link LockLostException}.
 *
 * <pre>{@code
 * try (PermitHold p = exports.acquire(2)) {
 *     export(p.fencingToken());
 * }
 * }</pre>
 */
public interface PermitHold extends LockHold {

    /** How many permits this hold has. */
    int permits();
}
