package io.distlock.etcd;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Reads and changes the store behind the clients' backs, for the fixtures of the etcd tests. */
final class EtcdFixture implements AutoCloseable {
    private final Client client;
    private final EtcdKeys keys;

    EtcdFixture(String endpoints, String namespace) {
        this.client = Client.builder().endpoints(endpoints.split(",")).build();
        this.keys = new EtcdKeys(namespace);
    }

    Client client() {
        return client;
    }

    EtcdKeys keys() {
        return keys;
    }

    /** The keys under the name's prefix, oldest first. */
    List<KeyValue> keysOf(String name) {
        return get(
                keys.namePrefix(name),
                GetOption.builder()
                        .isPrefix(true)
                        .withSortField(GetOption.SortTarget.CREATE)
                        .withSortOrder(GetOption.SortOrder.ASCEND)
                        .build());
    }

    /** Every key under the namespace. */
    List<KeyValue> allKeys() {
        return get(keys.namespace(), GetOption.builder().isPrefix(true).build());
    }

    /** Deletes the holder's key (the oldest under the name), as if its lease had run out. */
    void expireHold(String name) {
        List<KeyValue> kvs = keysOf(name);
        if (kvs.isEmpty()) {
            throw new AssertionError("nobody holds " + name);
        }
        try {
            client.getKVClient().delete(kvs.get(0).getKey()).get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** The store's current revision. */
    long revision() {
        try {
            return client.getKVClient()
                    .get(ByteSequence.from(keys.namespace(), UTF_8))
                    .get(10, TimeUnit.SECONDS)
                    .getHeader()
                    .getRevision();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** How many unary requests of this gRPC method the server at {@code endpoint} has handled (its /metrics). */
    static long handled(String endpoint, String method) {
        try {
            String body = java.net.http.HttpClient.newHttpClient()
                    .send(
                            java.net.http.HttpRequest.newBuilder(
                                            java.net.URI.create(endpoint.replaceAll("/+$", "") + "/metrics"))
                                    .build(),
                            java.net.http.HttpResponse.BodyHandlers.ofString())
                    .body();
            long total = 0;
            for (String line : body.split("\n")) {
                if (line.startsWith("grpc_server_handled_total{")
                        && line.contains("grpc_method=\"" + method + "\"")
                        && line.contains("grpc_type=\"unary\"")) {
                    total += (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                }
            }
            return total;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    List<String> residue(String name) {
        List<String> out = new ArrayList<>();
        for (KeyValue kv : keysOf(name)) {
            out.add(describe(kv));
        }
        return out;
    }

    /** The name's keys and its latch's keys (count key and count-down ids). */
    List<String> residueWithLatch(String name) {
        List<String> out = residue(name);
        for (KeyValue kv :
                get(keys.latchKey(name), GetOption.builder().isPrefix(true).build())) {
            out.add(describe(kv));
        }
        return out;
    }

    static String describe(KeyValue kv) {
        return kv.getKey().toString(UTF_8) + " = " + kv.getValue().toString(UTF_8) + " (create revision "
                + kv.getCreateRevision() + ", lease " + Long.toHexString(kv.getLease()) + ")";
    }

    private List<KeyValue> get(String key, GetOption option) {
        try {
            return client.getKVClient()
                    .get(ByteSequence.from(key, UTF_8), option)
                    .get(10, TimeUnit.SECONDS)
                    .getKvs();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Override
    public void close() {
        client.close();
    }
}
