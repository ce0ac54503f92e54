package io.distlock.testkit.history;

import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * The start or end of a fault.
 *
 * @param t {@link System#nanoTime()}
 * @param fault what kind of fault ({@code blackhole}, {@code pause}, {@code kill}, {@code delete-hold}, ...)
 * @param target what it hit (a proxy, a server, a client process)
 * @param phase start or end
 * @param key the lock name it aims at, or empty
 * @param effect what the checker should expect of it
 */
public record NemesisEvent(long t, String fault, String target, Phase phase, String key, Effect effect) {

    /** Start or end. */
    public enum Phase {
        START,
        END
    }

    /** What a fault does to the holder of {@link #key}, which decides the liveness checks that measure it. */
    public enum Effect {
        /** Nothing in particular. */
        NONE,
        /** The holder stops or is cut off (crash, pause, blackhole): another owner should take over within L1. */
        HOLDER_DOWN,
        /** The store removes the hold (delete, revoke, kill session): the holder should be told within L5. */
        HOLD_REMOVED
    }

    public NemesisEvent {
        Objects.requireNonNull(fault, "fault");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(phase, "phase");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(effect, "effect");
    }

    String toJson() {
        return new Json.Line()
                .put("kind", "nemesis")
                .put("t", t)
                .put("fault", fault)
                .put("target", target)
                .put("phase", phase.name().toLowerCase(Locale.ROOT))
                .put("key", key)
                .put("effect", effect.name().toLowerCase(Locale.ROOT))
                .end();
    }

    static NemesisEvent fromJson(Map<String, Object> m) {
        return new NemesisEvent(
                Json.num(m, "t"),
                Json.str(m, "fault"),
                Json.str(m, "target", ""),
                Phase.valueOf(Json.str(m, "phase").toUpperCase(Locale.ROOT)),
                Json.str(m, "key", ""),
                Effect.valueOf(Json.str(m, "effect", "none").toUpperCase(Locale.ROOT)));
    }

    @Override
    public String toString() {
        return "NEMESIS " + fault + " " + phase.name().toLowerCase(Locale.ROOT) + " on " + target
                + (key.isEmpty() ? "" : " key=" + key);
    }
}
