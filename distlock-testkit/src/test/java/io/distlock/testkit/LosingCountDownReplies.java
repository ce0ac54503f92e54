package io.distlock.testkit;

import io.distlock.spi.CounterStore;
import io.distlock.spi.LockKey;
import java.io.UncheckedIOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** Fault injection: a count-down takes effect in the store, then its reply is lost the first time its id is sent. */
final class LosingCountDownReplies extends ForwardingCounterStore {
    private final Set<String> seen = ConcurrentHashMap.newKeySet();

    LosingCountDownReplies(CounterStore delegate) {
        super(delegate);
    }

    @Override
    public long countDown(LockKey key, String callId, Duration expiry) {
        long count = delegate.countDown(key, callId, expiry);
        if (seen.add(callId)) {
            throw new UncheckedIOException(
                    new SocketTimeoutException("injected: the reply of count-down " + callId + " was lost"));
        }
        return count;
    }
}
