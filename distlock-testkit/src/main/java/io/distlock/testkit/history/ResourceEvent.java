package io.distlock.testkit.history;

import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * One request as the {@link FencedResourceServer} saw it, in arrival order.
 *
 * @param t {@link System#nanoTime()} at arrival
 * @param key the counter
 * @param token the fencing token the request carried
 * @param acq the acquisition id it carried
 * @param process the client process that sent it
 * @param op the client's operation id
 * @param write whether it was a write (else a read)
 * @param accepted whether the resource acted on it
 * @param reason why it was refused ({@code stale}, {@code duplicate}); {@code unfenced} when an unfenced resource
 *     accepted what a fenced one would have refused; empty otherwise
 * @param before the counter before the request
 * @param after the counter after it
 */
public record ResourceEvent(
        long t,
        String key,
        long token,
        String acq,
        String process,
        long op,
        boolean write,
        boolean accepted,
        String reason,
        long before,
        long after) {

    public ResourceEvent {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(acq, "acq");
        Objects.requireNonNull(process, "process");
        Objects.requireNonNull(reason, "reason");
    }

    String toJson() {
        return new Json.Line()
                .put("kind", "resource")
                .put("t", t)
                .put("key", key)
                .put("token", token)
                .put("acq", acq)
                .put("process", process)
                .put("op", op)
                .put("f", write ? "write" : "read")
                .put("accepted", accepted)
                .put("reason", reason)
                .put("before", before)
                .put("after", after)
                .end();
    }

    static ResourceEvent fromJson(Map<String, Object> m) {
        return new ResourceEvent(
                Json.num(m, "t"),
                Json.str(m, "key"),
                Json.num(m, "token"),
                Json.str(m, "acq"),
                Json.str(m, "process", ""),
                Json.num(m, "op", 0),
                "write".equals(m.get("f")),
                Boolean.TRUE.equals(m.get("accepted")),
                Json.str(m, "reason", ""),
                Json.num(m, "before", 0),
                Json.num(m, "after", 0));
    }

    @Override
    public String toString() {
        return "resource " + (write ? "write" : "read") + (accepted ? " accepted" : " REFUSED " + reason) + " token="
                + token + " acq=" + acq + " from " + process + " " + before + "->" + after
                + (reason.isEmpty() || !accepted ? "" : " (" + reason.toLowerCase(Locale.ROOT) + ")");
    }
}
