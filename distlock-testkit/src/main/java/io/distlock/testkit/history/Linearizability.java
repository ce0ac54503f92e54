package io.distlock.testkit.history;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * A linearizability check of one key's history against the fenced-mutex model (FAULTS.md section 6.3), after
 * Hazelcast's Jepsen FencedMutex: the state is (owner or FREE, lastFence); acquire(c, t) is legal iff the lock is FREE
 * and t > lastFence, and makes (c, t); end(c) is legal iff c owns it, and frees it.
 *
 * Operations from acquisitions:
 *   - an acquire that returned a hold: acquire(acq, token) over [t_inv, t_ok];
 *   - its end: a release that answered ok is end(acq) over [t_release, t_release_done]; a hold the library reported
 *     lost ended somewhere between the last moment its client believed in it and the report, so end(acq) over
 *     [beliefEnd, t_lost]; a hold whose release is unknown, or whose process died, ends over [beliefEnd, +inf);
 *   - an acquire with an unknown outcome may have happened: acquire(acq, ?) and end(acq), both over [t_inv, +inf),
 *     and neither need be linearized.
 *
 * Algorithm: Wing and Gong's search with Lowe's just-in-time linearization and memoization (the algorithm of Knossos'
 * wgl and of Porcupine). Call and return entries sit in one list sorted by time (calls first on ties, so that
 * touching operations count as concurrent). Walking the list from the start, a call whose operation the model accepts
 * in the current state is linearized: both its entries are lifted out of the list, the (linearized set, state) pair is
 * remembered, and the walk restarts from the head. Reaching the return of an operation that is not linearized means
 * the current choice failed: pop the last linearized operation, put its entries back, and try the next call after it.
 * Reaching a return at +inf means every finite operation is linearized: the history is linearizable. Pairs seen
 * before are skipped, which keeps the search polynomial on the near-sequential histories a lock produces.
 *
 * Limits: the search stops at a time cap and answers UNKNOWN, as Jepsen does for crash-heavy histories.
 */
final class Linearizability {
    private Linearizability() {}

    /** A verdict for one key. */
    enum Outcome {
        LINEARIZABLE,
        NOT_LINEARIZABLE,
        UNKNOWN
    }

    record Result(Outcome outcome, String detail, long from, long to, int operations) {}

    /** An operation of the model. {@code ret} is {@link Long#MAX_VALUE} for +inf. */
    record Operation(int id, String acq, boolean acquire, @Nullable Long token, long call, long ret) {}

    private record State(@Nullable String owner, long lastFence) {}

    private record Memo(BitSet linearized, State state) {}

    private static final class Entry {
        final Operation op;
        final boolean call;
        final long time;

        @Nullable
        Entry match;

        @Nullable
        Entry prev;

        @Nullable
        Entry next;

        Entry(Operation op, boolean call, long time) {
            this.op = op;
            this.call = call;
            this.time = time;
        }
    }

    private record Frame(Entry entry, State state) {}

    static List<Operation> operations(List<Acquisition> acquisitions) {
        List<Operation> ops = new ArrayList<>();
        for (Acquisition a : acquisitions) {
            if (a.ok()) {
                long tOk = Objects.requireNonNull(a.tOk());
                ops.add(new Operation(ops.size(), a.acq(), true, a.token(), a.tInv(), tOk));
                if (a.releaseOutcome() == ClientEvent.Type.OK && a.tRelease() != null && a.tReleaseDone() != null) {
                    ops.add(new Operation(ops.size(), a.acq(), false, null, a.tRelease(), a.tReleaseDone()));
                } else if (a.tLost() != null) {
                    long ret = Math.max(a.beliefEnd(), a.tLost());
                    ops.add(new Operation(ops.size(), a.acq(), false, null, a.beliefEnd(), ret));
                } else {
                    ops.add(new Operation(ops.size(), a.acq(), false, null, a.beliefEnd(), Long.MAX_VALUE));
                }
            } else {
                ops.add(new Operation(ops.size(), a.acq(), true, null, a.tInv(), Long.MAX_VALUE));
                ops.add(new Operation(ops.size(), a.acq(), false, null, a.tInv(), Long.MAX_VALUE));
            }
        }
        return ops;
    }

    static Result check(List<Operation> ops, long capNanos) {
        if (ops.isEmpty()) {
            return new Result(Outcome.LINEARIZABLE, "no operations", 0, 0, 0);
        }
        List<Entry> entries = new ArrayList<>();
        for (Operation op : ops) {
            Entry call = new Entry(op, true, op.call());
            Entry ret = new Entry(op, false, op.ret());
            call.match = ret;
            entries.add(call);
            entries.add(ret);
        }
        entries.sort(Comparator.comparingLong((Entry e) -> e.time).thenComparing(e -> !e.call));
        Entry head =
                new Entry(new Operation(-1, "", false, null, Long.MIN_VALUE, Long.MIN_VALUE), true, Long.MIN_VALUE);
        Entry last = head;
        for (Entry e : entries) {
            last.next = e;
            e.prev = last;
            last = e;
        }
        long deadline = System.nanoTime() + capNanos;
        State state = new State(null, Long.MIN_VALUE);
        BitSet linearized = new BitSet(ops.size());
        Set<Memo> seen = new HashSet<>();
        Deque<Frame> stack = new ArrayDeque<>();
        Entry furthest = null;
        long steps = 0;
        Entry entry = head.next;
        while (head.next != null && entry != null) {
            if ((++steps & 0x3FF) == 0 && System.nanoTime() - deadline > 0) {
                return new Result(
                        Outcome.UNKNOWN,
                        "search stopped after " + (capNanos / 1_000_000) + " ms at " + linearized.cardinality() + " of "
                                + ops.size() + " operations",
                        0,
                        0,
                        ops.size());
            }
            if (entry.call) {
                State next = step(state, entry.op);
                if (next != null) {
                    BitSet after = (BitSet) linearized.clone();
                    after.set(entry.op.id());
                    if (seen.add(new Memo(after, next))) {
                        stack.push(new Frame(entry, state));
                        state = next;
                        linearized = after;
                        lift(entry);
                        entry = head.next;
                        continue;
                    }
                }
                entry = entry.next;
            } else {
                if (entry.time == Long.MAX_VALUE) {
                    return new Result(Outcome.LINEARIZABLE, "", 0, 0, ops.size());
                }
                if (furthest == null || entry.time > furthest.time) {
                    furthest = entry;
                }
                if (stack.isEmpty()) {
                    Entry blame = Objects.requireNonNull(furthest);
                    return new Result(
                            Outcome.NOT_LINEARIZABLE,
                            "no order of the operations explains " + describe(blame.op) + " in the fenced-mutex model",
                            blame.op.call(),
                            blame.op.ret(),
                            ops.size());
                }
                Frame f = stack.pop();
                state = f.state();
                linearized = (BitSet) linearized.clone();
                linearized.clear(f.entry().op.id());
                unlift(f.entry());
                entry = f.entry().next;
            }
        }
        return new Result(Outcome.LINEARIZABLE, "", 0, 0, ops.size());
    }

    private static @Nullable State step(State s, Operation op) {
        if (op.acquire()) {
            if (s.owner() != null) {
                return null;
            }
            if (op.token() == null) {
                return new State(op.acq(), s.lastFence());
            }
            return op.token() > s.lastFence() ? new State(op.acq(), op.token()) : null;
        }
        return op.acq().equals(s.owner()) ? new State(null, s.lastFence()) : null;
    }

    private static void lift(Entry call) {
        unlink(call);
        unlink(Objects.requireNonNull(call.match));
    }

    private static void unlink(Entry e) {
        Objects.requireNonNull(e.prev).next = e.next;
        if (e.next != null) {
            e.next.prev = e.prev;
        }
    }

    private static void unlift(Entry call) {
        relink(Objects.requireNonNull(call.match));
        relink(call);
    }

    private static void relink(Entry e) {
        Objects.requireNonNull(e.prev).next = e;
        if (e.next != null) {
            e.next.prev = e;
        }
    }

    private static String describe(Operation op) {
        return (op.acquire() ? "acquire" : "end") + " of " + op.acq()
                + (op.token() == null ? "" : " (token " + op.token() + ")");
    }
}
