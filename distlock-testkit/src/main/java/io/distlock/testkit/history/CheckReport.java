package io.distlock.testkit.history;

import io.distlock.testkit.history.PropertyResult.Status;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** What the {@link HistoryChecker} found: a verdict per property, and the timeline of the first violation. */
public final class CheckReport {
    private final History history;
    private final CheckOptions options;
    private final Map<Property, PropertyResult> results;

    CheckReport(History history, CheckOptions options, Map<Property, PropertyResult> results) {
        this.history = history;
        this.options = options;
        this.results = new EnumMap<>(results);
    }

    public History history() {
        return history;
    }

    public PropertyResult result(Property p) {
        PropertyResult r = results.get(p);
        if (r == null) {
            throw new IllegalArgumentException("property not checked: " + p);
        }
        return r;
    }

    public Map<Property, PropertyResult> results() {
        return Map.copyOf(results);
    }

    /** Whether {@code p} was judged and failed. */
    public boolean failed(Property p) {
        return result(p).status() == Status.FAIL;
    }

    /** The earliest violation among the properties that failed of {@code among} (all judged ones when empty). */
    public Optional<Violation> firstViolation(Property... among) {
        List<Property> which = among.length == 0 ? Arrays.asList(Property.values()) : Arrays.asList(among);
        return results.values().stream()
                .filter(r -> which.contains(r.property()) && r.status() == Status.FAIL)
                .flatMap(r -> r.violations().stream())
                .min((a, b) -> Long.compare(a.from(), b.from()));
    }

    /** The timeline around {@code v}. */
    public String timeline(Violation v) {
        return Timeline.around(history, v, options.timelineMargin());
    }

    /**
     * Fails with the verdicts and the timeline of the first violation if any of {@code must} failed, or (for LIN)
     * was not decided.
     *
     * @throws AssertionError naming the failed properties
     */
    public void assertHolds(Property... must) {
        List<Property> failed = new ArrayList<>();
        for (Property p : must) {
            PropertyResult r = result(p);
            if (r.status() == Status.FAIL) {
                failed.add(p);
            }
        }
        if (!failed.isEmpty()) {
            StringBuilder b = new StringBuilder("properties failed: ")
                    .append(failed)
                    .append('\n')
                    .append(describe());
            firstViolation(failed.toArray(new Property[0])).ifPresent(v -> b.append(timeline(v)));
            throw new AssertionError(b.toString());
        }
    }

    /** One line per property. */
    public String describe() {
        StringBuilder b = new StringBuilder();
        for (PropertyResult r : results.values()) {
            b.append("  ").append(r).append('\n');
            if (r.status() == Status.FAIL) {
                r.violations().stream()
                        .limit(3)
                        .forEach(v -> b.append("      ").append(v).append('\n'));
                if (r.violations().size() > 3) {
                    b.append("      ... ").append(r.violations().size() - 3).append(" more\n");
                }
            }
        }
        return b.toString();
    }

    @Override
    public String toString() {
        return describe();
    }
}
