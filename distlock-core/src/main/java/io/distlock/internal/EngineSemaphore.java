package io.distlock.internal;

import static io.distlock.internal.AcquireCall.FOREVER;

import io.distlock.DistributedSemaphore;
import io.distlock.LockListener;
import io.distlock.PermitHold;
import io.distlock.spi.Claim;
import io.distlock.spi.Mode;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/** A semaphore: shared claims of permits of its size on a {@link ClaimEngine}, each an owned, leased hold. */
final class EngineSemaphore implements DistributedSemaphore {
    private final LockEngine host;
    private final ClaimEngine engine;
    private final ClaimView view;

    EngineSemaphore(LockEngine host, ClaimEngine engine, String name, int size) {
        this.host = host;
        this.engine = engine;
        this.view = new ClaimView(name, Claim.Kind.SEMAPHORE, Mode.SHARED, size);
    }

    @Override
    public String name() {
        return view.name;
    }

    @Override
    public int size() {
        return view.size;
    }

    @Override
    public PermitHold acquire() throws InterruptedException {
        return acquire(1);
    }

    @Override
    public PermitHold acquire(int permits) throws InterruptedException {
        int n = checkPermits(permits);
        ClaimHold h = engine.acquire(view, n, AcquireCall.ofHandle(host.newHoldOwner(), null, FOREVER));
        return Objects.requireNonNull(h, "an unbounded wait returned no hold");
    }

    @Override
    public Optional<PermitHold> tryAcquire(int permits) {
        int n = checkPermits(permits);
        try {
            return Optional.ofNullable(engine.acquire(view, n, AcquireCall.ofHandle(host.newHoldOwner(), null, 0)));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // a try without waiting never parks; keep the flag the store saw
            return Optional.empty();
        }
    }

    @Override
    public Optional<PermitHold> tryAcquire(int permits, Duration wait) throws InterruptedException {
        int n = checkPermits(permits);
        long waitNanos = Checks.waitNanos(wait, "wait");
        return Optional.ofNullable(engine.acquire(view, n, AcquireCall.ofHandle(host.newHoldOwner(), null, waitNanos)));
    }

    @Override
    public Optional<PermitHold> tryAcquire(int permits, Duration wait, Duration lease) throws InterruptedException {
        int n = checkPermits(permits);
        long waitNanos = Checks.waitNanos(wait, "wait");
        Duration fixed = Checks.lease(lease, "lease");
        return Optional.ofNullable(
                engine.acquire(view, n, AcquireCall.ofHandle(host.newHoldOwner(), fixed, waitNanos)));
    }

    @Override
    public CompletableFuture<PermitHold> acquireAsync(int permits) {
        int n = checkPermits(permits);
        return engine.acquireAsync(
                view, n, AcquireCall.ofAsync(host.newHoldOwner(), null, FOREVER), EngineSemaphore::required);
    }

    @Override
    public CompletableFuture<Optional<PermitHold>> tryAcquireAsync(int permits, Duration wait) {
        int n = checkPermits(permits);
        long waitNanos = Checks.waitNanos(wait, "wait");
        return engine.acquireAsync(
                view, n, AcquireCall.ofAsync(host.newHoldOwner(), null, waitNanos), EngineSemaphore::optional);
    }

    @Override
    public CompletableFuture<Optional<PermitHold>> tryAcquireAsync(int permits, Duration wait, Duration lease) {
        int n = checkPermits(permits);
        long waitNanos = Checks.waitNanos(wait, "wait");
        Duration fixed = Checks.lease(lease, "lease");
        return engine.acquireAsync(
                view, n, AcquireCall.ofAsync(host.newHoldOwner(), fixed, waitNanos), EngineSemaphore::optional);
    }

    private static PermitHold required(@Nullable EngineHold h) {
        return (ClaimHold) Objects.requireNonNull(h, "an unbounded wait returned no hold");
    }

    private static Optional<PermitHold> optional(@Nullable EngineHold h) {
        return Optional.ofNullable((ClaimHold) h);
    }

    @Override
    public int availablePermits() {
        return engine.available(view);
    }

    @Override
    public void addListener(LockListener listener) {
        view.listeners.add(listener);
    }

    @Override
    public void removeListener(LockListener listener) {
        view.listeners.remove(listener);
    }

    private int checkPermits(int permits) {
        if (permits < 1 || permits > view.size) {
            throw new IllegalArgumentException("permits must be between 1 and the size of semaphore '" + view.name
                    + "' (" + view.size + "): " + permits);
        }
        return permits;
    }

    @Override
    public String toString() {
        return "Semaphore[" + view.name + ", size=" + view.size + "]";
    }
}
