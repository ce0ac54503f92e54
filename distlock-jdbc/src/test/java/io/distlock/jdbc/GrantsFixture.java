package io.distlock.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;

/**
 * The fixture of the contract suites that run as a database user holding only the grants docs/backends/jdbc.md lists
 * for the mode: the administrator creates the schema and the user, runs exactly the page's {@code GRANT} lines for
 * the mode (read from the page, names replaced), and the lock clients (and child processes) connect as the user.
 * On H2, which the page gives no grants for, the clients connect as the administrator.
 */
abstract class GrantsFixture extends JdbcFixture {
    private static final Path PAGE = Path.of("../docs/backends/jdbc.md");
    private static final String PASSWORD = "l0cker-pw";

    private @Nullable HikariDataSource userPool;
    private @Nullable String user;

    @Override
    void prepareClients() {
        if (!documentsGrants()) {
            return;
        }
        TestDatabase.Env e = env();
        String name = "dl_user_" + e.table.substring(e.table.lastIndexOf('_') + 1);
        user = name;
        boolean pg = database() == TestDatabase.POSTGRESQL;
        e.execute(
                pg
                        ? "CREATE ROLE " + name + " LOGIN PASSWORD '" + PASSWORD + "'"
                        : "CREATE USER '" + name + "'@'%' IDENTIFIED BY '" + PASSWORD + "'");
        for (String grant : documentedGrants(pg ? "postgresql" : "mariadb", mode())) {
            e.execute(grant.replace("distlock_", e.table + "_")
                    .replace("mydb.", "test.")
                    .replace("locker", name));
        }
        userPool = TestDatabase.pool(e.url, name, PASSWORD, 40);
    }

    @AfterAll
    void dropUser() {
        HikariDataSource pool = userPool;
        if (pool != null) {
            pool.close();
        }
        String name = user;
        if (name != null) {
            try {
                boolean pg = database() == TestDatabase.POSTGRESQL;
                if (pg) {
                    env().execute("DROP OWNED BY " + name);
                }
                env().execute(pg ? "DROP ROLE " + name : "DROP USER '" + name + "'@'%'");
            } catch (RuntimeException e) {
                // best effort: a leftover user with grants on dropped tables holds nothing
            }
        }
    }

    /** H2 has no documented least-privilege user: its suites connect as the administrator. */
    private boolean documentsGrants() {
        return database() == TestDatabase.MARIADB || database() == TestDatabase.POSTGRESQL;
    }

    @Override
    DataSource clientDataSource() {
        if (!documentsGrants()) {
            return super.clientDataSource();
        }
        HikariDataSource pool = userPool;
        if (pool == null) {
            throw new IllegalStateException("user not created");
        }
        return pool;
    }

    @Override
    public Optional<ChildClient> childClient() {
        if (!documentsGrants()) {
            return super.childClient();
        }
        TestDatabase.Env e = env();
        return Optional.of(new ChildClient(
                JdbcChildClientFactory.class,
                String.join("\n", e.url, String.valueOf(user), PASSWORD, e.table, mode().name())));
    }

    /**
     * The {@code GRANT} lines of the page's block under {@code <!-- grants: database -->} whose trailing comment names
     * the mode or says "all modes".
     */
    static List<String> documentedGrants(String database, JdbcLockClient.Mode mode) {
        List<String> lines;
        try {
            lines = Files.readAllLines(PAGE, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + PAGE.toAbsolutePath(), e);
        }
        int at = lines.indexOf("<!-- grants: " + database + " -->");
        if (at < 0) {
            throw new IllegalStateException("no '<!-- grants: " + database + " -->' in " + PAGE);
        }
        List<String> grants = new ArrayList<>();
        int fences = 0;
        for (String line : lines.subList(at + 1, lines.size())) {
            if (line.startsWith("```")) {
                if (++fences == 2) {
                    break;
                }
                continue;
            }
            int comment = line.indexOf("--");
            if (!line.startsWith("GRANT ") || comment < 0) {
                continue;
            }
            String modes = line.substring(comment + 2).toUpperCase(Locale.ROOT);
            if (modes.contains("ALL MODES") || modes.contains(mode.name())) {
                grants.add(line.substring(0, comment).trim().replaceAll(";$", ""));
            }
        }
        if (grants.isEmpty()) {
            throw new IllegalStateException("no GRANT for " + mode + " under the marker " + database);
        }
        return grants;
    }
}
