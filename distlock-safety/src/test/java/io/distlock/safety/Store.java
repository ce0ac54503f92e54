package io.distlock.safety;

import java.time.Duration;
import java.util.List;

/**
 * One backend topology under test: its servers (started by the fixture, shared by the scenarios of one test class),
 * how a client process reaches them, and what the checker needs to know about them. Each scenario uses a prefix of
 * its own (key prefix, root path, namespace, table), so scenarios on one store never see each other's locks.
 */
abstract class Store implements AutoCloseable {

    /** What the store still had under a prefix after quiescence. */
    record Leftovers(long count, String detail) {}

    /** The column name in the report: {@code redis}, {@code redis-sentinel}, ... */
    abstract String name();

    /** The ports on 127.0.0.1 clients connect to, each of which a fault proxy can stand in front of. */
    abstract List<Integer> ports();

    /**
     * Whether clients can be put behind proxies: false where the store tells clients the real addresses of its nodes
     * (Sentinel, Cluster).
     */
    boolean proxiable() {
        return true;
    }

    /** The client spec of {@code clientId} for the scenario's {@code prefix}, reaching the store on {@code ports}. */
    abstract String spec(String clientId, String prefix, List<Integer> ports);

    /** The scenario's prefix in the store's own form. */
    abstract String prefix(String scenarioId);

    /** How long the hold of a holder that died lasts in the store: the lease, the session, the TTL. */
    abstract Duration expiry();

    /** How often a holder renews (and so finds out its hold is gone). */
    abstract Duration renewInterval();

    /** What is left under {@code prefix}: holds, waiters, queue entries; fence counters do not count. */
    abstract Leftovers leftovers(String prefix);

    /** Whether fencing tokens are strictly increasing across the faults this store is tested under. */
    boolean soundTokens() {
        return true;
    }

    @Override
    public abstract void close();

    @Override
    public String toString() {
        return name();
    }
}
