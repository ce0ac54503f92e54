package io.distlock.internal;

import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * A waiter of a {@link ClaimEngine} or a latch: woken when a claim of its name may have become grantable (a wake-up
 * from the store, a local release or loss) or a count may have reached zero. A parked thread ({@link Parked}), or an
 * asynchronous wait whose wake-up schedules its next step ({@link Callback}).
 */
interface ClaimWaiter {

    /** Asks the waiter to try again; never blocks (it runs on the store's I/O thread). */
    void wake();

    /** A waiter that records its wake-ups: each is consumed before an attempt, so one during it is not missed. */
    abstract class Flagged implements ClaimWaiter {
        volatile boolean woken;

        // A claim waiter's hand-off state ({@link ClaimHandOffs}), guarded by the name state's mutex.
        /** The acquire this waiter waits for; set before it joins the name's local waiters. */
        @Nullable
        ClaimAttempt attempt;
        /** It has had a busy answer: it is in the store's queue. */
        boolean queued;
        /** Its own store attempt is on its way (a hand-off may still go to it: the store answers both alike). */
        boolean attempting;
        /** A release is handing its permits to this waiter: it makes no store attempt until that is decided. */
        boolean claimed;
        /** Woken while claimed: it tries again if the hand-off leaves it waiting. */
        boolean missed;
        /** It gave up while claimed: the hand-off gives back whatever it got for it. */
        boolean gone;
        /** The hold a hand-off got for it, installed and renewed, for the waiter to return. */
        @Nullable
        ClaimHold handed;
        /**
         * The hold installed for it, by its own attempt or by a hand-off: whichever of the two answers comes second
         * finds the grant installed (both carry the same grant; see {@link io.distlock.spi.HandsOffClaims}).
         */
        @Nullable
        ClaimHold taken;
        /** Its own attempt's grant came too late and is being given back: no hand-off goes to it meanwhile. */
        boolean settling;
    }

    /** A thread parked in {@link ClaimEngine#acquire} or a latch's await. */
    final class Parked extends Flagged {
        private final Thread thread = Thread.currentThread();

        @Override
        public void wake() {
            woken = true;
            LockSupport.unpark(thread);
        }
    }

    /** An asynchronous wait: a wake-up runs {@code onWake}, which schedules the wait's next step. */
    final class Callback extends Flagged {
        private final Runnable onWake;

        Callback(Runnable onWake) {
            this.onWake = onWake;
        }

        @Override
        public void wake() {
            woken = true;
            onWake.run();
        }
    }
}
