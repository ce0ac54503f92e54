package io.distlock.internal;

import io.distlock.DistributedLock;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/** The one {@link DistributedLock} implementation of a plain or fair lock: a view of a name on a {@link LockEngine}. */
final class EngineLock extends LockView {
    private final String name;
    final boolean fair;
    private final Listeners listeners;

    EngineLock(LockEngine engine, String name, boolean fair) {
        super(engine);
        this.name = name;
        this.fair = fair;
        this.listeners = new Listeners(name);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    @Nullable
    HoldImpl acquire(AcquireCall call) throws InterruptedException {
        return host.acquire(this, call);
    }

    @Override
    <T> CompletableFuture<T> acquireAsync(AcquireCall call, AsyncWait.Deliver<T> deliver) {
        return host.acquireAsync(this, call, deliver);
    }

    /** The thread's active hold, valid or not: its fencing token stays readable until the loss is found. */
    @Override
    @Nullable
    HoldImpl threadHold() {
        return host.threadHold(this);
    }

    @Override
    public void unlock() {
        host.unlockThread(this);
    }

    @Override
    public boolean isLocked() {
        return host.isLocked(this);
    }

    @Override
    public int getHoldCount() {
        return host.threadHoldCount(this);
    }

    @Override
    String describe() {
        return "lock '" + name + "'";
    }

    @Override
    Listeners listeners() {
        return listeners;
    }

    void fireAcquired(long token) {
        listeners.acquired(token);
    }

    void fireReleased(long token) {
        listeners.released(token);
    }

    void fireLost(long token, @Nullable Throwable cause) {
        listeners.lost(token, cause);
    }

    @Override
    public String toString() {
        return (fair ? "FairLock[" : "Lock[") + name + "]";
    }
}
