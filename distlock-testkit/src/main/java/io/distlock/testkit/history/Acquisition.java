package io.distlock.testkit.history;

import io.distlock.testkit.history.ClientEvent.Op;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * One acquisition that happened or may have happened (acquire {@code ok} or {@code info}), derived from the client
 * events that carry its id. Times are {@link System#nanoTime()} values.
 *
 * @param key the lock name
 * @param acq the acquisition id
 * @param process the client process
 * @param tInv when the acquire was invoked
 * @param tOk when it returned a hold, or null if its outcome is unknown ({@code info})
 * @param token the fencing token, or null if unknown
 * @param beliefEnd the last moment the client believed it held the lock: the latest {@code check ok}, or {@code tOk}
 *     without checks (for an {@code info} acquisition, and for a hold whose first check after the acquire failed,
 *     {@code tInv}: the hold may have ended before the answer arrived)
 * @param tRelease when the release was invoked, or null
 * @param releaseOutcome the release's outcome ({@code OK}, {@code FAIL} = reported lost, {@code INFO}), or null
 * @param tReleaseDone when the release returned, or null
 * @param tLost when the library first told the client the hold was lost (listener, or a release answering lost), or
 *     null
 * @param checkOkAfterLost a {@code check ok} recorded after the loss was reported, or null
 */
public record Acquisition(
        String key,
        String acq,
        String process,
        long tInv,
        @Nullable Long tOk,
        @Nullable Long token,
        long beliefEnd,
        @Nullable Long tRelease,
        ClientEvent.@Nullable Type releaseOutcome,
        @Nullable Long tReleaseDone,
        @Nullable Long tLost,
        @Nullable Long checkOkAfterLost) {

    /** Whether the acquire returned a hold (its outcome is known). */
    public boolean ok() {
        return tOk != null;
    }

    /** When the acquire returned a hold, or {@link Long#MAX_VALUE} if its outcome is unknown. */
    long okAt() {
        return tOk == null ? Long.MAX_VALUE : tOk;
    }

    /** The token, or {@link Long#MIN_VALUE} if unknown. */
    long tokenOr() {
        return token == null ? Long.MIN_VALUE : token;
    }

    /**
     * The acquisitions of a history, in invocation order. Acquires that failed are left out: they did not happen.
     */
    public static List<Acquisition> of(History history) {
        Map<String, List<ClientEvent>> byAcq = new LinkedHashMap<>();
        for (ClientEvent e : history.client()) {
            if (e.f() != Op.PROBE && e.f() != Op.LEFTOVERS) {
                byAcq.computeIfAbsent(e.acq(), k -> new ArrayList<>()).add(e);
            }
        }
        List<Acquisition> out = new ArrayList<>();
        for (List<ClientEvent> events : byAcq.values()) {
            Acquisition a = derive(events);
            if (a != null) {
                out.add(a);
            }
        }
        out.sort(Comparator.comparingLong(Acquisition::tInv));
        return out;
    }

    private static @Nullable Acquisition derive(List<ClientEvent> events) {
        ClientEvent invoke = null;
        ClientEvent outcome = null;
        Long token = null;
        Long lastCheckOk = null;
        Long tRelease = null;
        ClientEvent.Type releaseOutcome = null;
        Long tReleaseDone = null;
        Long tLost = null;
        Long checkOkAfterLost = null;
        boolean neverValid = false;
        for (ClientEvent e : events) {
            if (e.token() != null && token == null && e.f() != Op.LOST) {
                token = e.token();
            }
            switch (e.f()) {
                case ACQUIRE -> {
                    if (e.type() == ClientEvent.Type.INVOKE) {
                        invoke = e;
                    } else {
                        outcome = e;
                    }
                }
                case CHECK -> {
                    if (e.type() != ClientEvent.Type.OK && lastCheckOk == null) {
                        neverValid = true; // the hold was not valid at the first look after the acquire returned
                    }
                    if (e.type() == ClientEvent.Type.OK) {
                        lastCheckOk = e.t();
                        if (tLost != null && checkOkAfterLost == null) {
                            checkOkAfterLost = e.t();
                        }
                    }
                }
                case RELEASE -> {
                    if (e.type() == ClientEvent.Type.INVOKE) {
                        tRelease = e.t();
                    } else {
                        releaseOutcome = e.type();
                        tReleaseDone = e.t();
                        if (e.type() == ClientEvent.Type.FAIL && tLost == null) {
                            tLost = e.t();
                        }
                    }
                }
                case LOST -> {
                    if (tLost == null) {
                        tLost = e.t();
                    }
                }
                default -> {}
            }
        }
        if (invoke == null) {
            return null;
        }
        // an invoke without an outcome (its process died waiting) is unknown, like an info outcome
        if (outcome != null && outcome.type() == ClientEvent.Type.FAIL) {
            return null;
        }
        Long tOk = outcome != null && outcome.type() == ClientEvent.Type.OK ? outcome.t() : null;
        boolean known = tOk != null;
        long start = tOk != null ? tOk : invoke.t();
        // a hold found invalid at its first check may have ended before its answer arrived: the client never
        // believed in it, and its end may lie anywhere after the invocation
        long beliefEnd = known && !(neverValid && lastCheckOk == null)
                ? Math.max(start, lastCheckOk == null ? start : lastCheckOk)
                : invoke.t();
        return new Acquisition(
                invoke.key(),
                invoke.acq(),
                invoke.process(),
                invoke.t(),
                tOk,
                known ? token : null,
                beliefEnd,
                tRelease,
                releaseOutcome,
                tReleaseDone,
                tLost,
                checkOkAfterLost);
    }
}
