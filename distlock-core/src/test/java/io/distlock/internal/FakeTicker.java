package io.distlock.internal;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/** A ticker moved by hand. */
final class FakeTicker implements Ticker {
    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

    @Override
    public long read() {
        return nanos.get();
    }

    void advance(Duration d) {
        nanos.addAndGet(d.toNanos());
    }
}
