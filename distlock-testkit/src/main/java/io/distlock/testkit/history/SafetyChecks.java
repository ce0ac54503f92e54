package io.distlock.testkit.history;

import io.distlock.testkit.history.ClientEvent.Op;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/*
 * Overview
 *
 * The cheap safety checkers of FAULTS.md section 6.2, each O(n log n) in the number of events.
 *
 * S1: per key, the believed-hold intervals [t_ok, beliefEnd] of acquisitions that returned a hold, swept in start
 * order against the latest end seen so far; a start before that end is an overlap. A "check ok" after the library
 * reported the hold lost is a breach too (the library believed again in a hold it had given up).
 *
 * S2: per key, acquisitions sorted by t_ok with a running maximum of their tokens; for each acquisition b, the maximum
 * over those that returned before b was invoked (found by binary search) must be below b's token. Two acquisitions
 * with the same token are a breach.
 *
 * S3: the resource log replayed per key: accepted tokens never decrease (on a fenced resource), each accepted token
 * belongs to one acquisition that the clients recorded with that token, every accepted write is an increment of the
 * value it overwrote (otherwise an increment was lost), every write a client saw acknowledged is in the log as
 * accepted, none it saw refused is, and the final value lies in [acknowledged, acknowledged + unknown].
 *
 * S4: per key, arrivals in order; an op of acquisition a arriving after the first op of a later acquisition b is one
 * raw overlap of the pair (a, b), counted once per pair. Measured, not judged.
 */
final class SafetyChecks {
    private SafetyChecks() {}

    static PropertyResult s1(List<Acquisition> acquisitions) {
        List<Violation> out = new ArrayList<>();
        for (List<Acquisition> perKey : byKey(acquisitions).values()) {
            List<Acquisition> ok =
                    new ArrayList<>(perKey.stream().filter(Acquisition::ok).toList());
            ok.sort(Comparator.comparingLong(a -> a.okAt()));
            Acquisition latest = null;
            for (Acquisition b : ok) {
                if (latest != null && b.okAt() < latest.beliefEnd()) {
                    out.add(new Violation(
                            Property.S1,
                            b.key(),
                            b.okAt(),
                            Math.min(latest.beliefEnd(), Math.max(b.okAt(), b.beliefEnd())),
                            "acquisition " + b.acq() + " (" + b.process() + ", token " + b.token()
                                    + ") got the lock while " + latest.acq() + " (" + latest.process() + ", token "
                                    + latest.token() + ") still believed it held it, for "
                                    + millis(latest.beliefEnd() - b.okAt()) + " ms"));
                }
                if (latest == null || b.beliefEnd() > latest.beliefEnd()) {
                    latest = b;
                }
            }
            for (Acquisition a : perKey) {
                if (a.checkOkAfterLost() != null && a.tLost() != null) {
                    out.add(new Violation(
                            Property.S1,
                            a.key(),
                            a.tLost(),
                            a.checkOkAfterLost(),
                            "acquisition " + a.acq() + " (" + a.process()
                                    + ") was reported valid after it was reported lost"));
                }
            }
        }
        out.sort(Comparator.comparingLong(Violation::from));
        long holds = acquisitions.stream().filter(Acquisition::ok).count();
        return PropertyResult.judged(Property.S1, out, null, holds + " holds, " + out.size() + " overlaps");
    }

    static PropertyResult s2(List<Acquisition> acquisitions) {
        List<Violation> out = new ArrayList<>();
        int duplicates = 0;
        for (List<Acquisition> perKey : byKey(acquisitions).values()) {
            List<Acquisition> ok = new ArrayList<>(
                    perKey.stream().filter(a -> a.ok() && a.token() != null).toList());
            ok.sort(Comparator.comparingLong(a -> a.okAt()));
            long[] returned = new long[ok.size()];
            long[] prefixMax = new long[ok.size()];
            int[] prefixArg = new int[ok.size()];
            for (int i = 0; i < ok.size(); i++) {
                returned[i] = ok.get(i).okAt();
                long token = ok.get(i).tokenOr();
                boolean higher = i == 0 || token > prefixMax[i - 1];
                prefixMax[i] = higher ? token : prefixMax[i - 1];
                prefixArg[i] = higher ? i : prefixArg[i - 1];
            }
            for (Acquisition b : ok) {
                int i = lastBefore(returned, b.tInv());
                if (i >= 0 && prefixMax[i] >= b.tokenOr()) {
                    Acquisition a = ok.get(prefixArg[i]);
                    out.add(new Violation(
                            Property.S2,
                            b.key(),
                            a.okAt(),
                            b.okAt(),
                            "acquisition " + b.acq() + " (" + b.process() + ") got token " + b.token()
                                    + " though " + a.acq() + " (" + a.process() + ") had got token " + a.token()
                                    + " before it began"));
                }
            }
            Map<Long, Acquisition> byToken = new HashMap<>();
            for (Acquisition a : ok) {
                Acquisition other = byToken.putIfAbsent(a.tokenOr(), a);
                if (other != null) {
                    out.add(new Violation(
                            Property.S2,
                            a.key(),
                            other.okAt(),
                            a.okAt(),
                            "token " + a.token() + " issued twice: " + other.acq() + " (" + other.process() + ") and "
                                    + a.acq() + " (" + a.process() + ")"));
                    duplicates++;
                }
            }
        }
        out.sort(Comparator.comparingLong(Violation::from));
        return PropertyResult.judged(
                Property.S2,
                out,
                null,
                (out.size() - duplicates) + " out-of-order tokens, " + duplicates + " tokens issued twice");
    }

    /** The index of the last element below {@code t} in ascending {@code times}, or -1. */
    private static int lastBefore(long[] times, long t) {
        int lo = 0;
        int hi = times.length - 1;
        int found = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (times[mid] < t) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found;
    }

    static PropertyResult s3(History history, List<Acquisition> acquisitions) {
        if (history.resource().isEmpty()) {
            return PropertyResult.notApplicable(Property.S3, "no request reached the resource");
        }
        Map<String, Acquisition> byAcq = new HashMap<>();
        acquisitions.forEach(a -> byAcq.put(a.acq(), a));
        List<Violation> out = new ArrayList<>();
        Map<String, Long> highest = new HashMap<>();
        Map<String, Map<Long, String>> ownerOfToken = new HashMap<>();
        Map<String, Long> finalValue = new HashMap<>();
        Map<String, Long> lastArrival = new HashMap<>();
        Map<String, ResourceEvent> acceptedWrites = new HashMap<>();
        long refused = 0;
        long lostIncrements = 0;
        for (ResourceEvent r : history.resource()) {
            lastArrival.put(r.key(), r.t());
            if (!r.accepted()) {
                refused++;
                continue;
            }
            boolean fencedAccept = !r.reason().equals("unfenced");
            Long high = highest.get(r.key());
            if (fencedAccept && high != null && r.token() < high) {
                out.add(new Violation(
                        Property.S3,
                        r.key(),
                        r.t(),
                        r.t(),
                        "the resource accepted token " + r.token() + " after token " + high));
            }
            if (high == null || r.token() > high) {
                highest.put(r.key(), r.token());
            }
            String owner =
                    ownerOfToken.computeIfAbsent(r.key(), k -> new HashMap<>()).putIfAbsent(r.token(), r.acq());
            if (owner != null && !owner.equals(r.acq())) {
                out.add(new Violation(
                        Property.S3,
                        r.key(),
                        r.t(),
                        r.t(),
                        "token " + r.token() + " accepted from two acquisitions: " + owner + " and " + r.acq()));
            }
            Acquisition a = byAcq.get(r.acq());
            if (a == null || (a.token() != null && a.token() != r.token())) {
                out.add(new Violation(
                        Property.S3,
                        r.key(),
                        r.t(),
                        r.t(),
                        "accepted (token " + r.token() + ", " + r.acq() + ") matches no recorded acquisition"));
            }
            if (r.write()) {
                acceptedWrites.put(r.process() + "/" + r.op(), r);
                if (r.after() != r.before() + 1) {
                    lostIncrements++;
                    out.add(new Violation(
                            Property.S3,
                            r.key(),
                            r.t(),
                            r.t(),
                            "lost increment: " + r.acq() + " (" + r.process() + ", token " + r.token() + ") wrote "
                                    + r.after() + " over " + r.before()));
                }
            }
            finalValue.put(r.key(), r.after());
        }
        Map<String, long[]> okAndInfo = new LinkedHashMap<>();
        // a write invoked by a process that died before its answer was recorded has an unknown outcome, as INFO
        Map<String, String> unanswered = new LinkedHashMap<>();
        for (ClientEvent e : history.client()) {
            if (e.f() != Op.WRITE) {
                continue;
            }
            String id = e.process() + "/" + e.op();
            if (e.type() == ClientEvent.Type.INVOKE) {
                unanswered.put(id, e.key());
                continue;
            }
            unanswered.remove(id);
            long[] counts = okAndInfo.computeIfAbsent(e.key(), k -> new long[2]);
            if (e.type() == ClientEvent.Type.OK) {
                counts[0]++;
                if (!acceptedWrites.containsKey(id)) {
                    out.add(new Violation(
                            Property.S3,
                            e.key(),
                            e.t(),
                            e.t(),
                            "write " + id + " was acknowledged to the client but not accepted by the resource"));
                }
            } else if (e.type() == ClientEvent.Type.FAIL && acceptedWrites.containsKey(id)) {
                out.add(new Violation(
                        Property.S3, e.key(), e.t(), e.t(), "write " + id + " was refused to the client but applied"));
            } else if (e.type() == ClientEvent.Type.INFO) {
                counts[1]++;
            }
        }
        for (String key : unanswered.values()) {
            okAndInfo.computeIfAbsent(key, k -> new long[2])[1]++;
        }
        for (Map.Entry<String, long[]> k : okAndInfo.entrySet()) {
            long value = finalValue.getOrDefault(k.getKey(), 0L);
            long ok = k.getValue()[0];
            long info = k.getValue()[1];
            if (value < ok || value > ok + info) {
                long last = lastArrival.getOrDefault(k.getKey(), history.start());
                out.add(new Violation(
                        Property.S3,
                        k.getKey(),
                        last,
                        last,
                        "final value " + value + " outside [" + ok + ", " + (ok + info) + "] (acknowledged, unknown)"));
            }
        }
        out.sort(Comparator.comparingLong(Violation::from));
        return PropertyResult.judged(
                Property.S3,
                out,
                refused,
                acceptedWrites.size() + " accepted writes, " + refused + " refused requests, " + lostIncrements
                        + " lost increments");
    }

    static PropertyResult s4(History history) {
        Map<String, List<ResourceEvent>> perKey = new TreeMap<>();
        history.resource().forEach(r -> perKey.computeIfAbsent(r.key(), k -> new ArrayList<>())
                .add(r));
        List<Violation> out = new ArrayList<>();
        long pairs = 0;
        for (List<ResourceEvent> events : perKey.values()) {
            Map<String, Integer> firstSeen = new HashMap<>();
            Set<String> counted = new HashSet<>();
            String newest = null;
            for (ResourceEvent r : events) {
                Integer first = firstSeen.putIfAbsent(r.acq(), firstSeen.size());
                if (first == null) {
                    newest = r.acq();
                    continue;
                }
                if (newest != null && !newest.equals(r.acq()) && counted.add(r.acq() + " " + newest)) {
                    pairs++;
                    out.add(new Violation(
                            Property.S4,
                            r.key(),
                            r.t(),
                            r.t(),
                            r.acq() + " (" + r.process() + ", token " + r.token() + ") reached the resource after "
                                    + newest + " had started"));
                }
            }
        }
        return new PropertyResult(
                Property.S4, PropertyResult.Status.MEASURED, pairs, pairs + " interleaved pairs", out);
    }

    static Map<String, List<Acquisition>> byKey(List<Acquisition> acquisitions) {
        Map<String, List<Acquisition>> m = new TreeMap<>();
        acquisitions.forEach(
                a -> m.computeIfAbsent(a.key(), k -> new ArrayList<>()).add(a));
        return m;
    }

    static long millis(long nanos) {
        return nanos / 1_000_000;
    }
}
