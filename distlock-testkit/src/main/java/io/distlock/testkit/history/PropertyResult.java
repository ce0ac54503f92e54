package io.distlock.testkit.history;

import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The verdict on one property.
 *
 * @param property the property
 * @param status the verdict
 * @param measure the number the property measures, if any (S3: refused requests; S4: overlaps; L1: the longest
 *     takeover in milliseconds; L5: the slowest loss report in milliseconds; L4: leftovers)
 * @param summary one line for people
 * @param violations what breached it, in time order
 */
public record PropertyResult(
        Property property, Status status, @Nullable Long measure, String summary, List<Violation> violations) {

    /** A verdict. */
    public enum Status {
        PASS,
        FAIL,
        /** Measured, not judged (S4). */
        MEASURED,
        /** The history has nothing to judge it on (no fault of that kind, no probe). */
        NOT_APPLICABLE,
        /** The check gave up (the linearizability search hit its time cap). */
        UNKNOWN
    }

    public PropertyResult {
        Objects.requireNonNull(property, "property");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(summary, "summary");
        violations = List.copyOf(violations);
    }

    static PropertyResult judged(Property p, List<Violation> violations, @Nullable Long measure, String summary) {
        return new PropertyResult(p, violations.isEmpty() ? Status.PASS : Status.FAIL, measure, summary, violations);
    }

    static PropertyResult notApplicable(Property p, String why) {
        return new PropertyResult(p, Status.NOT_APPLICABLE, null, why, List.of());
    }

    @Override
    public String toString() {
        return property + " " + property.title() + ": " + status + (measure == null ? "" : " [" + measure + "]") + " "
                + summary;
    }
}
