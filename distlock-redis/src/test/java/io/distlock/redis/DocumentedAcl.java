package io.distlock.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The ACL rules docs/backends/redis.md gives for a lock client's user, read from the page, so that the tests that run
 * as that user prove exactly what the page says.
 */
final class DocumentedAcl {
    static final String USER = "locker";
    static final String PASSWORD = "l0cker-pw";
    private static final Path PAGE = Path.of("../docs/backends/redis.md");

    private DocumentedAcl() {}

    /** The rules of the user on a standalone server or a Sentinel set's data nodes. */
    static String[] standalone() {
        return rules("redis").toArray(String[]::new);
    }

    /** The rules of the user on a Cluster's nodes: the standalone ones and the Cluster's additions. */
    static String[] cluster() {
        List<String> all = rules("redis");
        all.addAll(rules("redis-cluster"));
        return all.toArray(String[]::new);
    }

    /** The user and password for a Redis URI. */
    static String userInfo() {
        return USER + ":" + PASSWORD;
    }

    /** The rules of the {@code ACL SETUSER} line under {@code <!-- acl: marker -->}, without "on" and the password. */
    private static List<String> rules(String marker) {
        List<String> lines;
        try {
            lines = Files.readAllLines(PAGE, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + PAGE.toAbsolutePath(), e);
        }
        int at = lines.indexOf("<!-- acl: " + marker + " -->");
        if (at < 0) {
            throw new IllegalStateException("no '<!-- acl: " + marker + " -->' in " + PAGE);
        }
        for (String line : lines.subList(at, lines.size())) {
            if (line.startsWith("ACL SETUSER " + USER + " ")) {
                List<String> rules = new ArrayList<>(Arrays.asList(line.trim().split(" +")));
                rules.subList(0, 3).clear();
                rules.removeIf(r -> r.equals("on") || r.equals(">password")); // the launchers add both
                return rules;
            }
        }
        throw new IllegalStateException("no 'ACL SETUSER " + USER + "' line after the marker " + marker);
    }
}
