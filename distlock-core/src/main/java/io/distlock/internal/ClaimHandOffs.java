package io.distlock.internal;

import io.distlock.spi.HandOff;
import io.distlock.spi.HandsOffClaims;
import java.util.Objects;

/*
 * Overview
 *
 * Handing off
 *   On a store that HandsOffClaims, a release of a read-write lock's or semaphore's hold looks for the first local
 *   waiter of the name (ClaimState.claimNext) and marks it claimed, and one store call ends the hold and asks for the
 *   waiter's claim in the same step. The store keeps its queue's order: the waiter is granted only when it fits beside
 *   the live holds and the waiters queued before it, so no other client is passed. A granted waiter gets its hold
 *   installed and renewed before it is woken; otherwise it goes on waiting in its place, and tries again at once if a
 *   wake-up came while it was claimed.
 *
 * A waiter whose own attempt is on its way
 *   It may be claimed too, so that a release finds a waiter to hand to while the waiters' attempts are on their way.
 *   The store answers the attempt and the hand-off of one claim with the same grant (HandsOffClaims), and whichever
 *   answer comes second finds it installed (ClaimWaiter.Flagged.taken) and installs nothing. A second grant (the
 *   first ran out between the two) is released by its token, which leaves the installed one alone.
 *
 * A waiter that gives up while claimed
 *   It leaves at once (timeout, interrupt, the client's close); the hand-off, when its answer comes, gives back what
 *   it got for it: the grant is released, or the queue entry abandoned. A hand-off whose answer comes after the
 *   claim's lease has run out gives the grant back and wakes the waiter, as an attempt's late grant is given back.
 *
 * Failures
 *   When the store call fails, neither outcome is known: the release fails as a release would, and the waiter tries
 *   again (its next attempt's grant replaces one whose answer was lost, or its wait's end abandons it). A waiter that
 *   gave up during the call has no wait left to end: the hand-off abandons its claim in the store itself.
 */
/** The release of a {@link ClaimEngine}'s hold that hands its permits to a local waiter in the same round trip. */
final class ClaimHandOffs {
    private final ClaimEngine engine;
    private final NameStates<ClaimHold, ClaimState> states;
    private final HoldKeeper<ClaimHold, ClaimState> keeper;
    private final HandsOffClaims store;
    private final ClaimAcquirer acquirer;
    private final Ticker ticker;

    ClaimHandOffs(
            ClaimEngine engine,
            NameStates<ClaimHold, ClaimState> states,
            HoldKeeper<ClaimHold, ClaimState> keeper,
            HandsOffClaims store,
            ClaimAcquirer acquirer,
            Ticker ticker) {
        this.engine = engine;
        this.states = states;
        this.keeper = keeper;
        this.store = store;
        this.acquirer = acquirer;
        this.ticker = ticker;
    }

    /** Releases {@code h} as {@link HoldKeeper#release} does, handing it to a local waiter where there is one. */
    void release(ClaimHold h) {
        ClaimState s = h.state;
        states.enterHeld(s);
        try {
            keeper.beginRelease(h);
            ClaimWaiter.Flagged w;
            s.mutex.lock();
            try {
                w = s.claimNext();
            } finally {
                s.mutex.unlock();
            }
            if (w == null) {
                keeper.endInStore(h);
            } else {
                handOff(s, h, w);
            }
        } finally {
            states.exit(s);
        }
    }

    private void handOff(ClaimState s, ClaimHold h, ClaimWaiter.Flagged w) {
        ClaimAttempt run = Objects.requireNonNull(w.attempt);
        long sent = ticker.read();
        HandOff answer;
        try {
            answer = store.handOff(h.heldClaim(), run.claim);
        } catch (RuntimeException e) {
            if (unclaim(s, w, true)) {
                acquirer.abandonQuietly(run.claim); // a grant or queue entry the store may have made for it
            }
            throw keeper.failedInStore(h, e);
        }
        if (answer instanceof HandOff.Granted g) {
            granted(s, w, run, g.fencingToken(), sent);
            keeper.endedInStore(h, true);
        } else if (answer == HandOff.notHeld()) {
            if (unclaim(s, w, false)) {
                acquirer.abandonQuietly(run.claim); // its queue entry, which nobody else ends now
            }
            keeper.endedInStore(h, false); // throws: the hold was lost
        } else {
            if (unclaim(s, w, false)) {
                acquirer.abandonQuietly(run.claim); // the store queued it for a waiter that has gone
            }
            keeper.endedInStore(h, true);
        }
    }

    /** Installs the hold granted to {@code w} and wakes it, or gives the grant back when nobody can take it. */
    private void granted(ClaimState s, ClaimWaiter.Flagged w, ClaimAttempt run, long token, long sent) {
        ClaimHold next = new ClaimHold(engine, s, run.view, run.claim, token, run.threadView, sent);
        if (ticker.read() - sent >= run.claim.lease().length().toNanos()) {
            // its lease ran out while the answer was on its way: given back (unless the waiter's own attempt has
            // installed it), and the waiter tries again
            if (reserve(s, w, next)) {
                acquirer.releaseGrant(next);
                s.mutex.lock();
                try {
                    w.taken = null;
                } finally {
                    s.mutex.unlock();
                }
            }
            var unused = unclaim(s, w, true);
            return;
        }
        boolean installed = false;
        ClaimHold taken;
        s.mutex.lock();
        try {
            taken = w.taken;
            if (taken == null && !w.gone && !engine.isClosed()) {
                s.granted(w, next); // from here on the client's close releases it
                w.taken = next;
                installed = true;
            }
        } finally {
            s.mutex.unlock();
        }
        if (!installed) {
            var unused = unclaim(s, w, false);
            if (taken == null || taken.fencingToken() != token) {
                acquirer.releaseGrant(next); // nobody takes it (the waiter's own attempt took the grant it got)
            }
            return;
        }
        keeper.activate(next); // renewed before the waiter can return it
        boolean gone;
        s.mutex.lock();
        try {
            w.claimed = false;
            gone = w.gone;
            if (!gone) {
                w.handed = next;
            }
        } finally {
            s.mutex.unlock();
        }
        if (gone) {
            acquirer.releaseQuietly(next);
        } else {
            w.wake();
        }
    }

    /** Marks {@code next} as {@code w}'s grant, so that its own attempt does not install it; false if it has one. */
    private static boolean reserve(ClaimState s, ClaimWaiter.Flagged w, ClaimHold next) {
        s.mutex.lock();
        try {
            if (w.taken != null) {
                return false;
            }
            w.taken = next;
            return true;
        } finally {
            s.mutex.unlock();
        }
    }

    /**
     * Ends the hand-off's claim on {@code w}. Returns whether {@code w} gave up meanwhile; otherwise wakes it when
     * {@code wake}, when a wake-up came while it was claimed, or when its own attempt got its grant meanwhile (it
     * waits for this hand-off to come back).
     */
    private boolean unclaim(ClaimState s, ClaimWaiter.Flagged w, boolean wake) {
        boolean gone;
        boolean missed;
        boolean holds;
        s.mutex.lock();
        try {
            w.claimed = false;
            gone = w.gone;
            missed = w.missed;
            w.missed = false;
            holds = w.taken != null; // its own attempt got its grant: it waits for this hand-off to come back
        } finally {
            s.mutex.unlock();
        }
        if (!gone && (wake || missed || holds)) {
            w.wake();
        }
        return gone;
    }
}
