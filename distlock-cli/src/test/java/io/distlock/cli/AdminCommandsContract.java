package io.distlock.cli;

import org.junit.jupiter.api.Test;

/**
 * The operator commands ({@code status}, {@code list}, {@code force-unlock}) checked the same way on every backend:
 * each backend's {@code *CommandsIT} implements this with its own server, instead of copying the tests.
 */
interface AdminCommandsContract {

    /** The checks bound to this backend's holder client and {@code --backend} argument. */
    AdminCommandsChecks checks();

    @Test
    default void status_heldLock_showsHolderAndToken() throws InterruptedException {
        checks().status_heldLock_showsHolderAndToken();
    }

    @Test
    default void status_freeLock_exitsOne() {
        checks().status_freeLock_exitsOne();
    }

    @Test
    default void list_prefix_showsOnlyMatchingHeldLocks() throws InterruptedException {
        checks().list_prefix_showsOnlyMatchingHeldLocks();
    }

    @Test
    default void forceUnlock_confirmed_removesTheHold() throws InterruptedException {
        checks().forceUnlock_confirmed_removesTheHold();
    }

    @Test
    default void forceUnlock_declined_keepsTheHold() throws InterruptedException {
        checks().forceUnlock_declined_keepsTheHold();
    }
}
