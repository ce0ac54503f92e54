package io.distlock.spi;

import java.time.Duration;
import java.util.Objects;

/** The answer to one acquisition attempt. */
public sealed interface Attempt {

    /**
     * The owner holds the lock now, with this fencing token.
     *
     * @param spareTokens how many tokens after {@code fencingToken} the store reserved for this hold: no other grant of
     *     the name will get a token up to {@code fencingToken + spareTokens}. The client may give them, without a
     *     round trip, to threads of its own that take the hold over from its owner while the store keeps the hold
     *     under the acquiring owner's id. 0 for stores that reserve none.
     */
    record Acquired(long fencingToken, int spareTokens) implements Attempt {
        public Acquired {
            if (spareTokens < 0) {
                throw new IllegalArgumentException("spareTokens must not be negative: " + spareTokens);
            }
        }

        public Acquired(long fencingToken) {
            this(fencingToken, 0);
        }
    }

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

    static Attempt acquired(long fencingToken, int spareTokens) {
        return new Acquired(fencingToken, spareTokens);
    }

    static Attempt busy(Duration retryWithin) {
        return new Busy(retryWithin);
    }
}
