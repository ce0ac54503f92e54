package io.distlock.testkit.history;

import io.distlock.testkit.history.ClientEvent.Op;
import io.distlock.testkit.history.NemesisEvent.Effect;
import io.distlock.testkit.history.NemesisEvent.Phase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/*
 * Overview
 *
 * The liveness checkers of FAULTS.md section 6.2, driven by the faults' own log entries.
 *
 * L1: for each fault that starts with effect HOLDER_DOWN on a key at t_c, the holders at t_c are the acquisitions that
 * had returned a hold and had not ended (release invoked, loss reported) by then. When some of them belong to the
 * fault's target process, only those are the downed holders: a hold of another process that was granted after the
 * downed hold began, and before t_c, was granted because the fault had already taken effect when its entry was
 * written (a killed process's connections close at once), and counts as a takeover in 0 ms. The takeover time is from
 * t_c to the first hold another client process got after the downed holds began (the downed process's own threads do
 * not take over). A fault with nobody holding at t_c is not judged; one with waiters but no takeover is a breach.
 *
 * L3: every (process, key) that probed after the faults healed must have one successful probe.
 *
 * L4: the leftovers the scenario counted in the store after quiescence must be zero.
 *
 * L5: for each fault that starts with effect HOLD_REMOVED on a key at t_x and ends at t_e, the holders are the
 * acquisitions that returned a hold by t_e and had not begun to release or been reported lost by t_x. Each must be
 * told (listener, or a release answering "lost") within the bound after t_x; a release that answered ok after t_e is a
 * breach (when the fault had one holder to remove, so that it surely removed that one).
 */
final class LivenessChecks {
    private LivenessChecks() {}

    static PropertyResult l1(History history, List<Acquisition> acquisitions, Duration bound) {
        List<Violation> out = new ArrayList<>();
        long worst = -1;
        int judged = 0;
        for (NemesisEvent n : starts(history, Effect.HOLDER_DOWN)) {
            long tc = n.t();
            Set<String> holders = new HashSet<>();
            Set<String> holderProcesses = new HashSet<>();
            for (Acquisition a : acquisitions) {
                if (a.key().equals(n.key()) && heldAt(a, tc)) {
                    holders.add(a.acq());
                    holderProcesses.add(a.process());
                }
            }
            String target = clientOf(n.target());
            if (holderProcesses.contains(target)) {
                holders.clear();
                for (Acquisition a : acquisitions) {
                    if (a.key().equals(n.key()) && heldAt(a, tc) && a.process().equals(target)) {
                        holders.add(a.acq());
                    }
                }
                holderProcesses.clear();
                holderProcesses.add(target);
            } else if (acquisitions.stream().anyMatch(a -> a.process().equals(target))) {
                continue; // the fault hit a client that held nothing then (it had begun its release, say)
            }
            if (holders.isEmpty()) {
                continue;
            }
            judged++;
            long downedSince = Long.MAX_VALUE;
            for (Acquisition a : acquisitions) {
                if (holders.contains(a.acq())) {
                    downedSince = Math.min(downedSince, a.okAt());
                }
            }
            Acquisition next = null;
            boolean waiters = false;
            for (Acquisition a : acquisitions) {
                // a takeover is by another client: the downed process's own threads do not count
                if (!a.key().equals(n.key()) || holderProcesses.contains(a.process())) {
                    continue;
                }
                waiters = true;
                if (a.ok() && a.okAt() > downedSince && (next == null || a.okAt() < next.okAt())) {
                    next = a;
                }
            }
            waiters |= history.client().stream()
                    .anyMatch(e -> e.key().equals(n.key())
                            && e.f() == Op.ACQUIRE
                            && e.type() == ClientEvent.Type.INVOKE
                            && !holderProcesses.contains(e.process())
                            && e.t() > tc);
            if (next == null) {
                if (waiters) {
                    out.add(new Violation(
                            Property.L1,
                            n.key(),
                            tc,
                            tc + bound.toNanos(),
                            "nobody took the lock over after " + n.fault() + " of " + n.target() + " hit holder(s) "
                                    + holders));
                }
                continue;
            }
            long took = Math.max(0, next.okAt() - tc);
            worst = Math.max(worst, took);
            if (took > bound.toNanos()) {
                out.add(new Violation(
                        Property.L1,
                        n.key(),
                        tc,
                        next.okAt(),
                        next.acq() + " took the lock over " + SafetyChecks.millis(took) + " ms after " + n.fault()
                                + " of " + n.target() + " (bound " + bound.toMillis() + " ms)"));
            }
        }
        if (judged == 0) {
            return PropertyResult.notApplicable(Property.L1, "no fault hit a holder");
        }
        Long measure = worst < 0 ? null : SafetyChecks.millis(worst);
        return PropertyResult.judged(
                Property.L1, out, measure, judged + " holder faults, longest takeover " + measure + " ms");
    }

    /** The client a fault's target names: the process itself, or the client of a proxy named "c1->6379". */
    private static String clientOf(String target) {
        int arrow = target.indexOf("->");
        return arrow < 0 ? target : target.substring(0, arrow);
    }

    private static boolean heldAt(Acquisition a, long t) {
        if (!a.ok() || a.okAt() > t) {
            return false;
        }
        // once the release is sent the holder is done with the lock, whenever the answer comes
        Long end = a.tRelease();
        if (end != null && end <= t) {
            return false;
        }
        return a.tLost() == null || a.tLost() > t;
    }

    static PropertyResult l3(History history) {
        Map<String, Boolean> probes = new LinkedHashMap<>();
        List<ClientEvent> failures = new ArrayList<>();
        for (ClientEvent e : history.client()) {
            if (e.f() != Op.PROBE || e.type() == ClientEvent.Type.INVOKE) {
                continue;
            }
            String who = e.process() + " " + e.key();
            probes.merge(who, e.type() == ClientEvent.Type.OK, Boolean::logicalOr);
            if (e.type() != ClientEvent.Type.OK) {
                failures.add(e);
            }
        }
        if (probes.isEmpty()) {
            return PropertyResult.notApplicable(Property.L3, "no probe");
        }
        List<Violation> out = new ArrayList<>();
        for (Map.Entry<String, Boolean> p : probes.entrySet()) {
            if (!p.getValue()) {
                ClientEvent last = failures.stream()
                        .filter(e -> (e.process() + " " + e.key()).equals(p.getKey()))
                        .reduce((a, b) -> b)
                        .orElseThrow();
                out.add(new Violation(
                        Property.L3,
                        last.key(),
                        last.t(),
                        last.t(),
                        last.process() + " could not take " + last.key() + " after the faults healed: "
                                + last.error()));
            }
        }
        return PropertyResult.judged(Property.L3, out, null, probes.size() + " probes, " + out.size() + " failed");
    }

    static PropertyResult l4(History history) {
        long total = 0;
        List<Violation> out = new ArrayList<>();
        boolean any = false;
        for (ClientEvent e : history.client()) {
            if (e.f() != Op.LEFTOVERS) {
                continue;
            }
            any = true;
            long n = e.value() == null ? 0 : e.value();
            total += n;
            if (n > 0) {
                out.add(new Violation(Property.L4, e.key(), e.t(), e.t(), n + " left in the store: " + e.error()));
            }
        }
        if (!any) {
            return PropertyResult.notApplicable(Property.L4, "the store was not scanned");
        }
        return PropertyResult.judged(Property.L4, out, total, total + " leftovers");
    }

    static PropertyResult l5(History history, List<Acquisition> acquisitions, Duration bound) {
        List<Violation> out = new ArrayList<>();
        long worst = -1;
        int judged = 0;
        long lastEvent = history.client().isEmpty()
                ? 0
                : history.client().get(history.client().size() - 1).t();
        for (NemesisEvent n : starts(history, Effect.HOLD_REMOVED)) {
            long tx = n.t();
            long te = endOf(history, n);
            List<Acquisition> holders = new ArrayList<>();
            for (Acquisition a : acquisitions) {
                if (a.key().equals(n.key())
                        && a.ok()
                        && a.okAt() <= te
                        && (a.tRelease() == null || a.tRelease() > tx)
                        && (a.tLost() == null || a.tLost() >= tx)) {
                    holders.add(a);
                }
            }
            if (holders.isEmpty()) {
                continue;
            }
            judged++;
            for (Acquisition a : holders) {
                if (a.tLost() != null) {
                    long took = a.tLost() - tx;
                    worst = Math.max(worst, took);
                    if (took > bound.toNanos()) {
                        out.add(new Violation(
                                Property.L5,
                                a.key(),
                                tx,
                                a.tLost(),
                                a.acq() + " (" + a.process() + ") was told of the loss " + SafetyChecks.millis(took)
                                        + " ms after " + n.fault() + " (bound " + bound.toMillis() + " ms)"));
                    }
                } else if (a.releaseOutcome() == ClientEvent.Type.OK && a.tRelease() != null && a.tRelease() > te) {
                    if (holders.size() == 1) {
                        out.add(new Violation(
                                Property.L5,
                                a.key(),
                                tx,
                                a.tReleaseDone() == null ? a.tRelease() : a.tReleaseDone(),
                                a.acq() + " (" + a.process() + ") released ok a hold that " + n.fault()
                                        + " had removed"));
                    }
                } else if (a.releaseOutcome() == null
                        && lastEvent - tx > bound.toNanos()
                        && alive(history, a, tx, bound)) {
                    out.add(new Violation(
                            Property.L5,
                            a.key(),
                            tx,
                            tx + bound.toNanos(),
                            a.acq() + " (" + a.process() + ") was never told that " + n.fault() + " removed its hold"));
                }
            }
        }
        if (judged == 0) {
            return PropertyResult.notApplicable(Property.L5, "no fault removed a hold");
        }
        Long measure = worst < 0 ? null : SafetyChecks.millis(worst);
        return PropertyResult.judged(
                Property.L5, out, measure, judged + " removals, slowest report " + measure + " ms");
    }

    /** Whether the holder's process recorded anything after {@code t + bound}: it was alive to be told. */
    private static boolean alive(History history, Acquisition a, long t, Duration bound) {
        long after = t + bound.toNanos();
        return history.client().stream().anyMatch(e -> e.process().equals(a.process()) && e.t() > after);
    }

    private static List<NemesisEvent> starts(History history, Effect effect) {
        return history.nemesis().stream()
                .filter(n -> n.phase() == Phase.START
                        && n.effect() == effect
                        && !n.key().isEmpty())
                .toList();
    }

    private static long endOf(History history, NemesisEvent start) {
        for (NemesisEvent n : history.nemesis()) {
            if (n.phase() == Phase.END
                    && n.t() >= start.t()
                    && n.fault().equals(start.fault())
                    && n.target().equals(start.target())) {
                return n.t();
            }
        }
        return start.t();
    }
}
