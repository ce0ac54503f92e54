package io.distlock.testkit.history;

import io.distlock.testkit.history.ClientEvent.Op;
import io.distlock.testkit.history.ClientEvent.Type;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** Builds histories by hand, times in milliseconds, for the checker's tests. */
final class Histories {
    private final List<ClientEvent> client = new ArrayList<>();
    private final List<ResourceEvent> resource = new ArrayList<>();
    private final List<NemesisEvent> nemesis = new ArrayList<>();
    private long op;
    private final java.util.Map<String, Long> value = new java.util.HashMap<>();
    private final java.util.Map<String, Long> high = new java.util.HashMap<>();

    static long ms(long millis) {
        return millis * 1_000_000L;
    }

    Histories event(long atMs, String process, String acq, Op f, Type type, @Nullable Long token, @Nullable Long v) {
        return event(atMs, process, acq, ++op, f, type, token, v);
    }

    Histories event(
            long atMs, String process, String acq, long id, Op f, Type type, @Nullable Long token, @Nullable Long v) {
        client.add(new ClientEvent(ms(atMs), 0, process, "t", "k", acq, id, f, type, token, v, null));
        return this;
    }

    /** An acquisition: invoked at {@code inv}, returned at {@code ok} with {@code token}. */
    Histories acquire(String process, String acq, long inv, long ok, long token) {
        event(inv, process, acq, Op.ACQUIRE, Type.INVOKE, null, null);
        return event(ok, process, acq, Op.ACQUIRE, Type.OK, token, null);
    }

    /** An acquire that waited from {@code inv} and answered busy at {@code done}. */
    Histories busy(String process, String acq, long inv, long done) {
        long id = ++op;
        event(inv, process, acq, id, Op.ACQUIRE, Type.INVOKE, null, null);
        return event(done, process, acq, id, Op.ACQUIRE, Type.FAIL, null, null);
    }

    Histories check(String process, String acq, long at, long token) {
        return event(at, process, acq, Op.CHECK, Type.OK, token, null);
    }

    Histories release(String process, String acq, long inv, long done, long token, Type outcome) {
        event(inv, process, acq, Op.RELEASE, Type.INVOKE, token, null);
        return event(done, process, acq, Op.RELEASE, outcome, token, null);
    }

    Histories lost(String process, String acq, long at, long token) {
        return event(at, process, acq, Op.LOST, Type.OK, token, null);
    }

    /** A fenced read-increment-write under the hold, accepted as the rule says (the resource is simulated here). */
    Histories increment(String process, String acq, long readAt, long writeAt, long token) {
        long before = value.getOrDefault("k", 0L);
        long read = ++op;
        resourceOp(readAt, process, acq, token, false, before, read);
        event(readAt, process, acq, read, Op.READ, Type.OK, token, before);
        long write = ++op;
        boolean accepted = resourceOp(writeAt, process, acq, token, true, before + 1, write);
        return event(writeAt, process, acq, write, Op.WRITE, accepted ? Type.OK : Type.FAIL, token, before + 1);
    }

    /**
     * A fenced read-increment-write whose process dies after sending the write: the resource applies it, and the
     * process's history ends with the write's invocation.
     */
    Histories killedAfterWriting(String process, String acq, long readAt, long writeAt, long token) {
        long before = value.getOrDefault("k", 0L);
        long read = ++op;
        resourceOp(readAt, process, acq, token, false, before, read);
        event(readAt, process, acq, read, Op.READ, Type.OK, token, before);
        long write = ++op;
        event(writeAt, process, acq, write, Op.WRITE, Type.INVOKE, token, before + 1);
        resourceOp(writeAt + 1, process, acq, token, true, before + 1, write);
        return this;
    }

    /** A request as an unfenced resource records it: always accepted. */
    Histories unfenced(long at, String process, String acq, long token, boolean write, long newValue) {
        long before = value.getOrDefault("k", 0L);
        long after = write ? newValue : before;
        value.put("k", after);
        resource.add(new ResourceEvent(ms(at), "k", token, acq, process, ++op, write, true, "unfenced", before, after));
        if (write) {
            client.add(
                    new ClientEvent(ms(at), 0, process, "t", "k", acq, op, Op.WRITE, Type.OK, token, newValue, null));
        }
        return this;
    }

    private boolean resourceOp(long at, String process, String acq, long token, boolean write, long newValue, long id) {
        long before = value.getOrDefault("k", 0L);
        Long h = high.get("k");
        boolean accepted = h == null || token >= h;
        if (accepted) {
            high.put("k", token);
            if (write) {
                value.put("k", newValue);
            }
        }
        resource.add(new ResourceEvent(
                ms(at),
                "k",
                token,
                acq,
                process,
                id,
                write,
                accepted,
                accepted ? "" : "stale",
                before,
                value.getOrDefault("k", 0L)));
        return accepted;
    }

    Histories fault(long startMs, long endMs, String fault, String target, NemesisEvent.Effect effect) {
        nemesis.add(new NemesisEvent(ms(startMs), fault, target, NemesisEvent.Phase.START, "k", effect));
        nemesis.add(new NemesisEvent(ms(endMs), fault, target, NemesisEvent.Phase.END, "k", effect));
        return this;
    }

    History build() {
        return History.of(client, resource, nemesis, Map.of("scenario", "test"));
    }
}
