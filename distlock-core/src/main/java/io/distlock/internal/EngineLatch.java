package io.distlock.internal;

import io.distlock.DistributedCountDownLatch;
import io.distlock.spi.CounterStore;
import io.distlock.spi.LockKey;
import io.distlock.spi.Subscription;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * Counting
 *   trySetCount, countDown and getCount are one CounterStore step each. Every countDown carries an id of its own
 *   ("<clientId>:c<n>"), and a call whose round trip failed is sent once more with the same id, which the store
 *   counts at most once: a lost reply never counts twice.
 *
 * Waiting
 *   await subscribes to the name's zero wake-up, then reads the count (so a zero reached between the two is not
 *   missed) and parks until a wake-up, its deadline, or a re-check interval that bounds the cost of a lost
 *   notification; a store that cannot notify is polled with jittered back-off. The subscription is closed when the
 *   wait ends, whatever ended it: nothing is left behind.
 */
/** A count-down latch over a {@link CounterStore}. */
final class EngineLatch implements DistributedCountDownLatch {
    private static final long FOREVER = Long.MAX_VALUE / 4;
    /** How long a waiter trusts its subscription before it reads the count anyway (a lost notification). */
    private static final long RECHECK_NANOS = TimeUnit.SECONDS.toNanos(10);

    private static final long POLL_BASE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    private static final long POLL_CAP_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    private final LockEngine host;
    private final CounterStore store;
    private final LockKey key;
    private final Duration expiry;
    private final Ticker ticker;

    EngineLatch(LockEngine host, CounterStore store, String name, Duration expiry, Ticker ticker) {
        this.host = host;
        this.store = store;
        this.key = new LockKey(name);
        this.expiry = expiry;
        this.ticker = ticker;
    }

    @Override
    public String name() {
        return key.name();
    }

    @Override
    public boolean trySetCount(long count) {
        if (count < 1) {
            throw new IllegalArgumentException("count must be positive: " + count);
        }
        host.ensureOpen();
        return StoreCalls.call("trySetCount", key, () -> store.trySetCount(key, count, expiry));
    }

    @Override
    public void countDown() {
        host.ensureOpen();
        String callId = host.newCallId();
        try {
            var unused = store.countDown(key, callId, expiry);
        } catch (IllegalStateException e) {
            throw e;
        } catch (RuntimeException first) {
            try {
                var unused = store.countDown(key, callId, expiry); // the same id: counted at most once
            } catch (RuntimeException second) {
                second.addSuppressed(first);
                throw StoreCalls.storeFailure("countDown", key, second);
            }
        }
    }

    @Override
    public long getCount() {
        host.ensureOpen();
        return StoreCalls.call("getCount", key, () -> store.count(key));
    }

    @Override
    public void await() throws InterruptedException {
        var unused = awaitNanos(FOREVER);
    }

    @Override
    public boolean await(Duration timeout) throws InterruptedException {
        return awaitNanos(Checks.waitNanos(timeout, "timeout"));
    }

    private boolean awaitNanos(long waitNanos) throws InterruptedException {
        if (getCount() == 0) {
            return true;
        }
        if (waitNanos <= 0) {
            return false;
        }
        WaiterLimit limit = host.waiterLimit();
        limit.enter(() -> "an await of latch '" + key.name() + "'");
        try {
            return awaitZero(waitNanos);
        } finally {
            limit.exit();
        }
    }

    private boolean awaitZero(long waitNanos) throws InterruptedException {
        long deadline = ticker.read() + waitNanos;
        ClaimWaiter.Parked w = new ClaimWaiter.Parked();
        Subscription sub = StoreCalls.call("await", key, () -> store.watchZero(key, w::wake));
        try {
            Backoff backoff = sub.notifies() ? null : new Backoff(POLL_BASE_NANOS, POLL_CAP_NANOS);
            for (; ; ) {
                w.woken = false;
                if (getCount() == 0) {
                    return true;
                }
                long now = ticker.read();
                if (now - deadline >= 0) {
                    return false;
                }
                long park = Math.min(deadline - now, backoff == null ? RECHECK_NANOS : backoff.nextNanos());
                if (!w.woken) {
                    LockSupport.parkNanos(this, park);
                }
                if (Thread.interrupted()) {
                    throw new InterruptedException("interrupted while waiting for latch '" + key.name() + "'");
                }
            }
        } finally {
            StoreCalls.closeQuietly(sub);
        }
    }

    @Override
    public CompletableFuture<Boolean> awaitAsync(Duration timeout) {
        long waitNanos = Checks.waitNanos(timeout, "timeout");
        if (host.isClosed()) {
            return CompletableFuture.failedFuture(host.closedException());
        }
        return host.async()
                .start(
                        waitNanos,
                        () -> "an await of latch '" + key.name() + "'",
                        onEnd -> new AsyncAwait(waitNanos, onEnd));
    }

    /** An await whose checks run on the client's executor, scheduled by the zero wake-up or a timer. */
    private final class AsyncAwait extends AsyncWait<Boolean> {
        private final long waitNanos;
        private final long deadline;
        private final Runnable onEnd;
        private @Nullable Subscription sub;
        private @Nullable Backoff backoff;
        private boolean zero;
        private long next;

        AsyncAwait(long waitNanos, Runnable onEnd) {
            super(host.async());
            this.waitNanos = waitNanos;
            this.deadline = ticker.read() + waitNanos;
            this.onEnd = onEnd;
        }

        @Override
        boolean step() {
            if (sub == null) {
                // the count first, as await does: a latch at zero or a wait of 0 needs no subscription
                if (getCount() == 0) {
                    zero = true;
                    return true;
                }
                if (waitNanos <= 0) {
                    return true;
                }
                Subscription s = StoreCalls.call("await", key, () -> store.watchZero(key, this::schedule));
                sub = s;
                backoff = s.notifies() ? null : new Backoff(POLL_BASE_NANOS, POLL_CAP_NANOS);
            }
            if (getCount() == 0) {
                zero = true;
                return true;
            }
            long now = ticker.read();
            if (now - deadline >= 0) {
                return true;
            }
            Backoff b = backoff;
            next = Math.min(deadline - now, b == null ? RECHECK_NANOS : b.nextNanos());
            return false;
        }

        @Override
        long waitNanos() {
            return next;
        }

        @Override
        @Nullable
        EngineHold result() {
            return null;
        }

        @Override
        Boolean value(@Nullable EngineHold hold) {
            return zero;
        }

        @Override
        void abandon() {}

        @Override
        void end() {
            Subscription s = sub;
            if (s != null) {
                StoreCalls.closeQuietly(s);
            }
            onEnd.run();
        }
    }

    @Override
    public String toString() {
        return "CountDownLatch[" + key.name() + "]";
    }
}
