package io.distlock.testkit.history;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The window of a history around a violation, as text: every client event and resource request on the violation's
 * key and every fault start and end, in time order, with times in seconds since the history began.
 */
public final class Timeline {
    private static final int MAX_LINES = 120;

    private Timeline() {}

    /** The events within {@code margin} of {@code v}'s window. */
    public static String around(History history, Violation v, Duration margin) {
        long origin = history.start();
        long from = v.from() - margin.toNanos();
        long to = v.to() + margin.toNanos();
        List<Line> lines = new ArrayList<>();
        for (ClientEvent e : history.client()) {
            if (e.key().equals(v.key()) && e.t() >= from && e.t() <= to) {
                lines.add(new Line(e.t(), "client   " + e));
            }
        }
        for (ResourceEvent e : history.resource()) {
            if (e.key().equals(v.key()) && e.t() >= from && e.t() <= to) {
                lines.add(new Line(e.t(), "resource " + e));
            }
        }
        for (NemesisEvent e : history.nemesis()) {
            if (e.t() >= from && e.t() <= to) {
                lines.add(new Line(e.t(), "fault    " + e));
            }
        }
        lines.sort((a, b) -> Long.compare(a.t, b.t));
        StringBuilder out = new StringBuilder()
                .append("timeline of ")
                .append(v)
                .append(String.format(
                        Locale.ROOT, " (window %.3fs..%.3fs)%n", seconds(v.from() - origin), seconds(v.to() - origin)));
        int shown = 0;
        for (Line l : lines) {
            if (shown == MAX_LINES) {
                out.append(String.format(Locale.ROOT, "  ... %d more%n", lines.size() - shown));
                break;
            }
            boolean inside = l.t >= v.from() && l.t <= v.to();
            out.append(
                    String.format(Locale.ROOT, "%s %9.3fs  %s%n", inside ? ">" : " ", seconds(l.t - origin), l.text));
            shown++;
        }
        return out.toString();
    }

    private static double seconds(long nanos) {
        return nanos / 1e9;
    }

    private record Line(long t, String text) {}
}
