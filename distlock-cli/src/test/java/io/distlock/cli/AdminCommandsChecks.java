package io.distlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockClient;
import io.distlock.LockHold;
import io.distlock.LockLostException;
import java.util.UUID;

/**
 * The checks of status, list and force-unlock that every backend's IT runs: a lock client of the backend holds locks,
 * the command (in-process, as {@code main} runs it) looks at them and removes one.
 */
final class AdminCommandsChecks {
    private final LockClient holder;
    private final String[] backendArgs;

    AdminCommandsChecks(LockClient holder, String... backendArgs) {
        this.holder = holder;
        this.backendArgs = backendArgs;
    }

    Cli.Result run(String... args) {
        return runWithInput("", args);
    }

    Cli.Result runWithInput(String stdin, String... args) {
        String[] all = new String[args.length + backendArgs.length];
        System.arraycopy(args, 0, all, 0, args.length);
        System.arraycopy(backendArgs, 0, all, args.length, backendArgs.length);
        return Cli.runWithInput(stdin, all);
    }

    static String unique(String prefix) {
        return prefix + UUID.randomUUID().toString().substring(0, 8);
    }

    void status_heldLock_showsHolderAndToken() throws InterruptedException {
        String name = unique("cli-status/");
        try (LockHold hold = holder.lock(name).acquire()) {
            Cli.Result r = run("status", name);
            assertThat(r.code()).as(r.toString()).isZero();
            assertThat(r.out())
                    .contains("name:            " + name)
                    .contains("holder:          " + holder.clientId())
                    .contains("fencing token:   " + hold.fencingToken())
                    .contains("lease remaining: ")
                    .contains("waiters:         ");

            Cli.Result json = run("status", name, "--json");
            assertThat(json.code()).as(json.toString()).isZero();
            assertThat(json.out())
                    .startsWith("{\"name\":\"" + name + "\",\"held\":true,")
                    .contains("\"fencingToken\":" + hold.fencingToken())
                    .contains("\"holder\":\"" + holder.clientId());
        }
    }

    void status_freeLock_exitsOne() {
        String name = unique("cli-free/");
        Cli.Result r = run("status", name);
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.FAILED);
        assertThat(r.out()).contains("lock '" + name + "' is not held");
        Cli.Result json = run("status", name, "--json");
        assertThat(json.out().trim()).isEqualTo("{\"name\":\"" + name + "\",\"held\":false,\"lock\":null}");
    }

    void list_prefix_showsOnlyMatchingHeldLocks() throws InterruptedException {
        String prefix = unique("cli-list-") + "/";
        String other = unique("cli-other-") + "/x";
        try (LockHold a = holder.lock(prefix + "a").acquire();
                LockHold b = holder.lock(prefix + "b").acquire();
                LockHold c = holder.lock(other).acquire()) {
            Cli.Result r = run("list", "--prefix", prefix);
            assertThat(r.code()).as(r.toString()).isZero();
            assertThat(r.out())
                    .contains("NAME", "HOLDER", "TOKEN")
                    .contains(prefix + "a")
                    .contains(prefix + "b")
                    .contains(Long.toString(a.fencingToken()))
                    .doesNotContain(other);

            Cli.Result json = run("list", "--prefix", prefix, "--json");
            assertThat(json.code()).isZero();
            assertThat(json.out()).contains("\"count\":2").contains("\"fencingToken\":" + b.fencingToken());

            Cli.Result limited = run("list", "--prefix", prefix, "--limit", "1");
            assertThat(limited.out()).contains("(first 1 shown");
        }
        Cli.Result after = run("list", "--prefix", prefix);
        assertThat(after.code()).isZero();
        assertThat(after.out()).contains("no locks held with prefix '" + prefix + "'");
    }

    void forceUnlock_confirmed_removesTheHold() throws InterruptedException {
        String name = unique("cli-force/");
        LockHold hold = holder.lock(name).acquire();
        Cli.Result r = runWithInput("y\n", "force-unlock", name);
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.err()).contains("Remove the hold of '" + name + "' by " + holder.clientId());
        assertThat(r.out())
                .contains("removed the hold of '" + name + "' by " + holder.clientId())
                .contains("fencing token " + hold.fencingToken());
        assertThat(holder.admin().inspect(name)).isEmpty();
        assertThatThrownBy(hold::release).isInstanceOf(LockLostException.class);

        Cli.Result again = run("force-unlock", name, "--yes");
        assertThat(again.code()).isEqualTo(ExitCodes.FAILED);
        assertThat(again.out()).contains("is not held: nothing removed");
    }

    void forceUnlock_declined_keepsTheHold() throws InterruptedException {
        String name = unique("cli-keep/");
        try (LockHold hold = holder.lock(name).acquire()) {
            Cli.Result r = runWithInput("n\n", "force-unlock", name);
            assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.FAILED);
            assertThat(r.out()).contains("not confirmed: nothing removed");
            assertThat(holder.admin().inspect(name)).isPresent();
            assertThat(hold.isValid()).isTrue();

            Cli.Result eof = run("force-unlock", name);
            assertThat(eof.code()).isEqualTo(ExitCodes.FAILED);
            assertThat(holder.admin().inspect(name)).isPresent();
        }
    }

    void forceUnlock_yesJson_reportsRemovedHold() throws InterruptedException {
        String name = unique("cli-force-json/");
        LockHold hold = holder.lock(name).acquire();
        Cli.Result r = run("force-unlock", name, "--yes", "--json");
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.err()).doesNotContain("[y/N]");
        assertThat(r.out())
                .contains("\"removed\":{\"name\":\"" + name + "\"")
                .contains("\"fencingToken\":" + hold.fencingToken());
        assertThatThrownBy(hold::release).isInstanceOf(LockLostException.class);
    }

    void all() throws InterruptedException {
        status_heldLock_showsHolderAndToken();
        status_freeLock_exitsOne();
        list_prefix_showsOnlyMatchingHeldLocks();
        forceUnlock_confirmed_removesTheHold();
        forceUnlock_declined_keepsTheHold();
        forceUnlock_yesJson_reportsRemovedHold();
    }
}
