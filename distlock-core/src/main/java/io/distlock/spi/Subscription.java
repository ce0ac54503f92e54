package io.distlock.spi;

/** A registration for release notifications of one lock name, returned by {@link ClaimStore#subscribe}. */
public interface Subscription extends AutoCloseable {

    /**
     * Whether the store will call the wake-up when the lock may be free. A store without notifications returns
     * {@link #none()}, and the client then polls with jittered back-off bounded by the holder's remaining lease.
     */
    default boolean notifies() {
        return true;
    }

    /** Stops notifications. Must not throw. */
    @Override
    void close();

    /** The subscription of a store that cannot notify. */
    static Subscription none() {
        return NoSubscription.INSTANCE;
    }
}

enum NoSubscription implements Subscription {
    INSTANCE;

    @Override
    public boolean notifies() {
        return false;
    }

    @Override
    public void close() {}
}
