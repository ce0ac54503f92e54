package io.distlock.testkit.fault;

import io.distlock.testkit.history.HistoryWriter;
import io.distlock.testkit.history.NemesisEvent;
import java.util.Objects;

/** Told when a fault starts and when it ends; a history records it as nemesis events. */
@FunctionalInterface
public interface FaultLog {
    /** Logs nothing. */
    FaultLog NONE = (fault, target, start) -> {};

    /**
     * A fault named {@code fault} on {@code target} started ({@code start}) or ended.
     *
     * <p>Called on the thread that started or healed the fault; must not block.
     */
    void record(String fault, String target, boolean start);

    /**
     * Records into {@code history} as nemesis events about lock {@code key} with {@code effect} (what the checker
     * should expect of the fault: a holder going down, a hold removed, or nothing in particular).
     */
    static FaultLog to(HistoryWriter history, String key, NemesisEvent.Effect effect) {
        Objects.requireNonNull(history, "history");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(effect, "effect");
        return (fault, target, start) ->
                history.nemesis(fault, target, start ? NemesisEvent.Phase.START : NemesisEvent.Phase.END, key, effect);
    }
}
