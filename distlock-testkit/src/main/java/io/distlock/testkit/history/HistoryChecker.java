package io.distlock.testkit.history;

import io.distlock.testkit.history.PropertyResult.Status;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Judges a {@link History}: the safety properties S1 to S3 and the measure S4 (see {@code SafetyChecks}), the
 * liveness properties L1, L3, L4 and L5 (see {@code LivenessChecks}) and L6 (see {@code IdleCheck}), and a per-key linearizability check of the
 * fenced-mutex model with a time cap (see {@code Linearizability}).
 *
 * <pre>{@code
 * CheckReport report = HistoryChecker.check(History.load(dir), CheckOptions.defaults());
 * report.assertHolds(Property.S1, Property.S3, Property.L1);  // fails with a timeline of the first violation
 * }</pre>
 */
public final class HistoryChecker {
    private HistoryChecker() {}

    /** Checks the histories under {@code dir}. */
    public static CheckReport check(Path dir, CheckOptions options) {
        return check(History.load(dir), options);
    }

    public static CheckReport check(History history, CheckOptions options) {
        List<Acquisition> acquisitions = Acquisition.of(history);
        Map<Property, PropertyResult> results = new EnumMap<>(Property.class);
        results.put(Property.S1, SafetyChecks.s1(acquisitions));
        results.put(Property.S2, SafetyChecks.s2(acquisitions));
        results.put(Property.S3, SafetyChecks.s3(history, acquisitions));
        results.put(Property.S4, SafetyChecks.s4(history));
        results.put(Property.L1, LivenessChecks.l1(history, acquisitions, options.takeoverBound()));
        results.put(Property.L3, LivenessChecks.l3(history));
        results.put(Property.L4, LivenessChecks.l4(history));
        results.put(Property.L5, LivenessChecks.l5(history, acquisitions, options.lossNoticeBound()));
        results.put(Property.L6, IdleCheck.l6(history, acquisitions, options.idleBound()));
        results.put(Property.LIN, linearizable(acquisitions, options));
        return new CheckReport(history, options, results);
    }

    private static PropertyResult linearizable(List<Acquisition> acquisitions, CheckOptions options) {
        List<Violation> violations = new ArrayList<>();
        int unknown = 0;
        int keys = 0;
        long operations = 0;
        for (Map.Entry<String, List<Acquisition>> k :
                SafetyChecks.byKey(acquisitions).entrySet()) {
            keys++;
            List<Linearizability.Operation> ops = Linearizability.operations(k.getValue());
            operations += ops.size();
            Linearizability.Result r =
                    Linearizability.check(ops, options.linearizabilityCap().toNanos());
            switch (r.outcome()) {
                case NOT_LINEARIZABLE ->
                    violations.add(new Violation(Property.LIN, k.getKey(), r.from(), r.to(), r.detail()));
                case UNKNOWN -> unknown++;
                default -> {}
            }
        }
        String summary =
                keys + " keys, " + operations + " operations" + (unknown > 0 ? ", " + unknown + " undecided" : "");
        if (violations.isEmpty() && unknown > 0) {
            return new PropertyResult(Property.LIN, Status.UNKNOWN, null, summary, List.of());
        }
        return PropertyResult.judged(Property.LIN, violations, null, summary);
    }
}
