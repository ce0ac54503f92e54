package io.distlock.internal;

import io.distlock.DistributedCountDownLatch;
import io.distlock.DistributedLock;
import io.distlock.DistributedReadWriteLock;
import io.distlock.DistributedSemaphore;
import io.distlock.LockAdmin;
import io.distlock.LockClient;
import java.util.Objects;

/**
 * The base of every backend's public {@code *LockClient}: it hands each primitive to the client's {@link LockEngine},
 * so a new primitive is added here once, not once per backend. Not API: a backend's client is used through {@link
 * LockClient}.
 */
public abstract class EngineClient implements LockClient {
    private final LockEngine engine;

    protected EngineClient(LockEngine engine) {
        this.engine = Objects.requireNonNull(engine, "engine");
    }

    /** The engine this client hands its work to. */
    protected final LockEngine engine() {
        return engine;
    }

    @Override
    public final DistributedLock lock(String name) {
        return engine.lock(name);
    }

    @Override
    public final DistributedLock fairLock(String name) {
        return engine.fairLock(name);
    }

    @Override
    public final DistributedReadWriteLock readWriteLock(String name) {
        return engine.readWriteLock(name);
    }

    @Override
    public final DistributedSemaphore semaphore(String name, int permits) {
        return engine.semaphore(name, permits);
    }

    @Override
    public final DistributedCountDownLatch countDownLatch(String name) {
        return engine.countDownLatch(name);
    }

    @Override
    public final String clientId() {
        return engine.clientId();
    }

    @Override
    public final LockAdmin admin() {
        return engine.admin();
    }

    /** Closes the engine and, with it, the store; a backend that opened more (a connection pool) closes it after. */
    @Override
    public void close() {
        engine.close();
    }
}
