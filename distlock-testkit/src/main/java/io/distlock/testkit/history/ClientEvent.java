package io.distlock.testkit.history;

import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One step of a lock client, as its process recorded it: the start ({@link Type#INVOKE}) or the outcome of an
 * operation. Outcomes follow Jepsen: {@link Type#OK} happened, {@link Type#FAIL} definitely did not, {@link Type#INFO}
 * is unknown (a timeout, a store error, a crash before the reply).
 *
 * @param t {@link System#nanoTime()} when the event was recorded; shared by every JVM of one Linux machine
 * @param wall {@link System#currentTimeMillis()}, for people reading the file only (never compared)
 * @param process the client process (one history file each)
 * @param thread the recording thread's name
 * @param key the lock name
 * @param acq the acquisition id: one per acquire attempt, carried by every event of the hold it made
 * @param op the operation id, unique in the process, shared by an invoke and its outcome
 * @param f what was done
 * @param type invoke or outcome
 * @param token the fencing token, once known
 * @param value a read's result, a write's new value, a count of leftovers
 * @param error why an operation failed or is unknown
 */
public record ClientEvent(
        long t,
        long wall,
        String process,
        String thread,
        String key,
        String acq,
        long op,
        Op f,
        Type type,
        @Nullable Long token,
        @Nullable Long value,
        @Nullable String error) {

    /** What a client did. */
    public enum Op {
        /** Took a hold (invoke before the first request, ok when the acquire returned). */
        ACQUIRE,
        /** Ended a hold; {@code fail} when the library answered that it was lost before. */
        RELEASE,
        /** The library reported the hold lost (listener or watchdog). */
        LOST,
        /** Asked the library whether the hold is still valid: {@code ok} if it said yes, {@code fail} if no. */
        CHECK,
        /** Read the fenced resource under the hold. */
        READ,
        /** Wrote the fenced resource under the hold. */
        WRITE,
        /** After the faults healed: tried to take and release every key ({@code ok} if it could). */
        PROBE,
        /** After quiescence: what was left in the store ({@code value} entries, {@code error} says which). */
        LEFTOVERS
    }

    /** Start or outcome. */
    public enum Type {
        INVOKE,
        OK,
        FAIL,
        INFO
    }

    public ClientEvent {
        Objects.requireNonNull(process, "process");
        Objects.requireNonNull(thread, "thread");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(acq, "acq");
        Objects.requireNonNull(f, "f");
        Objects.requireNonNull(type, "type");
    }

    String toJson() {
        return new Json.Line()
                .put("kind", "client")
                .put("t", t)
                .put("wall", wall)
                .put("process", process)
                .put("thread", thread)
                .put("key", key)
                .put("acq", acq)
                .put("op", op)
                .put("f", f.name().toLowerCase(java.util.Locale.ROOT))
                .put("type", type.name().toLowerCase(java.util.Locale.ROOT))
                .put("token", token)
                .put("value", value)
                .put("error", error)
                .end();
    }

    static ClientEvent fromJson(Map<String, Object> m) {
        return new ClientEvent(
                Json.num(m, "t"),
                Json.num(m, "wall", 0),
                Json.str(m, "process"),
                Json.str(m, "thread", ""),
                Json.str(m, "key"),
                Json.str(m, "acq"),
                Json.num(m, "op", 0),
                Op.valueOf(Json.str(m, "f").toUpperCase(java.util.Locale.ROOT)),
                Type.valueOf(Json.str(m, "type").toUpperCase(java.util.Locale.ROOT)),
                Json.optNum(m, "token"),
                Json.optNum(m, "value"),
                Json.optStr(m, "error"));
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder()
                .append(process)
                .append(' ')
                .append(f.name().toLowerCase(java.util.Locale.ROOT))
                .append(' ')
                .append(type.name().toLowerCase(java.util.Locale.ROOT))
                .append(" acq=")
                .append(acq);
        if (token != null) {
            b.append(" token=").append(token);
        }
        if (value != null) {
            b.append(" value=").append(value);
        }
        if (error != null) {
            b.append(" (").append(error).append(')');
        }
        return b.toString();
    }
}
