package io.distlock.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** The top-level {@code distlock} command: prints its usage; the work is in the subcommands. */
@Command(
        name = "distlock",
        mixinStandardHelpOptions = true,
        versionProvider = DistlockCommand.Version.class,
        description = {
            "Distributed locks with java.util.concurrent semantics over Redis, JDBC, ZooKeeper and etcd.",
            "Without --backend, demo and bench start an embedded H2 database server that their processes share."
        },
        subcommands = {
            DemoCommand.class,
            StatusCommand.class,
            ListCommand.class,
            ForceUnlockCommand.class,
            BenchCommand.class,
            HelpCommand.class
        })
final class DistlockCommand implements Callable<Integer> {
    private final Io io;

    @Spec
    CommandSpec spec = CommandSpec.create();

    DistlockCommand(Io io) {
        this.io = io;
    }

    @Override
    public Integer call() {
        io.err().println("distlock: a subcommand is required");
        spec.commandLine().usage(io.err());
        io.err().flush();
        return ExitCodes.USAGE;
    }

    /** The version from the jar's manifest or the build. */
    static final class Version implements picocli.CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Main.class.getPackage().getImplementationVersion();
            return new String[] {"distlock " + (v == null ? "0.1.0-SNAPSHOT" : v)};
        }
    }
}
