package io.distlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * One asynchronous acquisition of a MultiLock: the members are taken one after another in the multi-lock's canonical
 * order, each through its own asynchronous acquire, the next one started from the completion of the one before. No
 * thread waits: each step is a callback of the member's future.
 *
 * Deadline
 *   A timed acquisition gives each member what is left of one deadline. With a fixed lease, a set whose first member's
 *   lease ran out before the last member was granted was never held together: it is released and taken again within
 *   the same deadline, as the blocking path does.
 *
 * Cancellation and failure
 *   Cancelling the result cancels the member acquire in progress (whose own cancellation leaves nothing behind) and
 *   releases the members taken; a member granted after the result was cancelled is released at once. A member that
 *   fails or is not granted in time ends the acquisition the same way. Everything is guarded by this object's monitor,
 *   so a cancel racing a member's grant releases that member exactly once.
 */
final class MultiLockAsync {
    private final List<DistributedLock> members;
    private final BiFunction<DistributedLock, Duration, CompletableFuture<Optional<LockHold>>> step;
    private final long deadline;
    private final @Nullable Duration lease;
    private final BiFunction<List<LockHold>, Long, Optional<LockHold>> finish;
    private final CompletableFuture<Optional<LockHold>> result = new CompletableFuture<>();
    private final List<LockHold> taken = new ArrayList<>();
    private @Nullable CompletableFuture<Optional<LockHold>> current;
    private long firstGrant;

    private MultiLockAsync(
            List<DistributedLock> members,
            BiFunction<DistributedLock, Duration, CompletableFuture<Optional<LockHold>>> step,
            long deadline,
            @Nullable Duration lease,
            BiFunction<List<LockHold>, Long, Optional<LockHold>> finish) {
        this.members = members;
        this.step = step;
        this.deadline = deadline;
        this.lease = lease;
        this.finish = finish;
    }

    /**
     * Starts taking {@code members}; {@code step} acquires one member with the time left, {@code finish} turns the
     * taken holds (and the time of the first grant) into the multi-hold, or empty to take the set again.
     */
    static CompletableFuture<Optional<LockHold>> take(
            List<DistributedLock> members,
            BiFunction<DistributedLock, Duration, CompletableFuture<Optional<LockHold>>> step,
            long deadline,
            @Nullable Duration lease,
            BiFunction<List<LockHold>, Long, Optional<LockHold>> finish) {
        MultiLockAsync a = new MultiLockAsync(members, step, deadline, lease, finish);
        a.result.whenComplete((v, e) -> {
            if (a.result.isCancelled()) {
                a.cancelled();
            }
        });
        a.next();
        return a.result;
    }

    private void next() {
        CompletableFuture<Optional<LockHold>> f;
        synchronized (this) {
            if (result.isDone()) {
                releaseTaken();
                return;
            }
            if (taken.size() == members.size()) {
                complete();
                return;
            }
            DistributedLock m = members.get(taken.size());
            Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
            try {
                f = step.apply(m, left);
            } catch (RuntimeException e) {
                releaseTaken();
                result.completeExceptionally(e);
                return;
            }
            current = f;
        }
        f.whenComplete(this::granted);
    }

    private void granted(@Nullable Optional<LockHold> hold, @Nullable Throwable error) {
        synchronized (this) {
            current = null;
            if (hold != null && hold.isPresent()) {
                if (taken.isEmpty()) {
                    firstGrant = System.nanoTime();
                }
                taken.add(hold.get());
            }
            if (result.isDone()) {
                releaseTaken();
                return;
            }
            if (error != null) {
                releaseTaken();
                result.completeExceptionally(error);
                return;
            }
            if (hold == null || hold.isEmpty()) {
                releaseTaken();
                result.complete(Optional.empty());
                return;
            }
        }
        next();
    }

    /** Called with every member taken, under the monitor. */
    private void complete() {
        Duration l = lease;
        if (l != null && System.nanoTime() - firstGrant >= l.toNanos()) {
            releaseTaken();
            if (deadline - System.nanoTime() <= 0) {
                result.complete(Optional.empty());
            } else {
                CompletableFuture.runAsync(this::next);
            }
            return;
        }
        Optional<LockHold> hold;
        try {
            hold = finish.apply(List.copyOf(taken), firstGrant);
        } catch (RuntimeException e) {
            releaseTaken();
            result.completeExceptionally(e);
            return;
        }
        taken.clear();
        if (!result.complete(hold) && hold.isPresent()) {
            // cancelled meanwhile: the caller will never see this hold
            hold.get().release();
        }
    }

    private synchronized void cancelled() {
        CompletableFuture<Optional<LockHold>> f = current;
        if (f != null) {
            f.cancel(false);
        }
        releaseTaken();
    }

    /** Releases the members taken so far, newest first, under the monitor. */
    private void releaseTaken() {
        for (int i = taken.size() - 1; i >= 0; i--) {
            try {
                taken.get(i).release();
            } catch (LockLostException e) {
                // a fixed lease that ended meanwhile: nothing is left to release
            } catch (RuntimeException e) {
                // the member's own lease ends it; the acquisition's outcome does not change
            }
        }
        taken.clear();
    }
}
