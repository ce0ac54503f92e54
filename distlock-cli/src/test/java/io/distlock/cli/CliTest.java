package io.distlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The command's usage and errors, with no server. */
class CliTest {

    @Test
    void help_listsSubcommandsAndExitCodes() {
        Cli.Result r = Cli.run("--help");
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out())
                .contains("demo", "status", "list", "force-unlock", "bench")
                .contains("Exit codes:")
                .contains("0   Success.")
                .contains("2   Usage error")
                .contains("3   Backend unreachable.");
    }

    @Test
    void subcommandHelp_listsExitCodes() {
        for (String sub : new String[] {"demo", "status", "list", "force-unlock", "bench"}) {
            Cli.Result r = Cli.run(sub, "--help");
            assertThat(r.code()).as(r.toString()).isZero();
            assertThat(r.out()).as(sub).contains("--backend=URI").contains("3   Backend unreachable.");
        }
    }

    @Test
    void noSubcommand_isUsageError() {
        Cli.Result r = Cli.run();
        assertThat(r.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("a subcommand is required").contains("Commands:");
    }

    @Test
    void status_withoutBackend_isUsageErrorExplainingWhy() {
        Cli.Result r = Cli.run("status", "x");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err())
                .contains("status needs --backend URI")
                .contains("embedded H2 server lives only inside")
                .contains("Run 'distlock status --help' for usage.");
    }

    @Test
    void list_withoutBackend_isUsageError() {
        assertThat(Cli.run("list").code()).isEqualTo(ExitCodes.USAGE);
        assertThat(Cli.run("force-unlock", "x", "--yes").code()).isEqualTo(ExitCodes.USAGE);
    }

    @Test
    void backend_unknownScheme_isUsageError() {
        Cli.Result r = Cli.run("status", "x", "--backend", "mongodb://localhost");
        assertThat(r.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("--backend must start with").contains("mongodb://localhost");
    }

    @Test
    void demo_h2InMemoryUrl_isUsageError() {
        Cli.Result r = Cli.run("demo", "--backend", "jdbc:h2:mem:x");
        assertThat(r.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("cannot be shared by the worker processes");
    }

    @Test
    void demo_badNumbers_areUsageErrors() {
        assertThat(Cli.run("demo", "--processes", "0").code()).isEqualTo(ExitCodes.USAGE);
        assertThat(Cli.run("demo", "--threads", "-1").code()).isEqualTo(ExitCodes.USAGE);
        assertThat(Cli.run("demo", "--seconds", "abc").code()).isEqualTo(ExitCodes.USAGE);
    }

    @Test
    void status_redisNotListening_exitsUnreachable() {
        // port 1 on loopback: nothing listens there, the connection is refused at once
        Cli.Result r = Cli.run("status", "x", "--backend", "redis://127.0.0.1:1");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.UNREACHABLE);
        assertThat(r.err()).startsWith("distlock: ").contains("127.0.0.1");
    }

    @Test
    void status_databaseNotListening_exitsUnreachable() {
        Cli.Result r = Cli.run("status", "x", "--backend", "jdbc:postgresql://127.0.0.1:1/test");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.UNREACHABLE);
        assertThat(r.err()).contains("cannot reach jdbc:postgresql://127.0.0.1:1/test");
    }
}
