package io.distlock.testkit.history;

import io.distlock.testkit.history.ClientEvent.Op;
import io.distlock.testkit.history.NemesisEvent.Phase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/*
 * Overview
 *
 * L6, "held by nobody while asked for": a liveness property none of S1-S4 and L1-L5 covers. A store that keeps a
 * grant for no live holder (a hold the library gave up but did not end in the store, an acquire whose answer was lost
 * and never cleaned up) leaves every other client's acquire busy, while no client believes it holds the lock; safety
 * holds throughout, and L3 passes once the grant goes away before the probe.
 *
 * Per key, over the history's time line:
 *   held:   the union of believed holds, each from its acquire's ok to the first of its release's invocation, its
 *           loss report, or its process's last event (a process that died holding believed nothing after that).
 *           Acquires with an unknown outcome are not holds: a grant they left behind is what L6 looks for.
 *   asked:  the union of acquire attempts (probes included), each from its invocation to its outcome (ok, busy,
 *           error), or to its process's last event if it has none.
 *   exempt: every fault's window, from its start to its end plus the bound (a grant a fault left behind may live that
 *           long: a killed holder's lease, an expired session's hold), whatever key or target it names; a fault that
 *           never ended exempts the rest of the history.
 * A key is idle while asked for at t when asked > 0, held = 0 and exempt = 0. Each maximal stretch of such time is
 * measured; one longer than the bound is a violation. The bound is the backend's effective expiry plus slack, so a
 * hand-off, a poll's back-off or a grant that expires by its lease stays well within it.
 */
final class IdleCheck {
    private IdleCheck() {}

    private record Span(long from, long to, String who) {}

    static PropertyResult l6(History history, List<Acquisition> acquisitions, Duration bound) {
        long b = bound.toNanos();
        Map<String, Long> lastOf = new HashMap<>();
        long historyEnd = 0;
        for (ClientEvent e : history.client()) {
            lastOf.merge(e.process(), e.t(), Math::max);
            historyEnd = Math.max(historyEnd, e.t());
        }
        List<Span> exempt = exemptWindows(history, b);
        Map<String, List<Span>> held = new LinkedHashMap<>();
        for (Acquisition a : acquisitions) {
            if (!a.ok()) {
                continue;
            }
            long from = a.okAt();
            long to = lastOf.getOrDefault(a.process(), from);
            if (a.tRelease() != null) {
                to = Math.min(to, a.tRelease());
            }
            if (a.tLost() != null) {
                to = Math.min(to, a.tLost());
            }
            held.computeIfAbsent(a.key(), k -> new ArrayList<>())
                    .add(new Span(from, Math.max(from, to), a.acq() + " (" + a.process() + ")"));
        }
        Map<String, List<Span>> asked = asked(history, lastOf);
        List<Violation> out = new ArrayList<>();
        long longest = -1;
        for (Map.Entry<String, List<Span>> k : asked.entrySet()) {
            List<Span> hs = held.getOrDefault(k.getKey(), List.of());
            for (Span idle : idleStretches(k.getValue(), hs, exempt)) {
                long length = idle.to() - idle.from();
                longest = Math.max(longest, length);
                if (length > b) {
                    out.add(new Violation(
                            Property.L6,
                            k.getKey(),
                            idle.from(),
                            idle.to(),
                            k.getKey() + " was held by nobody for " + SafetyChecks.millis(length) + " ms while "
                                    + askers(k.getValue(), idle) + " asked for it (bound " + bound.toMillis()
                                    + " ms); the last hold before: " + lastHoldBefore(hs, idle.from())));
                }
            }
        }
        if (longest < 0) {
            return PropertyResult.notApplicable(Property.L6, "no client asked for a free key outside the faults");
        }
        long measure = SafetyChecks.millis(longest);
        return PropertyResult.judged(
                Property.L6, out, measure, "longest stretch held by nobody while asked for " + measure + " ms");
    }

    private static List<Span> exemptWindows(History history, long grace) {
        List<Span> out = new ArrayList<>();
        for (NemesisEvent n : history.nemesis()) {
            if (n.phase() != Phase.START) {
                continue;
            }
            long end = Long.MAX_VALUE;
            for (NemesisEvent m : history.nemesis()) {
                if (m.phase() == Phase.END
                        && m.t() >= n.t()
                        && m.fault().equals(n.fault())
                        && m.target().equals(n.target())) {
                    end = m.t() > Long.MAX_VALUE - grace ? Long.MAX_VALUE : m.t() + grace;
                    break;
                }
            }
            out.add(new Span(n.t(), end, n.fault() + " on " + n.target()));
        }
        return out;
    }

    /** Each key's acquire attempts, from invocation to outcome (or the process's last event). */
    private static Map<String, List<Span>> asked(History history, Map<String, Long> lastOf) {
        Map<String, ClientEvent> invokes = new LinkedHashMap<>();
        Map<String, Long> outcomes = new HashMap<>();
        for (ClientEvent e : history.client()) {
            if (e.f() != Op.ACQUIRE) {
                continue;
            }
            String id = e.process() + "\u0000" + e.acq();
            if (e.type() == ClientEvent.Type.INVOKE) {
                invokes.putIfAbsent(id, e);
            } else {
                outcomes.putIfAbsent(id, e.t());
            }
        }
        Map<String, List<Span>> out = new LinkedHashMap<>();
        for (Map.Entry<String, ClientEvent> i : invokes.entrySet()) {
            ClientEvent e = i.getValue();
            long to = outcomes.getOrDefault(i.getKey(), lastOf.getOrDefault(e.process(), e.t()));
            out.computeIfAbsent(e.key(), k -> new ArrayList<>()).add(new Span(e.t(), Math.max(e.t(), to), e.process()));
        }
        return out;
    }

    /** The maximal stretches where some attempt is pending, no hold is believed and no fault window is open. */
    private static List<Span> idleStretches(List<Span> asked, List<Span> held, List<Span> exempt) {
        TreeMap<Long, int[]> delta = new TreeMap<>(); // at each time, the change of [asked, held, exempt]
        add(asked, 0, delta);
        add(held, 1, delta);
        add(exempt, 2, delta);
        int[] open = new int[3];
        List<Span> out = new ArrayList<>();
        Long start = null;
        for (Map.Entry<Long, int[]> at : delta.entrySet()) {
            long t = at.getKey();
            int[] d = at.getValue();
            for (int i = 0; i < 3; i++) {
                open[i] += d[i];
            }
            boolean idle = open[0] > 0 && open[1] == 0 && open[2] == 0;
            if (idle && start == null) {
                start = t;
            } else if (!idle && start != null) {
                out.add(new Span(start, t, ""));
                start = null;
            }
        }
        return out;
    }

    private static void add(List<Span> spans, int which, TreeMap<Long, int[]> delta) {
        for (Span s : spans) {
            if (s.to() <= s.from()) {
                continue; // empty: never open
            }
            delta.computeIfAbsent(s.from(), t -> new int[3])[which]++;
            if (s.to() != Long.MAX_VALUE) {
                delta.computeIfAbsent(s.to(), t -> new int[3])[which]--;
            }
        }
    }

    private static String askers(List<Span> asked, Span idle) {
        Map<String, Integer> attempts = new LinkedHashMap<>();
        for (Span a : asked) {
            if (a.from() < idle.to() && a.to() > idle.from()) {
                attempts.merge(a.who(), 1, Integer::sum);
            }
        }
        List<String> parts = new ArrayList<>();
        attempts.forEach((who, n) -> parts.add(who + " (" + n + " attempts)"));
        return String.join(", ", parts);
    }

    private static String lastHoldBefore(List<Span> held, long t) {
        Span last = null;
        for (Span h : held) {
            if (h.to() <= t && (last == null || h.to() > last.to())) {
                last = h;
            }
        }
        return last == null
                ? "none"
                : last.who() + ", believed until " + SafetyChecks.millis(t - last.to()) + " ms before";
    }
}
