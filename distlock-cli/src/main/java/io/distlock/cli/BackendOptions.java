package io.distlock.cli;

import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** The options every subcommand has for choosing its backend. */
final class BackendOptions {

    @Option(
            names = "--backend",
            paramLabel = "URI",
            description = "Where the locks live: redis://host:port[/db], rediss://…, redis-sentinel://…;"
                    + " jdbc:h2:…, jdbc:mariadb://…, jdbc:mysql://…, jdbc:postgresql://…;"
                    + " zookeeper://host:port[,host:port][/root]; etcd://host:port[,host:port] (etcds:// for TLS).")
    @Nullable
    String backend;

    @Option(names = "--user", paramLabel = "USER", description = "Database user (jdbc: backends).")
    @Nullable
    String user;

    @Option(
            names = "--password",
            paramLabel = "PASSWORD",
            description = "Database password (jdbc: backends); default: the environment variable DISTLOCK_PASSWORD.")
    @Nullable
    String password;

    @Option(
            names = "--table",
            paramLabel = "PREFIX",
            defaultValue = "distlock",
            description = "Prefix of the lock tables (jdbc: backends), default: ${DEFAULT-VALUE}.")
    String table = "distlock";

    /** The chosen backend; the embedded default when no {@code --backend} was given. */
    BackendSpec spec(CommandSpec command) {
        String pw = password != null ? password : System.getenv("DISTLOCK_PASSWORD");
        try {
            return BackendSpec.parse(backend, user, pw, table);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(command.commandLine(), e.getMessage(), e);
        }
    }

    /** The chosen backend, which must be given: the embedded one lives only inside a single command. */
    BackendSpec explicitSpec(CommandSpec command) {
        BackendSpec spec = spec(command);
        if (spec.kind() == BackendSpec.Kind.EMBEDDED_H2) {
            throw new ParameterException(
                    command.commandLine(),
                    command.name()
                            + " needs --backend URI: the embedded H2 server lives only inside one `distlock demo`"
                            + " or `distlock bench` run, so there is nothing to " + command.name()
                            + " across invocations (e.g. --backend redis://127.0.0.1:6379)");
        }
        return spec;
    }
}
