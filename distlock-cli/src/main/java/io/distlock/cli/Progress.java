package io.distlock.cli;

import java.io.PrintWriter;
import java.util.Locale;

/**
 * A progress bar on stderr, plain ASCII. On a terminal it redraws one line in place; otherwise (a pipe, a log file,
 * a test) it prints a line at each fifth of the way, so logs stay readable.
 */
final class Progress {
    private static final int WIDTH = 30;

    private final PrintWriter err;
    private final boolean tty;
    private int lastStep = -1;
    private int lastLength;

    Progress(PrintWriter err, boolean tty) {
        this.err = err;
        this.tty = tty;
    }

    /** Shows {@code label} at {@code fraction} (0..1) of the way, with a detail such as a count. */
    void update(String label, double fraction, String detail) {
        double f = Math.max(0, Math.min(1, fraction));
        String line = line(label, f, detail);
        if (tty) {
            String pad = line.length() < lastLength ? " ".repeat(lastLength - line.length()) : "";
            err.print("\r" + line + pad);
            lastLength = line.length();
            err.flush();
        } else {
            int step = (int) Math.floor(f * 5);
            if (step > lastStep && step < 5) {
                lastStep = step;
                err.println(line);
                err.flush();
            }
        }
    }

    /** Ends the bar with its final state on a line of its own, and resets it for the next one. */
    void done(String label, String detail) {
        String line = line(label, 1, detail);
        if (tty) {
            String pad = line.length() < lastLength ? " ".repeat(lastLength - line.length()) : "";
            err.println("\r" + line + pad);
        } else {
            err.println(line);
        }
        err.flush();
        lastStep = -1;
        lastLength = 0;
    }

    static String line(String label, double fraction, String detail) {
        int filled = (int) Math.round(fraction * WIDTH);
        return String.format(
                Locale.ROOT,
                "%-30s [%s%s] %3d%%  %s",
                label,
                "#".repeat(filled),
                "-".repeat(WIDTH - filled),
                Math.round(fraction * 100),
                detail);
    }
}
