package io.distlock.testkit;

import io.distlock.LockClient;
import io.distlock.internal.Checks;
import io.distlock.internal.EngineClient;
import io.distlock.internal.EngineConfig;
import io.distlock.internal.LockEngine;
import io.distlock.internal.Ticker;
import io.distlock.spi.OwnerId;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * A {@link LockClient} whose store lives in this JVM: the same engine and contract as every backend, for unit tests
 * of code that uses distlock, and for demonstrating the contract.
 *
 * <p><b>Guarantees:</b> everything the contract promises, among the clients of one {@link InMemoryLockServer}.
 * <b>Failure modes:</b> none from a store; the data is gone with the JVM. <b>Requirements:</b> none; not for use
 * across processes.
 *
 * <pre>{@code
 * LockClient client = InMemoryLockClient.create();
 * DistributedLock lock = client.lock("job");
 * }</pre>
 */
public final class InMemoryLockClient extends EngineClient {

    private InMemoryLockClient(LockEngine engine) {
        super(engine);
    }

    /** A client on a fresh server of its own. */
    public static InMemoryLockClient create() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public String toString() {
        return "InMemoryLockClient[" + OwnerId.redact(clientId()) + "]";
    }

    /** Options for an {@link InMemoryLockClient}. */
    public static final class Builder {
        private @Nullable InMemoryLockServer server;
        private Duration leaseTime = EngineConfig.DEFAULT_LEASE;
        private @Nullable Ticker ticker;
        private boolean strictQueue;
        private int maxWaiters = EngineConfig.DEFAULT_MAX_WAITERS;
        private Duration latchExpiry = EngineConfig.DEFAULT_LATCH_EXPIRY;
        private @Nullable Executor asyncExecutor;

        private Builder() {}

        /** The server to share with other clients; default: a new one for this client alone. */
        public Builder server(InMemoryLockServer server) {
            this.server = Objects.requireNonNull(server, "server");
            return this;
        }

        /** The lease of holds taken without a lease argument, renewed every third of it; default 30 s. */
        public Builder leaseTime(Duration leaseTime) {
            this.leaseTime = Checks.lease(leaseTime, "leaseTime");
            return this;
        }

        /**
         * The client's monotonic clock, in nanoseconds (as {@link System#nanoTime()}, the default); tests drive time by
         * hand with it.
         */
        public Builder ticker(LongSupplier nanoTime) {
            Objects.requireNonNull(nanoTime, "nanoTime");
            this.ticker = nanoTime::getAsLong;
            return this;
        }

        /**
         * Makes the store behave like one whose queue is the only order (ZooKeeper, etcd): waiting attempts always
         * queue, no attempt passes a queued waiter, and a release hands the lock to a waiting thread of this client
         * only when no owner of another client is queued ahead of it. Default false (Redis-like: a fair queue that
         * non-fair locks may pass).
         */
        public Builder strictQueue(boolean strictQueue) {
            this.strictQueue = strictQueue;
            return this;
        }

        /**
         * How many acquires and latch awaits of this client may wait at once; one more is refused at once with {@link
         * java.util.concurrent.RejectedExecutionException}. Default 10,000.
         */
        public Builder maxWaiters(int maxWaiters) {
            this.maxWaiters = Checks.positive(maxWaiters, "maxWaiters");
            return this;
        }

        /** How long a count-down latch's data stays after its last change; default one day. */
        public Builder latchExpiry(Duration latchExpiry) {
            this.latchExpiry = Checks.lease(latchExpiry, "latchExpiry");
            return this;
        }

        /**
         * Where asynchronous acquires run their steps and complete their futures; default: the client's own small pool
         * of daemon threads, shut down with the client (a given executor is left running).
         */
        public Builder asyncExecutor(Executor asyncExecutor) {
            this.asyncExecutor = Objects.requireNonNull(asyncExecutor, "asyncExecutor");
            return this;
        }

        public InMemoryLockClient build() {
            InMemoryLockServer s = server != null ? server : InMemoryLockServer.create();
            return new InMemoryLockClient(LockEngine.create(InMemoryLockStore.of(s, strictQueue), config()));
        }

        /** Builds over a store other than the standard one; the testkit's own tests use it for broken variants. */
        InMemoryLockClient build(InMemoryLockStore store) {
            return new InMemoryLockClient(LockEngine.create(store, config()));
        }

        private EngineConfig config() {
            EngineConfig c = EngineConfig.defaults()
                    .withWatchdogLease(leaseTime)
                    .withMaxWaiters(maxWaiters)
                    .withLatchExpiry(latchExpiry)
                    .withAsyncExecutor(asyncExecutor);
            return ticker != null ? c.withTicker(ticker) : c;
        }
    }
}
