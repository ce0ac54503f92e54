package io.distlock.cli;

import io.distlock.LockInfo;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code distlock status NAME}: who holds a lock. */
@Command(
        name = "status",
        mixinStandardHelpOptions = true,
        description = "Shows who holds a lock: holder, lease remaining, fencing token, and waiters where the backend"
                + " can tell. Exits with 1 if nobody holds it.")
final class StatusCommand implements Callable<Integer> {
    private final Io io;

    @Spec
    CommandSpec spec = CommandSpec.create();

    @Mixin
    BackendOptions backend = new BackendOptions();

    @Parameters(index = "0", paramLabel = "NAME", description = "The lock's name.")
    String name = "";

    @Option(names = "--json", description = "Print JSON instead of text.")
    boolean json;

    StatusCommand(Io io) {
        this.io = io;
    }

    @Override
    public Integer call() {
        BackendSpec target = backend.explicitSpec(spec);
        try (Backend b = Backend.open(target, 2, false)) {
            Optional<LockInfo> info = b.client().admin().inspect(name);
            if (json) {
                io.out()
                        .println(Json.obj()
                                .put("name", name)
                                .put("held", info.isPresent())
                                .put("lock", info.map(LockViews::json).orElse(null)));
            } else if (info.isEmpty()) {
                io.out().println("lock '" + name + "' is not held");
            } else {
                io.out().print(LockViews.text(info.get()));
            }
            io.out().flush();
            return info.isPresent() ? ExitCodes.OK : ExitCodes.FAILED;
        }
    }
}
