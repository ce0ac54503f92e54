package io.distlock.cli;

/** The exit codes of every subcommand, as {@code --help} lists them. */
final class ExitCodes {
    /** The command did what it was asked. */
    static final int OK = 0;
    /** The lock was not found, the user declined, or the demo's expectation failed. */
    static final int FAILED = 1;
    /** Bad options or arguments. */
    static final int USAGE = 2;
    /** The backend could not be reached. */
    static final int UNREACHABLE = 3;

    static final String[] HELP = {
        "0:Success.",
        "1:Lock not found, declined, or an expectation failed (demo: lost updates under the lock, or the stale"
                + " write was not rejected).",
        "2:Usage error (bad option, missing --backend).",
        "3:Backend unreachable."
    };

    private ExitCodes() {}
}
