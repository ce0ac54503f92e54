package io.distlock.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * A Lua script shipped as a resource beside this class, loaded once. {@code sha1} is what {@code EVALSHA} needs;
 * {@code source} is sent with {@code EVAL} when the server does not know the script yet.
 */
record LuaScript(String name, String source, String sha1) {
    /** A line {@code -- #include <resource>} is replaced by that resource's text (shared Lua functions). */
    private static final String INCLUDE = "-- #include ";

    static final LuaScript LOCK_ACQUIRE = load("lock-acquire.lua");
    static final LuaScript LOCK_ACQUIRE_QUEUED = load("lock-acquire-queued.lua");
    static final LuaScript LOCK_RELEASE = load("lock-release.lua");
    static final LuaScript LOCK_RELEASE_LEAN = load("lock-release-lean.lua");
    static final LuaScript LOCK_RENEW = load("lock-renew.lua");
    static final LuaScript LOCK_HANDOFF = load("lock-handoff.lua");
    static final LuaScript LOCK_ABANDON = load("lock-abandon.lua");
    static final LuaScript LOCK_INSPECT = load("lock-inspect.lua");
    static final LuaScript LOCK_FORCE_RELEASE = load("lock-force-release.lua");
    static final LuaScript LOCK_PASS_ON = load("lock-pass-on.lua");
    static final LuaScript CLAIM_ACQUIRE = load("claim-acquire.lua");
    static final LuaScript CLAIM_RELEASE = load("claim-release.lua");
    static final LuaScript CLAIM_HANDOFF = load("claim-handoff.lua");
    static final LuaScript CLAIM_ABANDON = load("claim-abandon.lua");
    static final LuaScript CLAIM_RENEW = load("claim-renew.lua");
    static final LuaScript CLAIM_INSPECT = load("claim-inspect.lua");
    static final LuaScript CLAIM_FORCE_RELEASE = load("claim-force-release.lua");
    static final LuaScript CLAIM_AVAILABLE = load("claim-available.lua");
    static final LuaScript LATCH_SET = load("latch-set.lua");
    static final LuaScript LATCH_COUNT_DOWN = load("latch-count-down.lua");
    static final LuaScript LATCH_COUNT = load("latch-count.lua");

    /** Every script of the store, for loading them into a server's script cache at start-up. */
    static final List<LuaScript> ALL = List.of(
            LOCK_ACQUIRE,
            LOCK_ACQUIRE_QUEUED,
            LOCK_RELEASE,
            LOCK_RELEASE_LEAN,
            LOCK_RENEW,
            LOCK_HANDOFF,
            LOCK_ABANDON,
            LOCK_INSPECT,
            LOCK_FORCE_RELEASE,
            LOCK_PASS_ON,
            CLAIM_ACQUIRE,
            CLAIM_RELEASE,
            CLAIM_HANDOFF,
            CLAIM_ABANDON,
            CLAIM_RENEW,
            CLAIM_INSPECT,
            CLAIM_FORCE_RELEASE,
            CLAIM_AVAILABLE,
            LATCH_SET,
            LATCH_COUNT_DOWN,
            LATCH_COUNT);

    static LuaScript load(String name) {
        StringBuilder source = new StringBuilder();
        for (String line : read(name).split("\n", -1)) {
            if (line.startsWith(INCLUDE)) {
                source.append(read(line.substring(INCLUDE.length()).strip()));
            } else {
                source.append(line).append('\n');
            }
        }
        source.setLength(source.length() - 1); // the split's last piece had no newline
        String text = source.toString();
        return new LuaScript(name, text, sha1Hex(text));
    }

    private static String read(String name) {
        try (InputStream in = LuaScript.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("missing script resource: " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read script resource " + name, e);
        }
    }

    private static String sha1Hex(String source) {
        try {
            MessageDigest sha1 = MessageDigest.getInstance("SHA-1");
            return HexFormat.of().formatHex(sha1.digest(source.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required of every JDK", e);
        }
    }

    /** The integer at {@code index} of a script's table answer. */
    static long number(List<Object> answer, int index) {
        Object o = answer.get(index);
        if (o instanceof Long l) {
            return l;
        }
        throw new IllegalStateException("unexpected script answer " + answer + " at " + index);
    }

    @Override
    public String toString() {
        return name + "@" + sha1;
    }
}
