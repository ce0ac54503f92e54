package io.distlock.spi;

import java.time.Duration;
import java.util.Objects;

/** The answer to one acquisition attempt. */
public sealed interface Attempt {

    /** The owner holds the lock now, with this fencing token. */
    record Acquired(long fencingToken) implements Attempt {}

    /**
     * Another owner holds the lock (or is ahead in the queue). {@code retryWithin} is the longest the client may wait
     * for a notification before it must try again: the holder's remaining lease, or less when the store needs a
     * queued waiter to come back sooner to keep its place. {@link Duration#ZERO} asks for a retry at once.
     */
    record Busy(Duration retryWithin) implements Attempt {
        public Busy {
            Objects.requireNonNull(retryWithin, "retryWithin");
        }
    }

    static Attempt acquired(long fencingToken) {
        return new Acquired(fencingToken);
    }

    static Attempt busy(Duration retryWithin) {
        return new Busy(retryWithin);
    }
}
