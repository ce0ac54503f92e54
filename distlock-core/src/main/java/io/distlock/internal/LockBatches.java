package io.distlock.internal;

import io.distlock.DistributedLock;
import io.distlock.LockHold;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * Runs
 *   A multi-lock's members are sorted by name; a run is a stretch of consecutive members that are plain (not fair)
 *   locks of one engine whose store AcquiresTogether. The multi-lock offers each position to tryLockRun or
 *   tryAcquireRun first: a run of two or more members is tried in one batched attempt (LockAcquirer.tryTogether),
 *   which keeps the members granted before the first busy one. Anything else (a member of another kind or client, a
 *   store without the ability, a name with local state) answers 0 or nothing without a round trip, and the multi-lock
 *   takes the member on its own.
 *
 * Releasing
 *   unlockAll and releaseAll end each engine's members in one batched release (LockReleaser), the others one by one
 *   in reverse order, and give each member's outcome by position.
 */
/**
 * Batched steps over several locks of one client, for {@code io.distlock.MultiLock}. Public only so that package can
 * reach it; not API.
 */
public final class LockBatches {
    private LockBatches() {}

    /**
     * Takes, for the calling thread, the run of members that starts at {@code from} in one batched attempt (no wait).
     *
     * @return how many members from {@code from} on the thread now holds: 0 when there is no run there (nothing was
     *     asked) or its first member was busy
     */
    public static int tryLockRun(
            List<DistributedLock> members, int from, @Nullable Duration fixedLease, boolean interruptible)
            throws InterruptedException {
        List<EngineLock> run = run(members, from);
        if (run.isEmpty()) {
            return 0;
        }
        List<HoldImpl> holds = run.get(0).host.tryTogether(run, true, fixedLease, interruptible);
        return holds == null ? 0 : holds.size();
    }

    /**
     * Takes a fresh hold of each member of the run that starts at {@code from}, in one batched attempt (no wait).
     *
     * @return the holds of the members from {@code from} on that were granted before the first busy one; empty when
     *     there is no run there (nothing was asked) or its first member was busy
     */
    public static List<LockHold> tryAcquireRun(List<DistributedLock> members, int from, @Nullable Duration fixedLease)
            throws InterruptedException {
        List<EngineLock> run = run(members, from);
        if (run.isEmpty()) {
            return List.of();
        }
        List<HoldImpl> holds = run.get(0).host.tryTogether(run, false, fixedLease, true);
        return holds == null ? List.of() : Collections.unmodifiableList(holds);
    }

    /** The plain locks of one engine that can be tried together from {@code from} on; empty when fewer than two. */
    private static List<EngineLock> run(List<DistributedLock> members, int from) {
        if (from + 1 >= members.size() || !(members.get(from) instanceof EngineLock first) || !batchable(first)) {
            return List.of();
        }
        List<EngineLock> run = new ArrayList<>();
        run.add(first);
        for (int i = from + 1; i < members.size(); i++) {
            if (!(members.get(i) instanceof EngineLock l) || l.host != first.host || l.fair) {
                break;
            }
            run.add(l);
        }
        return run.size() < 2 ? List.of() : run;
    }

    private static boolean batchable(EngineLock l) {
        return !l.fair && l.host.acquiresTogether();
    }

    /**
     * The calling thread's unlock of every member: the members of an engine whose store releases together in one
     * batched release, the others one by one in reverse order.
     *
     * @return each member's outcome by position: null, or what its own {@code unlock()} threw
     */
    public static List<@Nullable RuntimeException> unlockAll(List<DistributedLock> members) {
        int n = members.size();
        List<@Nullable RuntimeException> outcomes = new ArrayList<>(Collections.nCopies(n, null));
        List<List<Integer>> groups = groups(members);
        for (List<Integer> group : groups) {
            if (group.size() == 1) {
                int i = group.get(0);
                try {
                    members.get(i).unlock();
                } catch (RuntimeException e) {
                    outcomes.set(i, e);
                }
                continue;
            }
            List<EngineLock> locks = new ArrayList<>(group.size());
            for (int i : group) {
                locks.add((EngineLock) members.get(i));
            }
            List<@Nullable RuntimeException> got = locks.get(0).host.unlockTogether(locks);
            for (int k = 0; k < group.size(); k++) {
                outcomes.set(group.get(k), got.get(k));
            }
        }
        return outcomes;
    }

    /**
     * Releases every hold: the holds of an engine whose store releases together in one batched release, the others
     * one by one in reverse order.
     *
     * @return each hold's outcome by position: null, or what its own {@code release()} threw
     */
    public static List<@Nullable RuntimeException> releaseAll(List<LockHold> holds) {
        int n = holds.size();
        List<@Nullable RuntimeException> outcomes = new ArrayList<>(Collections.nCopies(n, null));
        List<List<Integer>> groups = new ArrayList<>();
        List<LockEngine> engines = new ArrayList<>();
        for (int i = n - 1; i >= 0; i--) {
            LockHold h = holds.get(i);
            int g = -1;
            if (h instanceof HoldImpl hi && !hi.threadView && hi.engine.acquiresTogether()) {
                g = engines.indexOf(hi.engine);
                if (g < 0) {
                    engines.add(hi.engine);
                    groups.add(new ArrayList<>());
                    g = groups.size() - 1;
                }
                groups.get(g).add(i);
                continue;
            }
            try {
                h.release();
            } catch (RuntimeException e) {
                outcomes.set(i, e);
            }
        }
        for (int g = 0; g < groups.size(); g++) {
            List<Integer> group = groups.get(g);
            List<HoldImpl> batch = new ArrayList<>(group.size());
            for (int i : group) {
                batch.add((HoldImpl) holds.get(i));
            }
            if (batch.size() == 1) {
                try {
                    batch.get(0).release();
                } catch (RuntimeException e) {
                    outcomes.set(group.get(0), e);
                }
                continue;
            }
            List<@Nullable RuntimeException> got = engines.get(g).releaseTogether(batch);
            for (int k = 0; k < group.size(); k++) {
                outcomes.set(group.get(k), got.get(k));
            }
        }
        return outcomes;
    }

    /**
     * The members in release groups: one group per engine whose store releases together (its plain and fair locks),
     * and a group of one for every other member, in reverse order of the members.
     */
    private static List<List<Integer>> groups(List<DistributedLock> members) {
        List<List<Integer>> groups = new ArrayList<>();
        List<LockEngine> engines = new ArrayList<>();
        List<Integer> engineGroup = new ArrayList<>();
        for (int i = members.size() - 1; i >= 0; i--) {
            if (members.get(i) instanceof EngineLock l && l.host.acquiresTogether()) {
                int e = engines.indexOf(l.host);
                if (e >= 0) {
                    groups.get(engineGroup.get(e)).add(i);
                    continue;
                }
                engines.add(l.host);
                engineGroup.add(groups.size());
            }
            List<Integer> g = new ArrayList<>();
            g.add(i);
            groups.add(g);
        }
        return groups;
    }
}
