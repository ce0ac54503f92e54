package io.distlock.cli;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * A {@link SharedCounter} as Redis hashes {@code distlock-demo:<id>} with fields {@code value} and {@code fence}; the
 * fenced write is a Lua script, so Redis itself refuses a stale token.
 */
final class RedisCounter implements SharedCounter {
    private static final String PREFIX = "distlock-demo:";
    private static final long TTL_SECONDS = 3600;

    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;
    private final RedisCommands<String, String> commands;
    private final String script;
    private final String sha;

    RedisCounter(String uri) {
        this.client = RedisClient.create(uri);
        this.connection = client.connect();
        this.commands = connection.sync();
        this.script = load("fenced-write.lua");
        this.sha = commands.scriptLoad(script);
    }

    @Override
    public void reset(String id) {
        commands.hset(PREFIX + id, java.util.Map.of("value", "0", "fence", "0"));
        commands.expire(PREFIX + id, TTL_SECONDS);
    }

    @Override
    public long read(String id) {
        String v = commands.hget(PREFIX + id, "value");
        if (v == null) {
            throw new IllegalStateException("no demo counter '" + id + "'");
        }
        return Long.parseLong(v);
    }

    @Override
    public void write(String id, long value) {
        commands.hset(PREFIX + id, "value", Long.toString(value));
    }

    @Override
    public boolean writeFenced(String id, long value, long token) {
        String[] keys = {PREFIX + id};
        Long written;
        try {
            written = commands.evalsha(sha, ScriptOutputType.INTEGER, keys, Long.toString(value), Long.toString(token));
        } catch (RedisNoScriptException e) { // the server restarted or flushed its script cache
            written = commands.eval(script, ScriptOutputType.INTEGER, keys, Long.toString(value), Long.toString(token));
        }
        return written != null && written == 1L;
    }

    @Override
    public long fence(String id) {
        String v = commands.hget(PREFIX + id, "fence");
        return v == null ? 0 : Long.parseLong(v);
    }

    @Override
    public void delete(String id) {
        commands.del(PREFIX + id);
    }

    @Override
    public void close() {
        connection.close();
        client.shutdown();
    }

    private static String load(String name) {
        try (InputStream in = RedisCounter.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("missing script resource: " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
