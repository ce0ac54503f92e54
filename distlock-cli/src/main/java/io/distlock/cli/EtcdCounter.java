package io.distlock.cli;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.PutOption;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A {@link SharedCounter} as etcd keys {@code distlock-demo/<id>} holding {@code value:fence}. The fenced write is a
 * transaction on the key's mod revision that first checks the fence, retried when another write came in between, so
 * etcd refuses a stale token; the unfenced write is a blind put.
 */
final class EtcdCounter implements SharedCounter {
    private static final String PREFIX = "distlock-demo/";

    private final Client client;
    private final KV kv;

    EtcdCounter(String endpoints) {
        this.client = Client.builder().endpoints(endpoints.split(",")).build();
        this.kv = client.getKVClient();
    }

    @Override
    public void reset(String id) {
        await(kv.put(key(id), encode(0, 0)));
    }

    @Override
    public long read(String id) {
        return decode(get(id))[0];
    }

    @Override
    public void write(String id, long value) {
        long fence = decode(get(id))[1];
        await(kv.put(key(id), encode(value, fence))); // blind: no revision check
    }

    @Override
    public boolean writeFenced(String id, long value, long token) {
        while (true) {
            KeyValue current = get(id);
            if (token < decode(current)[1]) {
                return false;
            }
            boolean done = await(kv.txn()
                            .If(new Cmp(key(id), Cmp.Op.EQUAL, CmpTarget.modRevision(current.getModRevision())))
                            .Then(Op.put(key(id), encode(value, token), PutOption.DEFAULT))
                            .commit())
                    .isSucceeded();
            if (done) {
                return true;
            }
            // another write came in between: check the fence again
        }
    }

    @Override
    public long fence(String id) {
        return decode(get(id))[1];
    }

    @Override
    public void delete(String id) {
        await(kv.delete(key(id)));
    }

    @Override
    public void close() {
        client.close();
    }

    private KeyValue get(String id) {
        List<KeyValue> kvs = await(kv.get(key(id))).getKvs();
        if (kvs.isEmpty()) {
            throw new IllegalStateException("no demo counter '" + id + "' in etcd");
        }
        return kvs.get(0);
    }

    private static ByteSequence key(String id) {
        return ByteSequence.from(PREFIX + id, StandardCharsets.UTF_8);
    }

    private static ByteSequence encode(long value, long fence) {
        return ByteSequence.from(value + ":" + fence, StandardCharsets.UTF_8);
    }

    private static long[] decode(KeyValue kv) {
        String s = kv.getValue().toString(StandardCharsets.UTF_8);
        int colon = s.indexOf(':');
        return new long[] {Long.parseLong(s.substring(0, colon)), Long.parseLong(s.substring(colon + 1))};
    }

    private static <T> T await(CompletableFuture<T> future) {
        try {
            return future.get(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("demo counter in etcd failed: " + Backend.rootMessage(e), e);
        }
    }
}
