package io.distlock.internal;

import io.distlock.DistributedLock;
import io.distlock.spi.Mode;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/** The read or the write view of a {@link EngineReadWriteLock}: a {@link DistributedLock} over a {@link ClaimEngine}. */
final class ClaimLock extends LockView {
    private final ClaimEngine engine;
    private final ClaimView view;

    ClaimLock(LockEngine host, ClaimEngine engine, ClaimView view) {
        super(host);
        this.engine = engine;
        this.view = view;
    }

    @Override
    public String name() {
        return view.name;
    }

    @Override
    @Nullable
    ClaimHold acquire(AcquireCall call) throws InterruptedException {
        return engine.acquire(view, 1, call);
    }

    @Override
    <T> CompletableFuture<T> acquireAsync(AcquireCall call, AsyncWait.Deliver<T> deliver) {
        return engine.acquireAsync(view, 1, call, deliver);
    }

    /** The thread's valid hold of this view's mode. */
    @Override
    @Nullable
    ClaimHold threadHold() {
        return engine.threadHold(view);
    }

    @Override
    public void unlock() {
        engine.unlockThread(view);
    }

    @Override
    public boolean isLocked() {
        return engine.isHeld(view);
    }

    @Override
    public int getHoldCount() {
        return engine.threadHoldCount(view);
    }

    @Override
    String describe() {
        return view.describe();
    }

    @Override
    Listeners listeners() {
        return view.listeners;
    }

    @Override
    public String toString() {
        return view.mode == Mode.SHARED ? "ReadLock[" + view.name + "]" : "WriteLock[" + view.name + "]";
    }
}
