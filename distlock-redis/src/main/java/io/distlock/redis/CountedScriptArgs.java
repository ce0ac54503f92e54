package io.distlock.redis;

import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.protocol.CommandArgs;
import io.netty.buffer.ByteBuf;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The arguments of an EVAL or EVALSHA that count how often Lettuce encodes them: once per write to a connection.
 * Lettuce writes again, once it has reconnected, a command that was in flight when its connection broke, so a count
 * above one means an earlier write may have been applied although its answer never came. An owner-checked release
 * whose answer is "not there" after such a second write may be about the hold its own first write ended.
 */
final class CountedScriptArgs extends CommandArgs<String, String> {
    private final AtomicInteger writes = new AtomicInteger();

    /** {@code script} is the SHA-1 for EVALSHA or the source for EVAL. */
    CountedScriptArgs(String script, String[] keys, String[] args) {
        super(StringCodec.UTF8);
        add(script).add(keys.length).addKeys(keys).addValues(args);
    }

    /** How often the command was written so far. */
    int writes() {
        return writes.get();
    }

    @Override
    public void encode(ByteBuf buf) {
        writes.incrementAndGet();
        super.encode(buf);
    }
}
