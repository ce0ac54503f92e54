package io.distlock.internal;

import java.util.concurrent.locks.LockSupport;

/**
 * A waiter of a {@link ClaimEngine}: woken when a claim of its name may have become grantable (a wake-up from the
 * store, a local release or loss). A parked thread here; a waiter that completes a future is the same interface with a
 * callback that schedules the next attempt instead of unparking a thread.
 */
interface ClaimWaiter {

    /** Asks the waiter to try again; never blocks (it runs on the store's I/O thread). */
    void wake();

    /** A thread parked in {@link ClaimEngine#acquire}. */
    final class Parked implements ClaimWaiter {
        private final Thread thread = Thread.currentThread();
        /** Set by {@link #wake}, consumed by the thread before each attempt, so a wake-up during one is not missed. */
        volatile boolean woken;

        @Override
        public void wake() {
            woken = true;
            LockSupport.unpark(thread);
        }
    }
}
