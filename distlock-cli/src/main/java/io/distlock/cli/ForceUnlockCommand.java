package io.distlock.cli;

import io.distlock.LockInfo;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.Charset;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code distlock force-unlock NAME}: removes a hold whoever owns it, after confirmation. */
@Command(
        name = "force-unlock",
        mixinStandardHelpOptions = true,
        description = {
            "Removes the current hold of a lock, whoever owns it, after asking on stdin (or with --yes).",
            "The owner finds its hold lost at its next renewal or release; the next holder gets a greater fencing"
                    + " token. Exits with 1 if nobody held the lock or the answer was not yes."
        })
final class ForceUnlockCommand implements Callable<Integer> {
    private final Io io;

    @Spec
    CommandSpec spec = CommandSpec.create();

    @Mixin
    BackendOptions backend = new BackendOptions();

    @Parameters(index = "0", paramLabel = "NAME", description = "The lock's name.")
    String name = "";

    @Option(
            names = {"-y", "--yes"},
            description = "Do not ask for confirmation.")
    boolean yes;

    @Option(names = "--json", description = "Print JSON instead of text.")
    boolean json;

    ForceUnlockCommand(Io io) {
        this.io = io;
    }

    @Override
    public Integer call() {
        BackendSpec target = backend.explicitSpec(spec);
        try (Backend b = Backend.open(target, 2, false)) {
            Optional<LockInfo> held = b.client().admin().inspect(name);
            if (held.isEmpty()) {
                return report(Optional.empty(), "lock '" + name + "' is not held: nothing removed");
            }
            LockInfo info = held.get();
            if (!yes && !confirm(info)) {
                return report(Optional.empty(), "not confirmed: nothing removed");
            }
            Optional<LockInfo> removed = b.client().admin().forceUnlock(name);
            if (removed.isEmpty()) {
                return report(removed, "lock '" + name + "' was released meanwhile: nothing removed");
            }
            LockInfo r = removed.get();
            return report(
                    removed,
                    "removed the hold of '" + r.name() + "' by " + r.owner() + " (fencing token " + r.fencingToken()
                            + ", lease remaining " + LockViews.shortLease(r.remainingLease()) + ")");
        }
    }

    private boolean confirm(LockInfo info) {
        io.err()
                .print("Remove the hold of '" + info.name() + "' by " + info.owner() + " (fencing token "
                        + info.fencingToken() + ", lease remaining " + LockViews.shortLease(info.remainingLease())
                        + ")? The owner will find its hold lost. [y/N] ");
        io.err().flush();
        try {
            String answer = new BufferedReader(new InputStreamReader(io.in(), Charset.defaultCharset())).readLine();
            if (answer == null) {
                io.err().println();
                return false;
            }
            String a = answer.trim().toLowerCase(Locale.ROOT);
            return a.equals("y") || a.equals("yes");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private int report(Optional<LockInfo> removed, String message) {
        if (json) {
            io.out()
                    .println(Json.obj()
                            .put("name", name)
                            .put("removed", removed.map(LockViews::json).orElse(null))
                            .put("message", message));
        } else {
            io.out().println(message);
        }
        io.out().flush();
        return removed.isPresent() ? ExitCodes.OK : ExitCodes.FAILED;
    }
}
