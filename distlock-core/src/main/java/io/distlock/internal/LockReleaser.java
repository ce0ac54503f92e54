package io.distlock.internal;

import static io.distlock.internal.StoreCalls.storeFailure;

import io.distlock.spi.AcquiresTogether;
import io.distlock.spi.Claim;
import io.distlock.spi.HandOff;
import io.distlock.spi.HandsOff;
import io.distlock.spi.Lease;
import io.distlock.spi.Mode;
import io.distlock.spi.QueueOrdered;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * Releasing
 *   A thread's unlock counts down its re-entries first; the last one, like a LockHold's release, stops the hold's
 *   renewal (no renewal runs after it) and ends it in the store, owner-checked. A release that finds the hold gone
 *   reports it lost.
 *
 * Handing off
 *   When a local waiter exists and the store HandsOff, the lock goes to it without a round trip through the queue: a
 *   succession (no round trip at all: the next spare token the store reserved, the hold kept under the acquiring
 *   owner's id) while spare tokens last and neither side has a fixed lease, otherwise a hand-off in one round trip
 *   with a fresh token. At most handOffLimit in a row, so other clients get their turn, except on a QueueOrdered store,
 *   which answers queued instead of passing another client's waiter. A waiter whose own attempt is on its way is not
 *   handed anything: its attempt may already be granted.
 */
/** The release half of a {@link LockEngine}: unlock, release, hand-off and succession to a local waiter. */
final class LockReleaser {
    private final LockEngine engine;
    private final NameStates<HoldImpl, LockState> states;
    private final @Nullable HandsOff handOffs;
    private final boolean queueOrdered;
    private final EngineConfig config;
    private final Ticker ticker;
    private final LockMetrics metrics;
    private final LockLeases leases;
    private final Lease renewedLease;

    LockReleaser(LockEngine engine, EngineConfig config, LockLeases leases) {
        this.engine = engine;
        this.states = leases.states;
        this.handOffs = leases.store instanceof HandsOff h ? h : null;
        this.queueOrdered = leases.store instanceof QueueOrdered;
        this.config = config;
        this.ticker = config.ticker();
        this.metrics = config.metrics();
        this.leases = leases;
        this.renewedLease = Lease.renewed(config.watchdogLease());
    }

    void unlockThread(EngineLock lock) {
        String name = lock.name();
        states.unlockThread(name, engine.threadOwner(), Mode.EXCLUSIVE, () -> "lock '" + name + "'", this::release);
    }

    /**
     * The calling thread's unlock of several locks of this client (distinct names): re-entries are counted down, and
     * the holds that end go to the store together where no local waiter is there to hand them to. Returns each lock's
     * outcome by position: null, or the exception its own unlock would throw.
     */
    List<@Nullable RuntimeException> unlockTogether(AcquiresTogether batch, List<EngineLock> locks) {
        int n = locks.size();
        List<@Nullable HoldImpl> ending = new ArrayList<>(n);
        List<@Nullable RuntimeException> outcomes = new ArrayList<>(n);
        for (EngineLock lock : locks) {
            String name = lock.name();
            LockState s = states.enter(name);
            HoldImpl h = null;
            RuntimeException failure = null;
            s.mutex.lock();
            try {
                h = s.unlockThread(engine.threadOwner(), Mode.EXCLUSIVE, () -> "lock '" + name + "'");
            } catch (RuntimeException e) {
                failure = e;
            } finally {
                s.mutex.unlock();
            }
            if (h != null) {
                states.enterHeld(s); // kept entered until the hold has ended
            }
            states.exit(s);
            ending.add(h);
            outcomes.add(failure);
        }
        releaseTogether(batch, ending, outcomes);
        return outcomes;
    }

    /**
     * Releases several holds of this client (distinct names) as {@link #release} would, those with no local waiter in
     * one batched store call. Returns each hold's outcome by position: null, or the exception its release would throw.
     */
    List<@Nullable RuntimeException> releaseTogether(AcquiresTogether batch, List<HoldImpl> holds) {
        List<@Nullable HoldImpl> ending = new ArrayList<>(holds.size());
        List<@Nullable RuntimeException> outcomes = new ArrayList<>(holds.size());
        for (HoldImpl h : holds) {
            states.enterHeld(h.state);
            ending.add(h);
            outcomes.add(null);
        }
        releaseTogether(batch, ending, outcomes);
        return outcomes;
    }

    /** Ends the holds in {@code ending} (each entered once by the caller), setting their outcomes; exits them. */
    private void releaseTogether(
            AcquiresTogether batch, List<@Nullable HoldImpl> ending, List<@Nullable RuntimeException> outcomes) {
        List<HoldImpl> together = new ArrayList<>(ending.size());
        List<Integer> positions = new ArrayList<>(ending.size());
        try {
            for (int i = 0; i < ending.size(); i++) {
                HoldImpl h = ending.get(i);
                if (h == null) {
                    continue;
                }
                LockState s = h.state;
                boolean waited;
                s.mutex.lock();
                try {
                    waited = !s.waiters.isEmpty();
                } finally {
                    s.mutex.unlock();
                }
                try {
                    if (waited) {
                        releaseEntered(h); // a local waiter may take it over: the single release's path
                    } else {
                        leases.beginRelease(h);
                        together.add(h);
                        positions.add(i);
                    }
                } catch (RuntimeException e) {
                    outcomes.set(i, e);
                }
            }
            if (!together.isEmpty()) {
                List<@Nullable RuntimeException> ended = leases.endAllInStore(together, batch);
                for (int k = 0; k < together.size(); k++) {
                    outcomes.set(positions.get(k), ended.get(k));
                }
            }
        } finally {
            for (HoldImpl h : ending) {
                if (h != null) {
                    states.exit(h.state);
                }
            }
        }
    }

    void release(HoldImpl h) {
        LockState s = h.state;
        states.enterHeld(s);
        try {
            releaseEntered(h);
        } finally {
            states.exit(s);
        }
    }

    private void releaseEntered(HoldImpl h) {
        LockState s = h.state;
        leases.beginRelease(h);
        Waiter next = null;
        HoldImpl successor = null;
        s.mutex.lock();
        try {
            // a store whose queue is the order answers "queued" when another client waits: no streak limit needed
            boolean streakAllowed = queueOrdered || s.handOffStreak < config.handOffLimit();
            if (handOffs != null && streakAllowed && s.holder == h) {
                next = s.firstLocal();
                if (next != null && next.attempting) {
                    next = null; // its own attempt may already be granted; release through the store instead
                }
                if (next != null && h.hasSpareToken() && next.fixedLease == null && !next.inStoreQueue) {
                    // a succession: the store keeps the hold under the acquiring owner and reserved the next token
                    // (on a store whose queue is the order it passes that queue, but only until the spare tokens
                    // run out: the hand-off after them respects it)
                    successor = new HoldImpl(h, next.lock, next.owner, next.threadView, ticker.read());
                    s.waiters.remove(next);
                    s.handOffStreak++;
                    s.holder = successor;
                    next.grant = successor;
                    next.status = Waiter.Status.GRANTED;
                    next.signal();
                } else if (next != null) {
                    next.status = Waiter.Status.CLAIMED;
                    s.waiters.remove(next);
                    s.handOffStreak++;
                }
            }
            if (next == null) {
                s.handOffStreak = 0;
            }
        } finally {
            s.mutex.unlock();
        }
        if (successor != null) {
            leases.activate(successor);
            metrics.handedOff(s.key.name());
            metrics.acquired(s.key.name(), 0);
            h.lock.fireReleased(h.fencingToken);
            successor.lock.fireAcquired(successor.fencingToken);
            return;
        }
        if (next != null) {
            handOff(s, h, next);
            return;
        }
        leases.endInStore(h);
    }

    private void handOff(LockState s, HoldImpl from, Waiter to) {
        Lease lease = to.fixedLease != null ? Lease.fixed(to.fixedLease) : renewedLease;
        long sent = ticker.read();
        HandOff answer;
        RuntimeException failure = null;
        try {
            HandsOff h = Objects.requireNonNull(handOffs, "a hand-off without the ability");
            answer = Objects.requireNonNull(
                    h.handOff(Claim.lock(s.key, to.owner, lease, config.handOffLimit()), from.storeOwner),
                    "handOff answer");
        } catch (RuntimeException e) {
            answer = HandOff.notHeld();
            failure = e;
        }
        HoldImpl granted = null;
        boolean endedInFlight = false;
        if (answer instanceof HandOff.Granted g
                && ticker.read() - sent >= lease.length().toNanos()) {
            // the lease ran out while the answer was on its way: the hold would be lost at birth, so it is given
            // back and the waiter tries again within its own wait; this release did hand the lock on
            endedInFlight = true;
            LockWaiters.abandonQuietly(leases.store, s.key, to.owner, lease);
        } else if (answer instanceof HandOff.Granted g) {
            granted = new HoldImpl(
                    engine,
                    s,
                    to.lock,
                    to.owner,
                    to.threadView,
                    g.fencingToken(),
                    to.fixedLease,
                    sent,
                    lease.length().toNanos(),
                    g.spareTokens());
            leases.activate(granted);
        }
        boolean queued = answer == HandOff.queued();
        s.mutex.lock();
        try {
            if (granted != null) {
                s.holder = granted;
                to.grant = granted;
                to.status = Waiter.Status.GRANTED;
                to.signal();
            } else {
                if (s.holder == from) {
                    s.holder = null;
                }
                to.status = Waiter.Status.WAITING;
                // queued: the store put it behind owners of other clients; it waits there and gives the place back
                // if it gives up (a failed round trip may have queued it too, without our knowing)
                to.inStoreQueue |= queued || (failure != null && queueOrdered);
                s.waiters.addFirst(to);
                s.signalWaiters();
            }
        } finally {
            s.mutex.unlock();
        }
        if (granted != null) {
            metrics.handedOff(s.key.name());
            metrics.acquired(s.key.name(), 0);
            from.lock.fireReleased(from.fencingToken);
            to.lock.fireAcquired(granted.fencingToken);
            return;
        }
        if (queued || endedInFlight) {
            from.lock.fireReleased(from.fencingToken);
            return;
        }
        if (failure != null) {
            throw storeFailure("release", s.key, failure);
        }
        metrics.lost(from.name());
        from.lock.fireLost(from.fencingToken, null);
        throw from.lostException();
    }
}
