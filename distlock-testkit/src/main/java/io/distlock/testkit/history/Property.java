package io.distlock.testkit.history;

/** The properties the {@link HistoryChecker} judges (FAULTS.md section 3.5). */
public enum Property {
    /** Believed holds of distinct acquisitions on one key are disjoint. */
    S1("believed holds disjoint"),
    /** A token is greater than every token returned before its acquire began; tokens are unique. */
    S2("token order"),
    /** The fenced resource lost no increment and accepted each token from one acquisition only. */
    S3("fence safety"),
    /** Raw overlaps at the resource: ops of one acquisition arriving after another's first op (measured). */
    S4("raw overlaps"),
    /** After the holder went down, another owner got the lock within the bound. */
    L1("takeover"),
    /** After the faults healed, every probing client could take every key. */
    L3("recovery"),
    /** Nothing lock-related was left in the store after quiescence. */
    L4("no leftovers"),
    /** A hold removed in the store was reported lost within the bound. */
    L5("loss told"),
    /**
     * Outside the faults' windows (each extended by the idle bound), no key stays held by nobody for longer than the
     * bound while some client asks for it: a grant the store keeps for no live holder (judged as SHOULD).
     */
    L6("held by nobody while asked for"),
    /** The history is linearizable against the fenced-mutex model (per key, time-capped). */
    LIN("linearizable");

    private final String title;

    Property(String title) {
        this.title = title;
    }

    public String title() {
        return title;
    }
}
