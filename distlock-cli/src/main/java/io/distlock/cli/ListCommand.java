package io.distlock.cli;

import io.distlock.LockInfo;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code distlock list}: the locks held now. */
@Command(
        name = "list",
        mixinStandardHelpOptions = true,
        description = "Lists the locks held now: name, holder, lease remaining, fencing token, waiters.")
final class ListCommand implements Callable<Integer> {
    private final Io io;

    @Spec
    CommandSpec spec = CommandSpec.create();

    @Mixin
    BackendOptions backend = new BackendOptions();

    @Option(
            names = "--prefix",
            paramLabel = "P",
            defaultValue = "",
            description = "Only locks whose names start with P.")
    String prefix = "";

    @Option(
            names = "--limit",
            paramLabel = "N",
            defaultValue = "100",
            description = "At most N locks, default: ${DEFAULT-VALUE}.")
    int limit = 100;

    @Option(names = "--json", description = "Print JSON instead of text.")
    boolean json;

    ListCommand(Io io) {
        this.io = io;
    }

    @Override
    public Integer call() {
        if (limit <= 0) {
            throw new ParameterException(spec.commandLine(), "--limit must be positive: " + limit);
        }
        BackendSpec target = backend.explicitSpec(spec);
        try (Backend b = Backend.open(target, 2, false)) {
            List<LockInfo> locks = b.client().admin().list(prefix, limit);
            if (json) {
                List<Object> items = Json.array();
                locks.forEach(l -> items.add(LockViews.json(l)));
                io.out()
                        .println(Json.obj()
                                .put("prefix", prefix)
                                .put("count", locks.size())
                                .put("locks", items));
            } else if (locks.isEmpty()) {
                io.out().println(prefix.isEmpty() ? "no locks held" : "no locks held with prefix '" + prefix + "'");
            } else {
                Format.Table t = new Format.Table(2, "NAME", "HOLDER", "LEASE", "TOKEN", "WAITERS");
                for (LockInfo l : locks) {
                    t.row(
                            l.name(),
                            l.owner(),
                            LockViews.shortLease(l.remainingLease()),
                            Long.toString(l.fencingToken()),
                            l.waiters() < 0 ? "?" : Integer.toString(l.waiters()));
                }
                io.out().print(t);
                if (locks.size() == limit) {
                    io.out().println("(first " + limit + " shown; raise --limit for more)");
                }
            }
            io.out().flush();
            return ExitCodes.OK;
        }
    }
}
